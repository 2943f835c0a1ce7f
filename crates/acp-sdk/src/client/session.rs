//! [`ClientSession`]: one session seen from the client, in either version.
//!
//! Locking: `state` and `turns` are taken together only in the connection's notification
//! handler and in a v1 `prompt` (folding the user's prompt), `turns` first and then `state`;
//! everywhere else one at a time.
//! None is held across an `.await`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use acp_rpc::{CancellationToken, RequestOptions};

use super::attribution::Turns;
use super::folded::{Folded, Snapshot};
use super::turn::{StopReason, TurnHandle, TurnSlot};
use super::{ClientError, Shared};
use crate::ContentBlock;

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the connection and the session handle share about one session.
pub(crate) struct SessionShared {
    pub(crate) id: String,
    pub(crate) version: u16,
    /// The session's working directory and additional directories: the services' roots.
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) state: Mutex<Folded>,
    /// The current agent message's text bound; locked only under `state`.
    pub(crate) message_cap: Mutex<super::message_cap::MessageCap>,
    /// Its turns, and which one owns the updates.
    pub(crate) turns: Mutex<Turns>,
    /// Fires when the session is cancelled: pending permission requests are answered
    /// `cancelled`. Replaced by a fresh token at each cancel.
    pub(crate) permissions: Mutex<CancellationToken>,
    /// v1 modes as the agent gave them (for `set_config_option` on a v1 agent with modes only).
    pub(crate) v1_modes: Mutex<Option<acp_v1::SessionModeState>>,
    pub(crate) terminals: super::services::Terminals,
}

/// A session listed by the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionSummary {
    /// Its id.
    pub id: String,
    /// Its working directory.
    pub cwd: String,
    /// Its title, if it has one.
    pub title: Option<String>,
    /// When it last changed (ISO 8601), if the agent says.
    pub updated_at: Option<String>,
}

/// One session of a [`super::Client`].
#[derive(Clone)]
pub struct ClientSession {
    shared: Arc<Shared>,
    session: Arc<SessionShared>,
}

impl std::fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSession")
            .field("id", &self.session.id)
            .finish_non_exhaustive()
    }
}

/// Content to prompt with: text, or blocks.
pub trait IntoPrompt {
    /// The blocks.
    fn into_prompt(self) -> Vec<ContentBlock>;
}

impl IntoPrompt for &str {
    fn into_prompt(self) -> Vec<ContentBlock> {
        vec![ContentBlock::from(self)]
    }
}

impl IntoPrompt for String {
    fn into_prompt(self) -> Vec<ContentBlock> {
        vec![ContentBlock::from(self)]
    }
}

impl IntoPrompt for Vec<ContentBlock> {
    fn into_prompt(self) -> Vec<ContentBlock> {
        self
    }
}

/// Registers session `id`, refusing one this client already holds (a second handle would fold
/// the same updates twice, and a failed resume would take the first one away).
fn register(
    shared: &Shared,
    id: String,
    roots: Vec<PathBuf>,
    replaying: bool,
) -> Result<Arc<SessionShared>, ClientError> {
    let version = shared.agent.protocol_version;
    let session = Arc::new(SessionShared {
        id: id.clone(),
        version,
        roots,
        state: Mutex::new(Folded::new(version, shared.options.state_limits)),
        message_cap: Mutex::default(),
        turns: Mutex::new(Turns::new(replaying)),
        permissions: Mutex::new(CancellationToken::new()),
        v1_modes: Mutex::new(None),
        terminals: Default::default(),
    });
    let mut sessions = lock(&shared.sessions);
    if sessions.contains_key(&id) {
        return Err(ClientError::Usage(format!(
            "session `{id}` is already open on this client: use its ClientSession"
        )));
    }
    sessions.insert(id, session.clone());
    Ok(session)
}

fn roots(shared: &Shared, cwd: &Path) -> Vec<PathBuf> {
    let mut roots = vec![cwd.to_path_buf()];
    roots.extend(shared.options.services.extra_roots.iter().cloned());
    roots
}

fn cwd_string(cwd: &Path) -> Result<String, ClientError> {
    if !cwd.is_absolute() {
        return Err(ClientError::Usage(format!(
            "the working directory must be absolute, got `{}`",
            cwd.display()
        )));
    }
    Ok(cwd.to_string_lossy().into_owned())
}

/// A turn whose prompt is not written yet: ended if dropped so.
struct Unsent<'a> {
    session: &'a SessionShared,
    slot: Option<Arc<TurnSlot>>,
}

impl Drop for Unsent<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let dropped = ClientError::Usage("the prompt was dropped before it was sent".into());
            lock(&self.session.turns).finish(&slot, Err(dropped));
        }
    }
}

/// A session registered from its answer, or why it could not be.
type Registered = Result<Arc<SessionShared>, ClientError>;

/// The `sessionId` of a raw `session/new` result.
fn session_id_of(result: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Created {
        #[serde(rename = "sessionId")]
        session_id: String,
    }
    serde_json::from_str::<Created>(result)
        .ok()
        .map(|created| created.session_id)
}

/// A `session/new` answer, in the version spoken.
enum Created {
    V1(acp_v1::NewSessionResponse),
    V2(acp_v2::NewSessionResponse),
}

pub(crate) async fn create(shared: &Arc<Shared>, cwd: &Path) -> Result<ClientSession, ClientError> {
    let cwd_text = cwd_string(cwd)?;
    let connection = &shared.connection;
    // The session is registered on the connection's ordered path, the moment the answer is
    // delivered and before the next line is dispatched: an update the agent writes right after
    // its answer (real agents do, in the same write) finds the session. Ordering guarantee:
    // what the agent sends after the answer is folded into the session the answer created.
    let early: Arc<Mutex<Option<Registered>>> = Arc::default();
    let options = {
        let (shared, early, roots) = (shared.clone(), early.clone(), roots(shared, cwd));
        RequestOptions::default().on_answer(move |answer| {
            if let Some(id) = answer
                .as_ref()
                .ok()
                .and_then(|raw| session_id_of(raw.get()))
            {
                *lock(&early) = Some(register(&shared, id, roots.clone(), false));
            }
        })
    };
    let created = if shared.agent.protocol_version == 1 {
        let request = acp_v1::NewSessionRequest::new(cwd_text, Vec::new());
        connection
            .request_with(&request, options)
            .await
            .map(Created::V1)
    } else {
        let request = acp_v2::NewSessionRequest::new(cwd_text);
        connection
            .request_with(&request, options)
            .await
            .map(Created::V2)
    };
    let early = lock(&early).take();
    let created = match created {
        Ok(created) => created,
        Err(err) => {
            // The answer named a session but did not decode: it is not this client's.
            if let Some(Ok(session)) = early {
                lock(&shared.sessions).remove(&session.id);
            }
            return Err(err.into());
        }
    };
    let id = match &created {
        Created::V1(response) => response.session_id.to_string(),
        Created::V2(response) => response.session_id.to_string(),
    };
    let session = match early {
        Some(registered) => registered?,
        None => register(shared, id, roots(shared, cwd), false)?,
    };
    match created {
        Created::V1(response) => {
            *lock(&session.v1_modes) = response.modes.as_option().cloned();
            if let Folded::V1(state) = &mut *lock(&session.state) {
                state.config_options = response.config_options.into_option();
                state.current_mode = response.modes.into_option().map(|m| m.current_mode_id);
            }
        }
        Created::V2(response) => {
            if let Folded::V2(state) = &mut *lock(&session.state) {
                state.config_options = response.config_options;
            }
        }
    }
    Ok(ClientSession {
        shared: shared.clone(),
        session,
    })
}

pub(crate) async fn list(
    shared: &Arc<Shared>,
    cwd: Option<&Path>,
) -> Result<Vec<SessionSummary>, ClientError> {
    if !shared.agent.capabilities.list {
        return Err(ClientError::NotAdvertised {
            method: "session/list",
            capability: "`sessionCapabilities.list`",
        });
    }
    let cwd = cwd.map(cwd_string).transpose()?;
    let mut sessions = Vec::new();
    let mut cursor: Option<String> = None;
    // A bound on pages: an agent that hands out cursors forever cannot keep the client here.
    for _ in 0..10_000 {
        let next = if shared.agent.protocol_version == 1 {
            let mut request = acp_v1::ListSessionsRequest::new();
            if let Some(cwd) = &cwd {
                request = request.cwd(cwd.as_str());
            }
            if let Some(cursor) = &cursor {
                request = request.cursor(cursor.as_str());
            }
            let response = shared.connection.request(&request).await?;
            sessions.extend(response.sessions.iter().map(|s| SessionSummary {
                id: s.session_id.to_string(),
                cwd: s.cwd.clone(),
                title: s.title.as_option().cloned(),
                updated_at: s.updated_at.as_option().cloned(),
            }));
            response.next_cursor.as_option().cloned()
        } else {
            let mut request = acp_v2::ListSessionsRequest::new();
            if let Some(cwd) = &cwd {
                request = request.cwd(cwd.as_str());
            }
            if let Some(cursor) = &cursor {
                request = request.cursor(cursor.as_str());
            }
            let response = shared.connection.request(&request).await?;
            sessions.extend(response.sessions.iter().map(|s| SessionSummary {
                id: s.session_id.to_string(),
                cwd: s.cwd.as_str().to_owned(),
                title: s.title.as_option().cloned(),
                updated_at: s.updated_at.as_option().cloned(),
            }));
            response
                .next_cursor
                .as_option()
                .map(|c| c.as_str().to_owned())
        };
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(sessions),
        }
    }
    Err(ClientError::Connection(
        "the agent's session list did not end after 10,000 pages".into(),
    ))
}

pub(crate) async fn resume(
    shared: &Arc<Shared>,
    id: &str,
    cwd: &Path,
) -> Result<ClientSession, ClientError> {
    if !shared.agent.capabilities.replay {
        return Err(ClientError::NotAdvertised {
            method: "session/load",
            capability: "`loadSession`",
        });
    }
    let cwd_text = cwd_string(cwd)?;
    // Registered first: the replay arrives before the response and folds into this state.
    let session = register(shared, id.to_owned(), roots(shared, cwd), true)?;
    // The replay ends where the answer arrives, on the ordered path.
    let replayed = {
        let session = session.clone();
        RequestOptions::default().on_answer(move |_| lock(&session.turns).replaying = false)
    };
    let connection = &shared.connection;
    let result = if shared.agent.protocol_version == 1 {
        connection
            .request_with(
                &acp_v1::LoadSessionRequest::new(Vec::new(), cwd_text, id),
                replayed,
            )
            .await
            .map(|response| {
                *lock(&session.v1_modes) = response.modes.as_option().cloned();
            })
    } else {
        let request = acp_v2::ResumeSessionRequest::new(id, cwd_text)
            .replay_from(acp_v2::ReplayFrom::Start(acp_v2::ReplayFromStart::new()));
        connection
            .request_with(&request, replayed)
            .await
            .map(|_| ())
    };
    if let Err(err) = result {
        lock(&shared.sessions).remove(id);
        return Err(err.into());
    }
    Ok(ClientSession {
        shared: shared.clone(),
        session,
    })
}

impl ClientSession {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.session.id
    }

    /// The state as the agent reported it, in the same shape whatever the version.
    pub fn state(&self) -> Snapshot {
        lock(&self.session.state).snapshot()
    }

    /// The full folded state, as the version spoken has it.
    pub fn folded(&self) -> Folded {
        lock(&self.session.state).clone()
    }

    /// Sends a prompt; the turn's events and outcome come through the handle. On a v1 agent a
    /// second prompt while one runs is refused here, as v1 agents refuse it.
    pub async fn prompt(&self, content: impl IntoPrompt) -> Result<TurnHandle, ClientError> {
        let blocks = content.into_prompt();
        let capacity = self.shared.options.event_capacity;
        let connection = self.shared.connection.clone();
        let id = self.session.id.clone();
        if self.session.version == 1 {
            let blocks = blocks
                .iter()
                .map(crate::content::v2_to_v1)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|err| ClientError::Usage(format!("not a v1 content block: {err}")))?;
            let slot = {
                let mut turns = lock(&self.session.turns);
                if !turns.is_empty() {
                    return Err(ClientError::Usage(
                        "a v1 agent runs one prompt at a time; this session's is still running"
                            .into(),
                    ));
                }
                // v1 agents do not echo the prompt: the client folds it in itself, as a
                // `session/load` replay will show it.
                if let Folded::V1(state) = &mut *lock(&self.session.state) {
                    for block in &blocks {
                        state.apply(acp_v1::SessionUpdate::UserMessageChunk(Box::new(
                            acp_v1::ContentChunk::new(block.clone()),
                        )));
                    }
                }
                let slot = TurnSlot::new(capacity, true);
                turns.sent(slot.clone());
                slot
            };
            // The turn ends where its answer arrives, on the ordered path: after every update
            // the agent sent before it.
            let ended = {
                let (session, slot) = (self.session.clone(), slot.clone());
                RequestOptions::default().on_answer(move |answer| {
                    let outcome = answer.as_ref().map_err(ClientError::from).and_then(|raw| {
                        serde_json::from_str::<acp_v1::PromptResponse>(raw.get())
                            .map(|response| v1_stop_reason(&response.stop_reason))
                            .map_err(|err| {
                                ClientError::Connection(format!(
                                    "the prompt's answer does not decode: {err}"
                                ))
                            })
                    });
                    lock(&session.turns).finish(&slot, outcome);
                })
            };
            let request = acp_v1::PromptRequest::new(id, blocks);
            let pending = self.send_prompt(&request, ended, &slot).await?;
            let (session, task_slot) = (self.session.clone(), slot.clone());
            tokio::spawn(async move {
                if let Err(err) = pending.answer().await {
                    // A timeout: the hook did not run.
                    lock(&session.turns).finish(&task_slot, Err(err.into()));
                }
            });
            return Ok(TurnHandle::new(slot, self.clone()));
        }
        let slot = TurnSlot::new(capacity, false);
        lock(&self.session.turns).sent(slot.clone());
        // Accepted (or refused) where the answer arrives, on the ordered path.
        let accepted = {
            let (session, slot) = (self.session.clone(), slot.clone());
            RequestOptions::default()
                .cancellation(slot.cancel_request.clone())
                .graceful(true)
                .on_answer(move |answer| prompt_answered(&session, &slot, answer))
        };
        let cancel = acp_v2::CancelSessionNotification::new(id.as_str());
        let request = acp_v2::PromptRequest::new(id, blocks);
        let pending = self.send_prompt(&request, accepted, &slot).await?;
        let (session, task_slot) = (self.session.clone(), slot.clone());
        tokio::spawn(async move {
            match pending.answer().await {
                // Accepted although its cancellation was asked for: cancel the work it began.
                Ok(_) if task_slot.cancel_request.is_cancelled() => {
                    let _ = connection.notify(&cancel).await;
                }
                Ok(_) => {}
                // A timeout: the hook did not run.
                Err(err) => lock(&session.turns).finish(&task_slot, Err(err.into())),
            }
        });
        Ok(TurnHandle::new(slot, self.clone()))
    }

    /// Writes the prompt: once this returns, what is sent next (a cancel) cannot overtake it. A
    /// prompt that cannot be written ends its turn with the error.
    async fn send_prompt<R: acp_support::Request>(
        &self,
        request: &R,
        options: RequestOptions,
        slot: &Arc<TurnSlot>,
    ) -> Result<acp_rpc::PendingRequest, ClientError> {
        // Dropped before the prompt is written (the caller's future cancelled while the outbox
        // is full): the turn ends, so the session is not left with a turn that never runs.
        let unsent = Unsent {
            session: &self.session,
            slot: Some(slot.clone()),
        };
        let written = match serde_json::value::to_raw_value(request) {
            Ok(params) => {
                self.shared
                    .connection
                    .send_request(R::METHOD, Some(params), options)
                    .await
            }
            Err(err) => Err(acp_rpc::Error::Encode(err)),
        };
        let mut unsent = unsent;
        unsent.slot = None;
        written.map_err(|err| {
            let err = ClientError::from(err);
            lock(&self.session.turns).finish(slot, Err(err.clone()));
            err
        })
    }

    /// Cancels the session's work (`session/cancel`): the running turn ends `cancelled`, the
    /// agent answers held prompts `-32800` (their turns end `cancelled`), and permission
    /// requests still waiting for the application are answered `cancelled`, as the protocol
    /// asks of the client.
    pub async fn cancel(&self) -> Result<(), ClientError> {
        let connection = &self.shared.connection;
        if self.session.version == 1 {
            connection
                .notify(&acp_v1::CancelNotification::new(self.session.id.as_str()))
                .await?;
        } else {
            connection
                .notify(&acp_v2::CancelSessionNotification::new(
                    self.session.id.as_str(),
                ))
                .await?;
        }
        // After the notification: the agent reads the cancel before the answers.
        std::mem::take(&mut *lock(&self.session.permissions)).cancel();
        Ok(())
    }

    /// Sets configuration option `id` to `value`. On a v1 agent that has modes but no
    /// configuration options, the `mode` option is its modes (`session/set_mode`).
    pub async fn set_config_option(&self, id: &str, value: &str) -> Result<(), ClientError> {
        let connection = &self.shared.connection;
        if self.session.version == 2 {
            let request = acp_v2::SetSessionConfigOptionRequest::new(
                self.session.id.as_str(),
                id,
                acp_v2::SetSessionConfigOptionRequestType::Id(
                    acp_v2::SetSessionConfigOptionRequestTypeId::new(value),
                ),
            );
            let response = connection.request(&request).await?;
            if let Folded::V2(state) = &mut *lock(&self.session.state) {
                state.config_options = Some(response.config_options);
            }
            return Ok(());
        }
        let has_options = matches!(&*lock(&self.session.state),
            Folded::V1(state) if state.config_options.as_ref().is_some_and(|o| !o.is_empty()));
        let has_modes = lock(&self.session.v1_modes).is_some();
        if !has_options && has_modes && id == "mode" {
            connection
                .request(&acp_v1::SetSessionModeRequest::new(
                    self.session.id.as_str(),
                    value,
                ))
                .await?;
            if let Folded::V1(state) = &mut *lock(&self.session.state) {
                state.current_mode = Some(acp_v1::SessionModeId::new(value));
            }
            return Ok(());
        }
        let request = acp_v1::SetSessionConfigOptionRequest::new(
            self.session.id.as_str(),
            id,
            acp_v1::SetSessionConfigOptionRequestType::ValueId(
                acp_v1::SetSessionConfigOptionRequestTypeValueId::new(value),
            ),
        );
        let response = connection.request(&request).await?;
        if let Folded::V1(state) = &mut *lock(&self.session.state) {
            state.config_options = Some(response.config_options);
        }
        Ok(())
    }

    /// Closes the session (`session/close`; a v1 agent that does not advertise it gets
    /// `session/cancel` for the running turn instead).
    pub async fn close(&self) -> Result<(), ClientError> {
        let connection = &self.shared.connection;
        let id = self.session.id.as_str();
        let closed = if self.session.version == 2 {
            connection
                .request(&acp_v2::CloseSessionRequest::new(id))
                .await
                .map(drop)
        } else if self.shared.agent.capabilities.close {
            connection
                .request(&acp_v1::CloseSessionRequest::new(id))
                .await
                .map(drop)
        } else {
            self.cancel().await?;
            Ok(())
        };
        match closed {
            // The agent no longer has it: closed already.
            Err(acp_rpc::Error::Rpc(err)) if err.code == acp_rpc::codes::RESOURCE_NOT_FOUND => {}
            other => other?,
        }
        lock(&self.shared.sessions).remove(id);
        self.session.terminals.release_all().await;
        Ok(())
    }

    /// Deletes the session.
    pub async fn delete(&self) -> Result<(), ClientError> {
        if !self.shared.agent.capabilities.delete {
            return Err(ClientError::NotAdvertised {
                method: "session/delete",
                capability: "`sessionCapabilities.delete`",
            });
        }
        if self.session.version == 2 {
            self.shared
                .connection
                .request(&acp_v2::DeleteSessionRequest::new(self.session.id.as_str()))
                .await?;
        } else {
            self.shared
                .connection
                .request(&acp_v1::DeleteSessionRequest::new(self.session.id.as_str()))
                .await?;
        }
        lock(&self.shared.sessions).remove(&self.session.id);
        self.session.terminals.release_all().await;
        Ok(())
    }
}

/// The answer to a v2 prompt: accepted as a user message, or refused (`-32800`: cancelled
/// while held, the turn ends `cancelled`).
fn prompt_answered(
    session: &SessionShared,
    slot: &Arc<TurnSlot>,
    answer: &Result<Box<serde_json::value::RawValue>, acp_rpc::Error>,
) {
    let mut turns = lock(&session.turns);
    match answer {
        Ok(raw) => match serde_json::from_str::<acp_v2::PromptResponse>(raw.get()) {
            Ok(response) => turns.accepted(slot, response.message_id.to_string()),
            // Accepted, without the message id the schema asks for.
            Err(_) if unnamed_acceptance(raw.get()) => turns.accepted_unnamed(slot),
            Err(err) => turns.finish(
                slot,
                Err(ClientError::Connection(format!(
                    "the prompt's answer does not decode: {err}"
                ))),
            ),
        },
        Err(acp_rpc::Error::Rpc(err)) if err.code == acp_rpc::codes::REQUEST_CANCELLED => {
            turns.finish(slot, Ok(StopReason::Cancelled));
        }
        Err(err) => turns.finish(slot, Err(err.into())),
    }
}

/// `true` for an answer that accepts a prompt without naming it: `null`, or an object without
/// `messageId`.
fn unnamed_acceptance(raw: &str) -> bool {
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Null) => true,
        Ok(serde_json::Value::Object(fields)) => !fields.contains_key("messageId"),
        _ => false,
    }
}

fn v1_stop_reason(reason: &acp_v1::StopReason) -> StopReason {
    match reason.as_str() {
        "end_turn" => StopReason::EndTurn,
        "max_tokens" => StopReason::MaxTokens,
        "max_turn_requests" => StopReason::MaxTurnRequests,
        "refusal" => StopReason::Refusal,
        "cancelled" => StopReason::Cancelled,
        other => StopReason::Other(other.to_owned()),
    }
}
