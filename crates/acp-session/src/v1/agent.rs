//! The agent side of a v1 session: the turn is the `session/prompt` request, answered with the
//! stop reason when it ends.
//!
//! - A second prompt on a session whose prompt is still running is answered `-32600`.
//! - `session/cancel` fires the turn's cancellation. With a cancel grace period set, a turn that
//!   has not finished when it runs out is answered `cancelled` by the session itself.
//! - With a maximum prompt duration set, a turn that runs longer is cancelled and answered
//!   `-32800` with the duration in the error data.
//! - Whatever the turn's code returns after `session/cancel`, the stop reason is `cancelled`.
//! - Whatever ends the prompt (its answer, a `$/cancel_request` whose handler is aborted, a panic),
//!   the session is free again: a drop guard clears the running turn.
//! - [`AgentSession::prompt_in`] ties the turn to its request: the messages of the session read
//!   after the prompt are let through once it has registered (a `session/cancel` then finds it),
//!   and a `$/cancel_request` for the prompt cancels the turn, answered `cancelled`.
//!
//! See protocol docs: [Prompt Turn](https://agentclientprotocol.com/protocol/v1/prompt-turn)

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use acp_rpc::{CancellationToken, Connection, Error, RequestContext, RequestOptions, RpcError};
use acp_v1::{
    ContentBlock, ContentChunk, Plan, PlanEntry, PromptResponse, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, StopReason,
    TextContent, ToolCall, ToolCallUpdate,
};

use crate::permission::Permission;

/// Limits on a v1 turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnLimits {
    /// After `session/cancel`, how long the turn may take to wind down before the session
    /// answers `cancelled` itself.
    pub cancel_grace: Option<Duration>,
    /// The longest a prompt may run; past it the turn is cancelled and answered `-32800`.
    pub max_prompt_duration: Option<Duration>,
    /// How long a permission request may wait for the client's answer: past it the request is
    /// cancelled (`$/cancel_request`), the tool call it gated is reported `failed`, and the
    /// turn goes on with [`Permission::Cancelled`].
    pub permission_timeout: Option<Duration>,
}

/// The agent-side state of one v1 session.
#[derive(Clone)]
pub struct AgentSession {
    session_id: SessionId,
    connection: Connection,
    /// The running turn: its number and cancellation.
    current_turn: Arc<Mutex<Option<(u64, CancellationToken)>>>,
    turns: Arc<AtomicU64>,
    limits: TurnLimits,
}

/// Clears the session's running turn when dropped, if it is still this turn.
struct TurnGuard {
    current_turn: Arc<Mutex<Option<(u64, CancellationToken)>>>,
    number: u64,
}

impl Drop for TurnGuard {
    fn drop(&mut self) {
        let mut current = lock(&self.current_turn);
        if current
            .as_ref()
            .is_some_and(|(number, _)| *number == self.number)
        {
            *current = None;
        }
    }
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl AgentSession {
    /// A session whose updates go out on `connection`.
    pub fn new(
        connection: Connection,
        session_id: impl Into<SessionId>,
        limits: TurnLimits,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            connection,
            current_turn: Arc::default(),
            turns: Arc::default(),
            limits,
        }
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.session_id
    }

    /// `true` while a prompt runs.
    pub fn is_busy(&self) -> bool {
        lock(&self.current_turn).is_some()
    }

    /// `session/cancel`: the running turn's cancellation fires.
    pub fn cancel(&self) {
        if let Some((_, token)) = lock(&self.current_turn).as_ref() {
            token.cancel();
        }
    }

    /// Runs one prompt turn with `run` and produces the `session/prompt` response.
    pub async fn prompt<F, Fut>(&self, run: F) -> Result<PromptResponse, RpcError>
    where
        F: FnOnce(Turn) -> Fut,
        Fut: Future<Output = Result<StopReason, RpcError>>,
    {
        let (guard, cancellation) = self.register()?;
        self.run_turn(guard, cancellation, None, run).await
    }

    /// [`AgentSession::prompt`] for a `session/prompt` handler: once the turn is registered the
    /// session's later messages are let through ([`RequestContext::release_order`]), its handler
    /// slot is given back ([`RequestContext::release_slot`]), and the request's own cancellation
    /// (`$/cancel_request`) cancels the turn.
    pub async fn prompt_in<F, Fut>(
        &self,
        cx: &RequestContext,
        run: F,
    ) -> Result<PromptResponse, RpcError>
    where
        F: FnOnce(Turn) -> Fut,
        Fut: Future<Output = Result<StopReason, RpcError>>,
    {
        let registered = self.register();
        cx.release_order();
        // A turn mostly waits (on the model, on its client's permission, files and terminals):
        // it gives back its handler slot, so prompts waiting on the client never starve the
        // connection's other requests. It still counts among the pending requests (bounded).
        cx.release_slot();
        let (guard, cancellation) = registered?;
        self.run_turn(guard, cancellation, Some(cx.cancellation()), run)
            .await
    }

    /// Makes a new turn the running one; `-32600` if one runs.
    fn register(&self) -> Result<(TurnGuard, CancellationToken), RpcError> {
        let mut current = lock(&self.current_turn);
        if current.is_some() {
            return Err(RpcError::invalid_request(
                "a prompt is already running in this session",
            ));
        }
        let number = self.turns.fetch_add(1, Ordering::Relaxed) + 1;
        let token = CancellationToken::new();
        *current = Some((number, token.clone()));
        let guard = TurnGuard {
            current_turn: self.current_turn.clone(),
            number,
        };
        Ok((guard, token))
    }

    async fn run_turn<F, Fut>(
        &self,
        guard: TurnGuard,
        cancellation: CancellationToken,
        request: Option<&CancellationToken>,
        run: F,
    ) -> Result<PromptResponse, RpcError>
    where
        F: FnOnce(Turn) -> Fut,
        Fut: Future<Output = Result<StopReason, RpcError>>,
    {
        let turn = Turn {
            session: self.clone(),
            cancellation: cancellation.clone(),
        };
        let limits = self.limits;
        let work = run(turn);
        let grace_over = async {
            cancellation.cancelled().await;
            match limits.cancel_grace {
                Some(grace) => tokio::time::sleep(grace).await,
                None => std::future::pending().await,
            }
        };
        let too_long = async {
            match limits.max_prompt_duration {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        // A `$/cancel_request` for the prompt cancels its turn (answered `cancelled`).
        let request_cancelled = async {
            match request {
                Some(request) => {
                    request.cancelled().await;
                    cancellation.cancel();
                }
                None => std::future::pending::<()>().await,
            }
        };
        let work = async {
            tokio::pin!(work);
            tokio::select! {
                result = &mut work => result,
                () = request_cancelled => work.await,
            }
        };
        enum Ending<R> {
            Finished(R),
            GraceOver,
            TooLong(Duration),
        }
        let ending = tokio::select! {
            result = work => Ending::Finished(result),
            () = grace_over => Ending::GraceOver,
            () = too_long => Ending::TooLong(limits.max_prompt_duration.unwrap_or_default()),
        };
        drop(guard);
        let stop_reason = match ending {
            Ending::TooLong(limit) => {
                cancellation.cancel();
                return Err(RpcError::request_cancelled().with_data(serde_json::json!({
                    "maxPromptDurationMs": u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                })));
            }
            Ending::GraceOver => StopReason::Cancelled,
            // After `session/cancel` the turn is cancelled, whatever its code returned.
            Ending::Finished(_) if cancellation.is_cancelled() => StopReason::Cancelled,
            Ending::Finished(result) => result?,
        };
        Ok(PromptResponse::new(stop_reason))
    }

    /// Sends an update outside any turn (a new title, the session's info) on the connection the
    /// session is bound to.
    pub async fn send(&self, update: SessionUpdate) -> Result<(), Error> {
        self.notify(update).await
    }

    /// `true` when the session's updates go out on `connection`.
    pub fn is_bound_to(&self, connection: &Connection) -> bool {
        self.connection.same_as(connection)
    }

    async fn notify(&self, update: SessionUpdate) -> Result<(), Error> {
        self.connection
            .notify(&SessionNotification::new(self.session_id.clone(), update))
            .await
    }
}

/// One running v1 prompt turn.
pub struct Turn {
    session: AgentSession,
    cancellation: CancellationToken,
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("session", &self.session.session_id)
            .finish_non_exhaustive()
    }
}

impl Turn {
    /// The session this turn belongs to.
    pub fn session_id(&self) -> &SessionId {
        &self.session.session_id
    }

    /// Fires on `session/cancel` (and when the prompt runs too long).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// `true` once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// Sends any update.
    pub async fn send(&self, update: SessionUpdate) -> Result<(), Error> {
        self.session.notify(update).await
    }

    /// Streams a piece of the agent's answer.
    pub async fn agent_text(&self, text: impl Into<String>) -> Result<(), Error> {
        let chunk = ContentChunk::new(ContentBlock::from(TextContent::new(text)));
        self.send(SessionUpdate::AgentMessageChunk(Box::new(chunk)))
            .await
    }

    /// Streams a piece of the agent's reasoning.
    pub async fn thought(&self, text: impl Into<String>) -> Result<(), Error> {
        let chunk = ContentChunk::new(ContentBlock::from(TextContent::new(text)));
        self.send(SessionUpdate::AgentThoughtChunk(Box::new(chunk)))
            .await
    }

    /// Reports a new tool call.
    pub async fn tool_call(&self, call: ToolCall) -> Result<(), Error> {
        self.send(SessionUpdate::ToolCall(Box::new(call))).await
    }

    /// Patches a tool call.
    pub async fn tool_call_update(&self, update: ToolCallUpdate) -> Result<(), Error> {
        self.send(SessionUpdate::ToolCallUpdate(Box::new(update)))
            .await
    }

    /// Replaces the plan.
    pub async fn plan(&self, entries: Vec<PlanEntry>) -> Result<(), Error> {
        self.send(SessionUpdate::Plan(Plan::new(entries))).await
    }

    /// Asks the client for permission. Cancelled turns cancel the request (`$/cancel_request`)
    /// and wait for the client's answer; an outcome this build does not know is never approval.
    pub async fn request_permission(
        &self,
        request: RequestPermissionRequest,
    ) -> Result<Permission, Error> {
        if self.is_cancelled() {
            return Ok(Permission::Cancelled);
        }
        let mut options = RequestOptions::default()
            .cancellation(self.cancellation.clone())
            .graceful(true);
        if let Some(timeout) = self.session.limits.permission_timeout {
            options = options.timeout(timeout);
        }
        match self
            .session
            .connection
            .request_with(&request, options)
            .await
        {
            _ if self.is_cancelled() => Ok(Permission::Cancelled),
            Ok(response) => Ok(match response.outcome {
                RequestPermissionOutcome::Selected(selected) => {
                    Permission::Selected(selected.option_id.0)
                }
                RequestPermissionOutcome::Cancelled => Permission::Cancelled,
            }),
            Err(Error::Rpc(err)) if err.code == acp_rpc::codes::REQUEST_CANCELLED => {
                Ok(Permission::Cancelled)
            }
            // An answer the agent cannot read, or an error: not permission. The tool call it
            // gated has failed (v1 has no `cancelled` status), never left pending.
            Err(err) => {
                tracing::warn!(%err, "the permission request failed; treated as cancelled");
                let update = ToolCallUpdate::new(request.tool_call.tool_call_id.clone())
                    .status(acp_v1::ToolCallStatus::Failed);
                self.tool_call_update(update).await?;
                Ok(Permission::Cancelled)
            }
        }
    }
}
