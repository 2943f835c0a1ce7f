//! The agent side of a v2 session: a turn driver with which the prompt lifecycle cannot be got
//! wrong, the history it keeps, and replay on `session/resume`.
//!
//! A [`Turn`] begins by acknowledging the user message (with a generated `messageId`, which the
//! `session/prompt` response also carries) and reporting `running`; it streams messages, thoughts,
//! tool calls, terminal output and plans; it reports `requires_action` while a permission request
//! is pending and `running` again after; it ends with `idle` and a stop reason, which is
//! `cancelled` whenever `session/cancel` arrived, whatever the agent's code passes. Every update
//! it sends is also folded into the session's history, which [`AgentSession::resume`] replays in
//! compact form.
//!
//! Prompts that arrive while a turn runs are handled by the session's [`BusyPolicy`]: held (the
//! default: each begins when the one before it ends, in the order they were queued) or rejected
//! with `-32600`. `session/cancel` cancels the running turn and every prompt not yet begun (each
//! answered `-32800`, none reporting any update); `session/close` does the same and refuses new
//! prompts. [`AgentSession::prompt_turn`] does it all for a `session/prompt` handler: it queues
//! the prompt in arrival order, lets the messages after it be handled, gives back the handler
//! slot while the prompt is held, and answers `-32800` when the request itself is cancelled.
//!
//! See protocol docs: [Prompt Lifecycle](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use acp_rpc::{CancellationToken, Connection, Error, RequestContext, RequestOptions, RpcError};
use acp_support::Patch;
use acp_v2::{
    ContentBlock, ContentChunk, IdleStateUpdate, IdleStateUpdateStopReason, MessageId, PlanEntry,
    PlanItems, PlanUpdate, PlanUpdateContent, ReplayFrom, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionSubject, RequiresActionStateUpdate,
    RunningStateUpdate, SessionId, SessionUpdate, StateUpdate, TerminalOutputChunk,
    ToolCallContent, ToolCallContentChunk, ToolCallUpdate, UpdateSessionNotification, UserMessage,
};
use base64::Engine;

pub use crate::permission::Permission;

use super::replay::{current_state, replay};
use super::state::SessionState;
use super::turn_queue::{Place, TurnQueue};

/// How long a cancelled turn waits for the client's final answer to a pending permission request
/// before treating it as cancelled (a client that never answers cannot hang the turn).
pub const PERMISSION_CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What to do with a prompt that arrives while a turn is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BusyPolicy {
    /// Hold it: its turn begins when the ones before it have ended.
    #[default]
    Queue,
    /// Reject it with `-32600`.
    Reject,
}

struct Inner {
    history: SessionState,
    recorder: Option<Arc<dyn HistoryRecorder>>,
}

impl Inner {
    /// Folds `update` into the history and hands it to the recorder, in that order and under
    /// one lock: the recorder sees the updates in history order.
    fn apply(&mut self, update: &SessionUpdate) {
        self.history.apply(update.clone());
        if let Some(recorder) = &self.recorder {
            recorder.record(update);
        }
    }
}

/// Receives every update a session folds into its history, in order, for a store that keeps
/// it (`acp-sdk`'s session stores). [`HistoryRecorder::record`] is called under the session's
/// history lock and must not block (buffer the update); [`HistoryRecorder::commit`] is awaited
/// before a turn's final `idle` goes out, so what a turn sent is kept by the time the client
/// sees it end.
pub trait HistoryRecorder: Send + Sync + 'static {
    /// One update, folded into the history just now.
    fn record(&self, update: &SessionUpdate);

    /// Keeps what was recorded; the turn's end waits for it.
    fn commit(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>>;
}

/// The agent-side state of one v2 session.
#[derive(Clone)]
pub struct AgentSession {
    session_id: SessionId,
    /// The connection updates go out on; `resume` rebinds it to the resuming client's.
    connection: Arc<Mutex<Connection>>,
    inner: Arc<Mutex<Inner>>,
    turns: Arc<TurnQueue>,
    next_id: Arc<AtomicU64>,
    /// How long a permission request may wait for its answer; `None`: no deadline.
    permission_timeout: Option<std::time::Duration>,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl AgentSession {
    /// A new, empty session whose updates go out on `connection`, its history within the
    /// default [`Limits`](crate::limits::Limits).
    pub fn new(
        connection: Connection,
        session_id: impl Into<SessionId>,
        policy: BusyPolicy,
    ) -> Self {
        Self::with_limits(connection, session_id, policy, Default::default())
    }

    /// A new, empty session whose history keeps at most what `limits` allow: past them the
    /// oldest messages, notices ... go (a `session/resume` replays what was kept, and the
    /// history's `dropped` counts the rest).
    pub fn with_limits(
        connection: Connection,
        session_id: impl Into<SessionId>,
        policy: BusyPolicy,
        limits: crate::limits::Limits,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            connection: Arc::new(Mutex::new(connection)),
            inner: Arc::new(Mutex::new(Inner {
                history: SessionState::with_limits(limits),
                recorder: None,
            })),
            turns: TurnQueue::new(policy),
            next_id: Arc::new(AtomicU64::new(1)),
            permission_timeout: None,
        }
    }

    /// Sets how long a permission request may wait for the client's answer: past it the
    /// request is cancelled (`$/cancel_request`), the tool call it gated is reported
    /// `cancelled`, and the turn goes on with [`Permission::Cancelled`]. `None` (the default
    /// here; the SDK sets its server's) waits as long as the turn runs.
    #[must_use]
    pub fn permission_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
        self.permission_timeout = timeout;
        self
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.session_id
    }

    /// Hands every update folded into the history from now on to `recorder`.
    pub fn set_recorder(&self, recorder: Arc<dyn HistoryRecorder>) {
        lock(&self.inner).recorder = Some(recorder);
    }

    /// Folds `updates` into the history without sending or recording them: a history kept by a
    /// store, restored. A turn the history shows running (the process stopped during it) is
    /// settled: the session is idle, as no turn of it runs.
    pub fn restore(&self, updates: impl IntoIterator<Item = SessionUpdate>) {
        let mut inner = lock(&self.inner);
        for update in updates {
            inner.history.apply(update);
        }
        inner.history.foreground.settle();
        // Generated ids are `prefix_N`: the next N is past every one the history holds (the
        // newest messages are the ones a limit keeps, so past the ones it let go too).
        let highest = inner
            .history
            .messages
            .iter()
            .filter_map(|message| message.message_id.as_str().rsplit_once('_'))
            .filter_map(|(_, number)| number.parse::<u64>().ok())
            .max();
        if let Some(highest) = highest {
            self.next_id.fetch_max(highest + 1, Ordering::Relaxed);
        }
    }

    /// What the history's content weighs (messages, tool calls' content, terminals' output, as
    /// encoded): what [`Limits::history_bytes`](crate::limits::Limits::history_bytes) bounds.
    pub fn history_bytes(&self) -> usize {
        super::budget::weigh(&lock(&self.inner).history)
    }

    /// `true` once the history's byte limit has let something go (its
    /// [`HISTORY_LIMIT_COMPACTION`](super::HISTORY_LIMIT_COMPACTION) entry is there, in a
    /// restored history too).
    pub fn history_trimmed(&self) -> bool {
        let id = acp_v2::CompactionId::new(super::HISTORY_LIMIT_COMPACTION);
        lock(&self.inner).history.compactions.get(&id).is_some()
    }

    /// The number the next generated message id gets (ids are `prefix_N`), for a store to keep.
    pub fn next_message_number(&self) -> u64 {
        self.next_id.load(Ordering::Relaxed)
    }

    /// Sets the number the next generated message id gets (a restored session goes on from the
    /// ids its history holds). Never moves it back.
    pub fn set_next_message_number(&self, next: u64) {
        self.next_id.fetch_max(next, Ordering::Relaxed);
    }

    /// A fresh message id, unique in this session.
    pub fn next_message_id(&self, prefix: &str) -> MessageId {
        MessageId::new(format!(
            "{prefix}_{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// The folded history: what a client that saw every update would show.
    pub fn history(&self) -> SessionState {
        lock(&self.inner).history.clone()
    }

    /// A new session `session_id` on `connection` whose history starts as a copy of this one's
    /// (`session/fork`, a draft): a resume of it replays this session's context. No turn runs
    /// in it yet, and its foreground state is idle.
    pub fn fork(
        &self,
        connection: Connection,
        session_id: impl Into<SessionId>,
        policy: BusyPolicy,
    ) -> Self {
        let history = lock(&self.inner).history.clone();
        let limits = *history.limits();
        let forked = Self::with_limits(connection, session_id, policy, limits)
            .permission_timeout(self.permission_timeout);
        // The copied history holds this session's message ids: the fork's go on from them.
        forked
            .next_id
            .store(self.next_id.load(Ordering::Relaxed), Ordering::Relaxed);
        {
            let mut inner = lock(&forked.inner);
            inner.history = history;
            // The original's running turn is not the fork's.
            inner.history.foreground.settle();
        }
        forked
    }

    /// The session's current foreground state, as `session/resume` reports it last (idle with
    /// the last stop reason when no turn runs).
    pub fn current_state(&self) -> StateUpdate {
        match current_state(&lock(&self.inner).history) {
            SessionUpdate::StateUpdate(state) => state,
            // `current_state` gives a state update; an idle one stands for anything else.
            _ => StateUpdate::Idle(Box::new(IdleStateUpdate::new(
                IdleStateUpdateStopReason::None,
            ))),
        }
    }

    /// `true` while a turn runs.
    pub fn is_busy(&self) -> bool {
        self.turns.is_busy()
    }

    /// Queues a prompt, synchronously, behind the ones queued before it: it has the turn at once
    /// when none runs, else it is held ([`BusyPolicy::Queue`]) or refused `-32600`
    /// ([`BusyPolicy::Reject`]). `-32800` once the session is closed. Begin its turn with
    /// [`QueuedPrompt::begin`].
    pub fn queue_prompt(&self) -> Result<QueuedPrompt, RpcError> {
        Ok(QueuedPrompt {
            session: self.clone(),
            place: self.turns.enqueue()?,
        })
    }

    /// Queues a prompt and begins its turn when its time comes: the user message is acknowledged
    /// (its generated id is [`Turn::user_message_id`], for the `session/prompt` response) and
    /// `running` reported.
    pub async fn begin_turn(&self, prompt: Vec<ContentBlock>) -> Result<Turn, RpcError> {
        self.queue_prompt()?.begin(prompt).await
    }

    /// [`AgentSession::begin_turn`] for a `session/prompt` handler: the prompt is queued, the
    /// messages of the session read after it are let through (a `session/cancel` then finds it),
    /// its handler slot is given back, and a `$/cancel_request` for it while it is held answers
    /// `-32800` with no update sent.
    pub async fn prompt_turn(
        &self,
        prompt: Vec<ContentBlock>,
        cx: &RequestContext,
    ) -> Result<Turn, RpcError> {
        let queued = self.queue_prompt();
        cx.release_order();
        // Held or running, a turn mostly waits (on the model, on its client): its handler slot
        // goes back, so prompts never starve the connection's other requests. It still counts
        // among the pending requests (bounded).
        cx.release_slot();
        let queued = queued?;
        queued.begin_unless(prompt, cx.cancellation()).await
    }

    /// `session/close`: cancels the running turn, answers prompts still held `-32800`, refuses
    /// new ones, and returns once the running turn has ended (`idle` + `cancelled` sent).
    pub async fn close(&self) {
        self.turns.close();
        self.turns.idle().await;
    }

    /// `true` once [`AgentSession::close`] has been called (and the session not reopened).
    pub fn is_closed(&self) -> bool {
        self.turns.is_closed()
    }

    /// Accepts prompts again after [`AgentSession::close`] (`session/resume` of a closed
    /// session).
    pub fn reopen(&self) {
        self.turns.reopen();
    }

    /// The session's metadata (title, last update), without cloning the whole history.
    pub fn info(&self) -> super::state::SessionInfo {
        lock(&self.inner).history.info.clone()
    }

    /// Sends an update outside a turn (a `config_option_update` after
    /// `session/set_config_option`, a `session_info_update` ...) and records it in the history,
    /// so a later replay includes it.
    pub async fn send(&self, update: SessionUpdate) -> Result<(), Error> {
        lock(&self.inner).apply(&update);
        self.notify(update).await
    }

    /// Waits for the recorder to keep what it was handed (nothing without one).
    pub async fn commit(&self) {
        let recorder = lock(&self.inner).recorder.clone();
        if let Some(recorder) = recorder {
            recorder.commit().await;
        }
    }

    /// `session/cancel`: the running turn's cancellation fires (its permission requests are
    /// cancelled and it ends `idle` + `cancelled`), and every prompt held behind it is answered
    /// `-32800` without ever beginning. Prompts queued after this run normally.
    pub fn cancel(&self) {
        self.turns.cancel();
    }

    /// `session/resume` on `connection` (the session's updates go there from now on): with
    /// `replayFrom: {type: start}` the history is replayed as ordinary `session/update`
    /// notifications, in compact form; without `replayFrom` nothing is replayed; either way a
    /// current `state_update` follows, before the caller responds (the schema's
    /// `ResumeSessionResponse` requires it). An unknown cursor is `-32602`.
    pub async fn resume(
        &self,
        connection: &Connection,
        replay_from: &Patch<ReplayFrom>,
    ) -> Result<(), RpcError> {
        if let Patch::Value(cursor @ ReplayFrom::Other(_)) = replay_from {
            return Err(RpcError::invalid_params(format!(
                "unknown replay cursor: {}",
                serde_json::to_string(cursor).unwrap_or_default()
            )));
        }
        *self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = connection.clone();
        // Built under the lock from the history itself: no copy of the whole state.
        let updates = {
            let inner = lock(&self.inner);
            let mut updates = match replay_from {
                Patch::Value(ReplayFrom::Start(_)) => replay(&inner.history),
                _ => Vec::new(),
            };
            // The current state, after any replay and before the response, even without replay.
            if !matches!(updates.last(), Some(SessionUpdate::StateUpdate(_))) {
                updates.push(current_state(&inner.history));
            }
            updates
        };
        for update in updates {
            self.notify(update).await.map_err(to_rpc)?;
        }
        Ok(())
    }

    async fn notify(&self, update: SessionUpdate) -> Result<(), Error> {
        let notification = UpdateSessionNotification::new(self.session_id.clone(), update);
        self.connection().notify(&notification).await
    }

    /// `true` when the session's updates go out on `connection` (it created the session or
    /// resumed it last).
    pub fn is_bound_to(&self, connection: &Connection) -> bool {
        self.connection().same_as(connection)
    }

    fn connection(&self) -> Connection {
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

/// A prompt queued in its session ([`AgentSession::queue_prompt`]), not yet begun. Dropped, it
/// leaves the queue without holding up the prompts behind it.
#[derive(Debug)]
pub struct QueuedPrompt {
    session: AgentSession,
    place: Place,
}

impl QueuedPrompt {
    /// `true` while it waits behind a running turn.
    pub fn is_held(&self) -> bool {
        self.place.is_held()
    }

    /// Waits for its turn and begins it: the user message is acknowledged and `running`
    /// reported. `-32800` (and no update) when the session is cancelled while the prompt is held,
    /// or closed before it begins; a cancel after it took the turn cancels the turn it begins.
    pub async fn begin(self, prompt: Vec<ContentBlock>) -> Result<Turn, RpcError> {
        self.begin_with(prompt, None).await
    }

    /// [`QueuedPrompt::begin`], giving up with `-32800` (and no update) if `cancellation` (the
    /// request's own) fires while it is held.
    pub async fn begin_unless(
        self,
        prompt: Vec<ContentBlock>,
        cancellation: &CancellationToken,
    ) -> Result<Turn, RpcError> {
        self.begin_with(prompt, Some(cancellation)).await
    }

    async fn begin_with(
        self,
        prompt: Vec<ContentBlock>,
        cancellation: Option<&CancellationToken>,
    ) -> Result<Turn, RpcError> {
        let QueuedPrompt { session, place } = self;
        let cancellation = place.turn(cancellation).await?;
        // From here the turn owns the session's turn: ended or dropped, it hands it on.
        let turn = Turn {
            user_message_id: session.next_message_id("msg_user"),
            session,
            cancellation,
            ended: false,
        };
        let mut ack = UserMessage::new(turn.user_message_id.clone());
        ack.content = Patch::Value(prompt);
        turn.send(SessionUpdate::UserMessage(Box::new(ack)))
            .await
            .map_err(to_rpc)?;
        turn.send(state(StateUpdate::Running(RunningStateUpdate::new())))
            .await
            .map_err(to_rpc)?;
        Ok(turn)
    }
}

fn state(update: StateUpdate) -> SessionUpdate {
    SessionUpdate::StateUpdate(update)
}

fn to_rpc(err: Error) -> RpcError {
    RpcError::from(err)
}

/// One prompt turn. End it with [`Turn::end`]; a turn dropped without ending is ended `idle`
/// (stop reason unreported) so the client is never left believing work is running.
pub struct Turn {
    session: AgentSession,
    user_message_id: MessageId,
    cancellation: CancellationToken,
    ended: bool,
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("user_message_id", &self.user_message_id)
            .finish_non_exhaustive()
    }
}

impl Turn {
    /// The session this turn belongs to.
    pub fn session_id(&self) -> &SessionId {
        &self.session.session_id
    }

    /// A fresh message id in this session (`prefix_N`).
    pub fn new_message_id(&self, prefix: &str) -> MessageId {
        self.session.next_message_id(prefix)
    }

    /// The id generated for the user's message (the `session/prompt` response carries it).
    pub fn user_message_id(&self) -> &MessageId {
        &self.user_message_id
    }

    /// Fires on `session/cancel`: stop working and end the turn.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// `true` once the turn has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// Sends any update (and records it in the history).
    pub async fn send(&self, update: SessionUpdate) -> Result<(), Error> {
        self.session.send(update).await
    }

    /// Starts a new agent message; its chunks share one generated `messageId`.
    pub fn agent_message(&self) -> MessageWriter<'_> {
        MessageWriter {
            turn: self,
            message_id: self.session.next_message_id("msg_agent"),
            thought: false,
        }
    }

    /// Starts a new thought; its chunks share one generated `messageId`.
    pub fn thought(&self) -> MessageWriter<'_> {
        MessageWriter {
            turn: self,
            message_id: self.session.next_message_id("msg_thought"),
            thought: true,
        }
    }

    /// Creates or patches a tool call.
    pub async fn tool_call(&self, update: ToolCallUpdate) -> Result<(), Error> {
        self.send(SessionUpdate::ToolCallUpdate(Box::new(update)))
            .await
    }

    /// Appends one content item to a tool call.
    pub async fn tool_call_content(
        &self,
        tool_call_id: &acp_v2::ToolCallId,
        content: ToolCallContent,
    ) -> Result<(), Error> {
        self.send(SessionUpdate::ToolCallContentChunk(Box::new(
            ToolCallContentChunk::new(tool_call_id.clone(), content),
        )))
        .await
    }

    /// Appends raw bytes to an agent-owned terminal (base64-encoded on their own).
    pub async fn terminal_output(
        &self,
        terminal_id: &acp_v2::TerminalId,
        bytes: &[u8],
    ) -> Result<(), Error> {
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        self.send(SessionUpdate::TerminalOutputChunk(Box::new(
            TerminalOutputChunk::new(terminal_id.clone(), data),
        )))
        .await
    }

    /// Replaces a plan's entries.
    pub async fn plan(
        &self,
        plan_id: impl Into<acp_v2::PlanId>,
        entries: Vec<PlanEntry>,
    ) -> Result<(), Error> {
        let items = PlanItems::new(plan_id, entries);
        self.send(SessionUpdate::PlanUpdate(PlanUpdate::new(
            PlanUpdateContent::Items(Box::new(items)),
        )))
        .await
    }

    /// Asks the client for permission: reports `requires_action`, waits for the answer, reports
    /// `running` again. If the turn is cancelled meanwhile the request is cancelled
    /// (`$/cancel_request`), the client's final answer awaited, and the result is
    /// [`Permission::Cancelled`]. An outcome this build does not know is never approval.
    pub async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> Result<Permission, Error> {
        if self.is_cancelled() {
            return Ok(Permission::Cancelled);
        }
        // Clients apply a `tool_call` subject like a tool call update: so does the history.
        if let Patch::Value(RequestPermissionSubject::ToolCall(subject)) = &request.subject {
            lock(&self.session.inner)
                .history
                .apply(SessionUpdate::ToolCallUpdate(Box::new(
                    subject.tool_call.clone(),
                )));
        }
        self.send(state(StateUpdate::RequiresAction(
            RequiresActionStateUpdate::new(),
        )))
        .await?;
        let mut options = RequestOptions::default()
            .cancellation(self.cancellation.clone())
            .graceful(true);
        if let Some(timeout) = self.session.permission_timeout {
            options = options.timeout(timeout);
        }
        let connection = self.session.connection();
        let answer = connection.request_with(&request, options);
        // After a cancel the client's final answer is awaited, but not forever.
        let gave_up = async {
            self.cancellation.cancelled().await;
            tokio::time::sleep(PERMISSION_CANCEL_GRACE).await;
        };
        let answer = tokio::select! {
            answer = answer => Some(answer),
            () = gave_up => None,
        };
        let permission = match answer {
            None => Permission::Cancelled,
            Some(_) if self.is_cancelled() => Permission::Cancelled,
            Some(answer) => match answer {
                Ok(response) => match response.outcome {
                    RequestPermissionOutcome::Selected(selected) => {
                        Permission::Selected(selected.option_id.0)
                    }
                    RequestPermissionOutcome::Cancelled(_) => Permission::Cancelled,
                    _ => Permission::Unrecognised,
                },
                Err(Error::Rpc(err)) if err.code == acp_rpc::codes::REQUEST_CANCELLED => {
                    Permission::Cancelled
                }
                // An answer the agent cannot read, or an error: not permission. The tool call it
                // gated is cancelled, never left pending.
                Err(err) => {
                    tracing::warn!(%err, "the permission request failed; treated as cancelled");
                    if let Patch::Value(RequestPermissionSubject::ToolCall(subject)) =
                        &request.subject
                    {
                        let update = ToolCallUpdate::new(subject.tool_call.tool_call_id.clone())
                            .status(acp_v2::ToolCallStatus::Cancelled);
                        self.tool_call(update).await?;
                    }
                    Permission::Cancelled
                }
            },
        };
        if !self.is_cancelled() {
            self.send(state(StateUpdate::Running(RunningStateUpdate::new())))
                .await?;
        }
        Ok(permission)
    }

    /// Ends the turn with `idle` and `reason` — `cancelled` instead if the turn was cancelled.
    pub async fn end(mut self, reason: IdleStateUpdateStopReason) -> Result<(), Error> {
        self.ended = true;
        let reason = if self.is_cancelled() {
            IdleStateUpdateStopReason::Cancelled
        } else {
            reason
        };
        // Folded and kept before it goes out: once the client sees the turn end, what the turn
        // sent is in the store.
        let idle = state(StateUpdate::Idle(Box::new(IdleStateUpdate::new(reason))));
        lock(&self.session.inner).apply(&idle);
        self.session.commit().await;
        let result = self.session.notify(idle).await;
        self.session.turns.finish();
        result
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let session = self.session.clone();
        let reason = if self.is_cancelled() {
            IdleStateUpdateStopReason::Cancelled
        } else {
            IdleStateUpdateStopReason::None
        };
        let update = state(StateUpdate::Idle(Box::new(IdleStateUpdate::new(reason))));
        lock(&session.inner).apply(&update);
        // The next held prompt begins only after this `idle`, as it would after `end`.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    session.commit().await;
                    let _ = session.notify(update).await;
                    session.turns.finish();
                });
            }
            Err(_) => session.turns.finish(),
        }
    }
}

/// Streams one message (or thought) as chunks sharing a `messageId`.
pub struct MessageWriter<'t> {
    turn: &'t Turn,
    message_id: MessageId,
    thought: bool,
}

impl MessageWriter<'_> {
    /// The message's id.
    pub fn id(&self) -> &MessageId {
        &self.message_id
    }

    /// Appends a text chunk.
    pub async fn text(&self, text: impl Into<String>) -> Result<(), Error> {
        self.block(ContentBlock::from(acp_v2::TextContent::new(text)))
            .await
    }

    /// Appends a content block.
    pub async fn block(&self, block: ContentBlock) -> Result<(), Error> {
        let chunk = ContentChunk::new(self.message_id.clone(), block);
        let update = if self.thought {
            SessionUpdate::AgentThoughtChunk(chunk)
        } else {
            SessionUpdate::AgentMessageChunk(chunk)
        };
        self.turn.send(update).await
    }
}
