//! What the client serves the agent: `session/update` folded into each session (and turned into
//! its turn's events), permission requests answered by the application, and the v1 services.

use super::message_cap::{MessageCap, Verdict};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, Handler, RequestContext, RpcError};
use serde_json::value::RawValue;
use serde_json::Value;

use super::options::{refuse, ClientOptions, PermissionChoice, PermissionRequest};
use super::session::{lock, SessionShared};
use super::turn::Event;
use super::{folded::Folded, services};

type Answer = Result<Box<RawValue>, RpcError>;

/// What the agent sent that belongs to no session this client holds, within a bound: the
/// newest [`Diagnostics::CAPACITY`] are kept, the older ones counted.
#[derive(Debug, Default)]
pub(crate) struct Diagnostics {
    pub(crate) kept: std::collections::VecDeque<String>,
    pub(crate) dropped: u64,
}

impl Diagnostics {
    const CAPACITY: usize = 256;

    fn push(&mut self, diagnostic: String) {
        if self.kept.len() == Self::CAPACITY {
            self.kept.pop_front();
            self.dropped += 1;
        }
        self.kept.push_back(diagnostic);
    }
}

/// The connection's handler on the client side.
pub(crate) struct ClientHandler {
    sessions: Arc<Mutex<HashMap<String, Arc<SessionShared>>>>,
    diagnostics: Arc<Mutex<Diagnostics>>,
    options: ClientOptions,
}

impl ClientHandler {
    pub(crate) fn new(
        sessions: Arc<Mutex<HashMap<String, Arc<SessionShared>>>>,
        diagnostics: Arc<Mutex<Diagnostics>>,
        options: ClientOptions,
    ) -> Self {
        Self {
            sessions,
            diagnostics,
            options,
        }
    }

    fn diagnose(&self, diagnostic: String) {
        tracing::debug!(%diagnostic, "kept as a client diagnostic");
        lock(&self.diagnostics).push(diagnostic);
    }

    fn session(&self, id: &str) -> Result<Arc<SessionShared>, RpcError> {
        lock(&self.sessions).get(id).cloned().ok_or_else(|| {
            RpcError::new(
                acp_rpc::codes::RESOURCE_NOT_FOUND,
                format!("Session not found: `{id}`"),
            )
            .with_data(serde_json::json!({ "sessionId": id }))
        })
    }

    /// Asks the application, unless the agent cancels the request or the application cancels
    /// the session first.
    async fn decide(
        &self,
        session: &SessionShared,
        request: PermissionRequest,
        cx: &RequestContext,
    ) -> Option<String> {
        let Some(handler) = self.options.permission.clone() else {
            return refuse(&request);
        };
        let session_cancelled = lock(&session.permissions).clone();
        tokio::select! {
            answer = handler(request) => answer,
            _ = cx.cancellation().cancelled() => None,
            _ = session_cancelled.cancelled() => None,
        }
    }

    /// Asks the application about `request` and reports the exchange to the session's turn.
    async fn ask(
        &self,
        session: &SessionShared,
        request: PermissionRequest,
        cx: &RequestContext,
    ) -> Option<String> {
        let answer = self.decide(session, request.clone(), cx).await;
        push(
            session,
            Event::PermissionAsked {
                request,
                answer: answer.clone(),
            },
        );
        answer
    }

    async fn permission_v1(
        &self,
        req: acp_v1::RequestPermissionRequest,
        cx: &RequestContext,
    ) -> Answer {
        let session = self.session(req.session_id.as_str())?;
        let id = &req.tool_call.tool_call_id;
        // The best title known: the request's, else the tool call's as announced before (an
        // agent may name only its id), else its kind and id.
        let mut title = req.tool_call.title.as_option().cloned().unwrap_or_default();
        if let Folded::V1(state) = &mut *lock(&session.state) {
            state.apply_permission_subject(&req.tool_call);
            if title.is_empty() {
                title = state
                    .tool_calls
                    .get(id)
                    .map(|call| call.title.clone())
                    .unwrap_or_default();
            }
        }
        if title.is_empty() {
            title = format!("tool call {id}");
        }
        let request = PermissionRequest {
            session_id: session.id.clone(),
            tool_call_id: Some(id.to_string()),
            title,
            options: req
                .options
                .iter()
                .map(|o| choice(o.option_id.as_str(), &o.name, o.kind.as_str()))
                .collect(),
        };
        let outcome = match self.ask(&session, request, cx).await {
            Some(id) => acp_v1::RequestPermissionOutcome::Selected(
                acp_v1::SelectedPermissionOutcome::new(id),
            ),
            None => acp_v1::RequestPermissionOutcome::Cancelled,
        };
        acp_rpc::result(&acp_v1::RequestPermissionResponse::new(outcome))
    }

    async fn permission_v2(
        &self,
        req: acp_v2::RequestPermissionRequest,
        cx: &RequestContext,
    ) -> Answer {
        let session = self.session(req.session_id.as_str())?;
        let tool_call_id = match req.subject.as_option() {
            Some(acp_v2::RequestPermissionSubject::ToolCall(subject)) => {
                Some(subject.tool_call.tool_call_id.to_string())
            }
            _ => None,
        };
        let request = PermissionRequest {
            session_id: session.id.clone(),
            tool_call_id,
            title: req.title.clone(),
            options: req
                .options
                .iter()
                .map(|o| choice(o.option_id.as_str(), &o.name, o.kind.as_str()))
                .collect(),
        };
        let outcome = match self.ask(&session, request, cx).await {
            Some(id) => acp_v2::RequestPermissionOutcome::Selected(
                acp_v2::SelectedPermissionOutcome::new(id),
            ),
            None => acp_v2::RequestPermissionOutcome::Cancelled(
                acp_v2::CancelledPermissionOutcome::new(),
            ),
        };
        acp_rpc::result(&acp_v2::RequestPermissionResponse::new(outcome))
    }

    async fn request_v1(&self, request: Request, cx: RequestContext) -> Answer {
        use acp_v1::AgentRequest as R;
        let services = &self.options.services;
        match request.route::<R>()? {
            R::RequestPermissionRequest(req) => self.permission_v1(req, &cx).await,
            R::ReadTextFileRequest(req) => {
                let session = self.session(req.session_id.as_str())?;
                acp_rpc::result(&services::read_text_file(services, &session.roots, &req).await?)
            }
            R::WriteTextFileRequest(req) => {
                let session = self.session(req.session_id.as_str())?;
                acp_rpc::result(&services::write_text_file(services, &session.roots, &req).await?)
            }
            R::CreateTerminalRequest(req) => {
                let session = self.session(req.session_id.as_str())?;
                let response = session
                    .terminals
                    .create(services, &session.roots, &req)
                    .await?;
                acp_rpc::result(&response)
            }
            R::TerminalOutputRequest(req) => {
                let session = self.session(req.session_id.as_str())?;
                acp_rpc::result(&session.terminals.output(req.terminal_id.as_str())?)
            }
            R::WaitForTerminalExitRequest(req) => {
                let session = self.session(req.session_id.as_str())?;
                acp_rpc::result(&session.terminals.wait(req.terminal_id.as_str()).await?)
            }
            R::KillTerminalRequest(req) => {
                let session = self.session(req.session_id.as_str())?;
                acp_rpc::result(&session.terminals.kill(req.terminal_id.as_str()).await?)
            }
            R::ReleaseTerminalRequest(req) => {
                let session = self.session(req.session_id.as_str())?;
                acp_rpc::result(&session.terminals.release(req.terminal_id.as_str()).await?)
            }
            other => Err(RpcError::method_not_found(
                acp_support::method::Routed::method(&other),
            )),
        }
    }

    async fn request_v2(&self, request: Request, cx: RequestContext) -> Answer {
        use acp_v2::AgentRequest as R;
        match request.route::<R>()? {
            R::RequestPermissionRequest(req) => self.permission_v2(req, &cx).await,
            other => Err(RpcError::method_not_found(
                acp_support::method::Routed::method(&other),
            )),
        }
    }

    /// Folds one `session/update`; one that does not decode is kept in its session's state.
    fn update(&self, notification: &Notification, version: u16) {
        let text = notification.params.as_deref().map_or("null", RawValue::get);
        let decoded = if version == 1 {
            serde_json::from_str::<acp_v1::SessionNotification>(text)
                .map(|n| (n.session_id.to_string(), Update::V1(n.update)))
        } else {
            serde_json::from_str::<acp_v2::UpdateSessionNotification>(text)
                .map(|n| (n.session_id.to_string(), Update::V2(n.update)))
        };
        match decoded {
            Ok((id, update)) => {
                let Ok(session) = self.session(&id) else {
                    self.diagnose(format!(
                        "session/update for session `{id}`, which this client does not hold: {text}"
                    ));
                    return;
                };
                // `turns` before `state` (see session.rs).
                let mut turns = lock(&session.turns);
                let capacity = self.options.event_capacity;
                let event = {
                    let mut state = lock(&session.state);
                    let mut update = update;
                    let verdict = {
                        let max = self.options.max_message_bytes;
                        cap_message(&mut lock(&session.message_cap), &mut update, max)
                    };
                    match verdict {
                        Verdict::Drop => return,
                        Verdict::Cut(_) => self.diagnose(format!(
                            "session `{id}`: an agent message passed the limit of {} bytes \
                             (ClientOptions::max_message_bytes); the rest of it is not kept",
                            self.options.max_message_bytes
                        )),
                        Verdict::Keep => {}
                    }
                    match update {
                        Update::V1(update) => state.apply_v1(update),
                        Update::V2(update) => state.apply_v2(update, &mut turns, capacity),
                    }
                };
                if let Some(event) = event {
                    turns.push(event);
                }
            }
            Err(err) => {
                let raw: Value = serde_json::from_str(text).unwrap_or(Value::Null);
                let id = raw
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let Ok(session) = self.session(id) else {
                    self.diagnose(format!(
                        "session/update that does not decode ({err}), for no session this client holds: {text}"
                    ));
                    return;
                };
                let update = raw.get("update").cloned().unwrap_or(raw.clone());
                let event = lock(&session.state).reject(update, &err);
                push(&session, event);
            }
        }
    }
}

enum Update {
    V1(acp_v1::SessionUpdate),
    V2(acp_v2::SessionUpdate),
}

/// Applies the message bound to an agent message chunk (its text replaced by the marker when
/// it is cut); other updates end a v1 run of chunks without ids.
fn cap_message(cap: &mut MessageCap, update: &mut Update, max: usize) -> Verdict {
    let (id, text) = match update {
        Update::V1(acp_v1::SessionUpdate::AgentMessageChunk(chunk)) => match &mut chunk.content {
            acp_v1::ContentBlock::Text(text) => (
                chunk.message_id.as_option().map(|id| id.0.clone()),
                &mut text.text,
            ),
            _ => return Verdict::Keep,
        },
        Update::V2(acp_v2::SessionUpdate::AgentMessageChunk(chunk)) => match &mut chunk.content {
            acp_v2::ContentBlock::Text(text) => (Some(chunk.message_id.0.clone()), &mut text.text),
            _ => return Verdict::Keep,
        },
        _ => {
            cap.other();
            return Verdict::Keep;
        }
    };
    let verdict = cap.chunk(id.as_deref(), text.len(), max);
    if let Verdict::Cut(marker) = &verdict {
        text.clone_from(marker);
    }
    verdict
}

fn choice(id: &str, name: &str, kind: &str) -> PermissionChoice {
    PermissionChoice {
        id: id.to_owned(),
        name: name.to_owned(),
        kind: kind.to_owned(),
    }
}

/// Gives `event` to the session's running turn, if one runs.
fn push(session: &SessionShared, event: Event) {
    lock(&session.turns).push(event);
}

impl Handler for ClientHandler {
    async fn handle_request(&self, request: Request, cx: RequestContext) -> Answer {
        if cx.protocol_version() == Some(1) {
            self.request_v1(request, cx).await
        } else {
            self.request_v2(request, cx).await
        }
    }

    async fn handle_notification(&self, notification: Notification, connection: &Connection) {
        if notification.method == "session/update" {
            let version = connection.protocol_version().unwrap_or(2);
            self.update(&notification, version);
        } else {
            // Other notifications (extensions, drafts this client does not fold) are not lost.
            let params = notification.params.as_deref().map_or("null", RawValue::get);
            self.diagnose(format!(
                "notification `{}` not handled by this client: {params}",
                notification.method
            ));
        }
    }
}
