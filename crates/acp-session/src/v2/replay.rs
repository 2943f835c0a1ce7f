//! Compact replay: the shortest ordinary `session/update` sequence that rebuilds a state, for
//! `session/resume` with `replayFrom: {type: start}`.
//!
//! Whole-message upserts instead of chunks, one full `tool_call_update` per tool call, one terminal
//! snapshot instead of every output chunk, the current plans, config, commands, info and usage,
//! then the foreground state (with the last stop reason). Folding the replay into an empty
//! [`SessionState`] gives the same state as folding the live stream it summarises.

use acp_support::Patch;
use acp_v2::*;
use base64::Engine;

use super::foreground::ForegroundState;
use super::message::Role;
use super::state::SessionState;
use crate::usage::Usage;

/// The updates that rebuild `state` from nothing.
pub fn replay(state: &SessionState) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    for message in state.messages.iter() {
        let content = Patch::Value(message.content.clone());
        let meta = value_or_absent(message.meta.clone());
        out.push(match message.role {
            Role::User => {
                let mut m = UserMessage::new(message.message_id.clone());
                m.content = content;
                m.meta = meta;
                SessionUpdate::UserMessage(Box::new(m))
            }
            Role::Agent => {
                let mut m = AgentMessage::new(message.message_id.clone());
                m.content = content;
                m.meta = meta;
                SessionUpdate::AgentMessage(Box::new(m))
            }
            Role::Thought => {
                let mut m = AgentThought::new(message.message_id.clone());
                m.content = content;
                m.meta = meta;
                SessionUpdate::AgentThought(Box::new(m))
            }
            #[cfg(feature = "unstable")]
            Role::Session => super::drafts::replay_session_message(message),
        });
    }
    for call in state.tool_calls.iter() {
        let mut update = ToolCallUpdate::new(call.tool_call_id.clone());
        update.name = value_or_absent(call.name.clone());
        update.title = value_or_absent(call.title.clone());
        update.kind = Patch::Value(call.kind.clone());
        update.status = Patch::Value(call.status.clone());
        update.content = Patch::Value(call.content.clone());
        update.locations = Patch::Value(call.locations.clone());
        update.raw_input = call.raw_input.clone();
        update.raw_output = call.raw_output.clone();
        update.capabilities = value_or_absent(call.capabilities.clone());
        update.meta = value_or_absent(call.meta.clone());
        out.push(SessionUpdate::ToolCallUpdate(Box::new(update)));
    }
    for terminal in state.terminals.iter() {
        let mut update = TerminalUpdate::new(terminal.terminal_id.clone());
        update.command = value_or_absent(terminal.command.clone());
        update.cwd = value_or_absent(terminal.cwd.clone());
        let data = base64::engine::general_purpose::STANDARD.encode(&terminal.output);
        update.output = Patch::Value(TerminalOutput::new(data));
        update.exit_status = value_or_absent(terminal.exit_status.clone());
        update.size = value_or_absent(terminal.size.clone());
        update.capabilities = value_or_absent(terminal.capabilities.clone());
        update.meta = value_or_absent(terminal.meta.clone());
        out.push(SessionUpdate::TerminalUpdate(Box::new(update)));
    }
    for plan in state.plans.iter() {
        #[cfg(feature = "unstable")]
        if let Some(update) = super::drafts::replay_plan_document(plan) {
            out.push(update);
            continue;
        }
        let mut items = PlanItems::new(plan.plan_id.clone(), plan.entries.clone());
        items.meta = value_or_absent(plan.meta.clone());
        out.push(SessionUpdate::PlanUpdate(PlanUpdate::new(
            PlanUpdateContent::Items(Box::new(items)),
        )));
    }
    #[cfg(feature = "unstable")]
    super::drafts::replay_subagents(state, &mut out);
    if let Some(options) = &state.config_options {
        out.push(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            options.clone(),
        )));
    }
    if let Some(commands) = &state.available_commands {
        out.push(SessionUpdate::AvailableCommandsUpdate(
            AvailableCommandsUpdate::new(commands.clone()),
        ));
    }
    let info = &state.info;
    if info.title.is_some() || info.updated_at.is_some() || info.meta.is_some() {
        let mut update = SessionInfoUpdate::new();
        update.title = value_or_absent(info.title.clone());
        update.updated_at = value_or_absent(info.updated_at.clone());
        update.meta = value_or_absent(info.meta.clone());
        out.push(SessionUpdate::SessionInfoUpdate(Box::new(update)));
    }
    // A report whose numbers are not known (read leniently from a peer) has no v2 form.
    if let Some(Usage {
        used: Some(used),
        size: Some(size),
        cost,
        meta,
        ..
    }) = &state.usage
    {
        let mut update = UsageUpdate::new(*used, *size);
        update.cost = value_or_absent(cost.clone());
        update.meta = value_or_absent(meta.clone());
        out.push(SessionUpdate::UsageUpdate(Box::new(update)));
    }
    for notice in &state.notices {
        out.push(SessionUpdate::Notice(Box::new(notice.clone())));
    }
    for compaction in state.compactions.iter() {
        // Known only from summary chunks: replayed as chunks, so it gets no status it never had.
        let Some(status) = compaction.status.clone() else {
            for block in &compaction.summary {
                out.push(SessionUpdate::CompactionSummaryChunk(
                    CompactionSummaryChunk::new(compaction.compaction_id.clone(), block.clone()),
                ));
            }
            continue;
        };
        let mut update = CompactionUpdate::new(compaction.compaction_id.clone(), status);
        update.summary = Patch::Value(compaction.summary.clone());
        update.error = value_or_absent(compaction.error.clone());
        update.meta = value_or_absent(compaction.meta.clone());
        out.push(SessionUpdate::CompactionUpdate(Box::new(update)));
    }
    for raw in &state.unknown_plans {
        out.push(SessionUpdate::PlanUpdate(PlanUpdate::new(
            PlanUpdateContent::Other(raw.clone()),
        )));
    }
    for raw in &state.unknown {
        out.push(SessionUpdate::Other(raw.clone()));
    }
    // What could not be applied, again: the replayed state reports the same problems.
    out.extend(state.rejected.iter().cloned());
    out.extend(foreground(state));
    out
}

/// One `state_update` reporting the current foreground state (idle when none was reported), with
/// the last stop reason for context when idle: what `session/resume` must send before responding.
pub fn current_state(state: &SessionState) -> SessionUpdate {
    let mut updates = foreground(state);
    match updates.pop() {
        Some(update) => update,
        None => SessionUpdate::StateUpdate(StateUpdate::Idle(Box::new(IdleStateUpdate::new(
            IdleStateUpdateStopReason::None,
        )))),
    }
}

/// The foreground snapshot: the last stop reason (on an idle update) and the current state.
fn foreground(state: &SessionState) -> Vec<SessionUpdate> {
    let fg = &state.foreground;
    let background = value_or_absent(fg.background.clone());
    // The draft `usage` of completed work rides on the first idle update replayed.
    #[cfg(feature = "unstable")]
    let usage = std::cell::Cell::new(fg.last_usage.clone());
    let idle = |stop_reason: IdleStateUpdateStopReason| {
        let mut idle = IdleStateUpdate::new(stop_reason);
        idle.background = background.clone();
        #[cfg(feature = "unstable")]
        {
            idle.usage = value_or_absent(usage.take());
        }
        SessionUpdate::StateUpdate(StateUpdate::Idle(Box::new(idle)))
    };
    let mut out = Vec::new();
    if let Some(reason) = &fg.last_stop_reason {
        out.push(idle(reason.clone()));
    }
    // Usage known while no idle update is replayed below: an idle without a stop reason carries
    // it, and the current state follows.
    #[cfg(feature = "unstable")]
    if fg.last_stop_reason.is_none() && fg.last_usage.is_some() && fg.state != ForegroundState::Idle
    {
        out.push(idle(IdleStateUpdateStopReason::None));
    }
    match &fg.state {
        ForegroundState::NotReported => {}
        ForegroundState::Idle if fg.last_stop_reason.is_some() => {}
        ForegroundState::Idle => out.push(idle(IdleStateUpdateStopReason::None)),
        ForegroundState::Running => {
            let mut running = RunningStateUpdate::new();
            running.background = background;
            out.push(SessionUpdate::StateUpdate(StateUpdate::Running(running)));
        }
        ForegroundState::RequiresAction => {
            let mut waiting = RequiresActionStateUpdate::new();
            waiting.background = background;
            out.push(SessionUpdate::StateUpdate(StateUpdate::RequiresAction(
                waiting,
            )));
        }
        #[cfg(feature = "unstable")]
        ForegroundState::Unconfirmed => {
            let mut unknown = UnknownStateUpdate::new();
            unknown.background = background;
            out.push(SessionUpdate::StateUpdate(StateUpdate::Unknown(unknown)));
        }
        ForegroundState::Unknown { raw } => {
            // An unknown state keeps the background work reported before it: report that
            // first (with a known state) when no idle above carried it already.
            if fg.last_stop_reason.is_none() {
                if let Patch::Value(work) = &background {
                    let mut running = RunningStateUpdate::new();
                    running.background = Patch::Value(work.clone());
                    out.push(SessionUpdate::StateUpdate(StateUpdate::Running(running)));
                }
            }
            out.push(SessionUpdate::StateUpdate(StateUpdate::Other(raw.clone())))
        }
    }
    out
}

/// `Some` as a value, `None` as omitted.
pub(super) fn value_or_absent<T>(value: Option<T>) -> Patch<T> {
    value.map_or(Patch::Absent, Patch::Value)
}
