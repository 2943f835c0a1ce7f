//! The client's side of the connection: folds every `session/update` into a
//! [`SessionState`] and answers permission requests with the first allow option.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, Handler, RequestContext, RpcError};
use acp_session::v2::SessionState;
use acp_v2::{
    AgentNotification, AgentRequest, AvailableCommand, AvailableCommandsUpdate,
    CancelledPermissionOutcome, ConfigOptionUpdate, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, RequestPermissionSubject,
    SelectedPermissionOutcome, SessionConfigOption, SessionUpdate, StateUpdate,
};
use serde_json::value::RawValue;
use tokio::sync::watch;

/// Everything the client has folded so far.
#[derive(Debug, Clone, Default)]
pub struct Folded {
    /// The session as seen live.
    pub live: SessionState,
    /// The session as rebuilt by `session/resume` with replay, once that began.
    pub replay: Option<SessionState>,
    /// Updates folded into `live`.
    pub live_updates: usize,
    /// Updates folded into `replay`.
    pub replay_updates: usize,
    /// Idle `state_update`s seen live: one per finished turn.
    pub idle_updates: usize,
    /// The permission requests answered, as `"title" → option` lines.
    pub permissions: Vec<String>,
}

impl Folded {
    /// The state updates now go to: the replay once it began, otherwise the live one.
    pub fn target(&mut self) -> &mut SessionState {
        match &mut self.replay {
            Some(replay) => replay,
            None => &mut self.live,
        }
    }

    /// Folds one update into the current target.
    pub fn apply(&mut self, update: SessionUpdate) {
        if self.replay.is_some() {
            self.replay_updates += 1;
        } else {
            self.live_updates += 1;
            if matches!(&update, SessionUpdate::StateUpdate(state) if matches!(*state, StateUpdate::Idle(_)))
            {
                self.idle_updates += 1;
            }
        }
        self.target().apply(update);
    }

    /// Folds the config options and commands a response carries (`session/new`,
    /// `session/resume`, `session/set_config_option`): they replace the current lists exactly as
    /// the corresponding updates would.
    pub fn apply_lists(
        &mut self,
        config_options: Option<Vec<SessionConfigOption>>,
        commands: Option<Vec<AvailableCommand>>,
    ) {
        let target = self.target();
        if let Some(options) = config_options {
            target.apply(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                options,
            )));
        }
        if let Some(commands) = commands {
            target.apply(SessionUpdate::AvailableCommandsUpdate(
                AvailableCommandsUpdate::new(commands),
            ));
        }
    }
}

/// The demo client's handler; clones share one [`Folded`].
#[derive(Debug, Clone)]
pub struct FoldingClient {
    folded: Arc<Mutex<Folded>>,
    changed: Arc<watch::Sender<u64>>,
}

impl Default for FoldingClient {
    fn default() -> Self {
        Self {
            folded: Arc::default(),
            changed: Arc::new(watch::channel(0).0),
        }
    }
}

impl FoldingClient {
    /// The folded state, locked.
    pub fn folded(&self) -> MutexGuard<'_, Folded> {
        self.folded.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// From now on, updates go into a fresh state (for `session/resume` with replay).
    pub fn begin_replay(&self) {
        self.folded().replay = Some(SessionState::new());
    }

    /// Waits until `done` holds for the folded state; `false` after `timeout`.
    pub async fn wait_until(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&Folded) -> bool,
    ) -> bool {
        let mut changes = self.changed.subscribe();
        let wait = async {
            loop {
                if done(&self.folded()) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }

    fn touch(&self) {
        self.changed.send_modify(|count| *count += 1);
    }

    fn answer_permission(&self, request: RequestPermissionRequest) -> RequestPermissionResponse {
        let choice = request.options.iter().find(|option| {
            matches!(
                option.kind,
                PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
            )
        });
        let mut folded = self.folded();
        // The subject is applied like a `tool_call_update`, before the prompt is shown.
        if let acp_support::Patch::Value(RequestPermissionSubject::ToolCall(subject)) =
            request.subject
        {
            folded
                .target()
                .apply(SessionUpdate::ToolCallUpdate(Box::new(subject.tool_call)));
        }
        let (line, outcome) = match choice {
            Some(option) => (
                format!("\"{}\" → {}", request.title, option.option_id.as_str()),
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                    option.option_id.clone(),
                )),
            ),
            None => (
                format!("\"{}\" → cancelled (no allow option)", request.title),
                RequestPermissionOutcome::Cancelled(CancelledPermissionOutcome::new()),
            ),
        };
        folded.permissions.push(line);
        drop(folded);
        self.touch();
        RequestPermissionResponse::new(outcome)
    }
}

impl Handler for FoldingClient {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        match request.route::<AgentRequest>()? {
            AgentRequest::RequestPermissionRequest(permission) => {
                acp_rpc::result(&self.answer_permission(permission))
            }
            other => Err(RpcError::method_not_found(
                acp_support::method::Routed::method(&other),
            )),
        }
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        if let Ok(AgentNotification::UpdateSessionNotification(update)) =
            notification.route::<AgentNotification>()
        {
            self.folded().apply(update.update);
            self.touch();
        }
    }
}
