//! The protocol's draft session methods (`unstable`), which the SDK serves for every agent:
//! fork, archive / unarchive with the list's archive filter, set_title and status, driven over
//! raw JSON-RPC as any client would.

#![cfg(feature = "unstable")]

use crate::common;

use std::sync::{Arc, Mutex};

use acp_rpc::message::{Notification, Request};
use acp_rpc::negotiate::{self, Negotiated};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RpcError};
use acp_sdk::Server;
use acp_support::Patch;
use acp_v2::{SessionArchiveFilter, SessionStatus, SessionUpdate, StateUpdate};
use common::Scripted;
use serde_json::value::RawValue;

/// A client that keeps every `session/update` it gets, decoded as `T` (its version's
/// notification).
#[derive(Clone)]
struct Recorder<T>(Arc<Mutex<Vec<T>>>);

impl<T> Recorder<T> {
    fn new() -> Self {
        Self(Arc::default())
    }
}

impl<T: serde::de::DeserializeOwned + Send + 'static> Handler for Recorder<T> {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        Err(RpcError::method_not_found(&request.method))
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        if let Ok(update) = notification.params_as::<T>() {
            self.0.lock().expect("lock").push(update);
        }
    }
}

async fn connect(
    server: &Server<Scripted>,
) -> (
    Connection,
    Recorder<acp_v2::UpdateSessionNotification>,
    acp_v2::AgentCapabilities,
) {
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(agent_io);
    server.connect(read, write);
    let (read, write) = tokio::io::split(client_io);
    let recorder = Recorder::new();
    let (client, _task) =
        Connection::spawn(read, write, recorder.clone(), ConnectionOptions::default());
    let hello = acp_v2::InitializeRequest::new(2, acp_v2::Implementation::new("test", "0"));
    let Ok(Negotiated::V2(agent)) = negotiate::initialize(&client, &hello).await else {
        panic!("v2");
    };
    let capabilities = agent.capabilities.expect("capabilities");
    (client, recorder, capabilities)
}

fn cwd() -> String {
    std::env::temp_dir().to_string_lossy().into_owned()
}

async fn list(client: &Connection, filter: Option<SessionArchiveFilter>) -> Vec<(String, bool)> {
    let mut request = acp_v2::ListSessionsRequest::new();
    if let Some(filter) = filter {
        request = request.archived(filter);
    }
    let page = client.request(&request).await.expect("session/list");
    page.sessions
        .into_iter()
        .map(|s| {
            let archived = s.archived.as_option().copied().unwrap_or(false);
            (s.session_id.to_string(), archived)
        })
        .collect()
}

#[tokio::test]
async fn fork_archive_title_and_status_are_served_and_advertised() {
    let server = Server::new(Scripted);
    let (client, recorder, capabilities) = connect(&server).await;
    let session = capabilities
        .session
        .as_option()
        .expect("session capabilities");
    assert!(session.fork.is_value() && session.archive.is_value());
    assert!(session.title.is_value() && session.status.is_value());

    let a = client
        .request(&acp_v2::NewSessionRequest::new(cwd()))
        .await
        .expect("session/new")
        .session_id;
    client
        .request(&acp_v2::PromptRequest::new(
            a.clone(),
            vec![acp_v2::ContentBlock::from("hello")],
        ))
        .await
        .expect("session/prompt");

    // A title, stored and listed.
    let titled = client
        .request(&acp_v2::SetSessionTitleRequest::new(a.clone(), "First"))
        .await
        .expect("session/set_title");
    assert_eq!(titled.title, "First");
    let page = client
        .request(&acp_v2::ListSessionsRequest::new())
        .await
        .expect("list");
    assert_eq!(
        page.sessions[0].title.as_option().map(String::as_str),
        Some("First")
    );

    // Status: in memory, idle after its turn; an unknown session is -32002.
    let status = client
        .request(&acp_v2::SessionStatusRequest::new(a.clone()))
        .await
        .expect("session/status");
    assert_eq!(status.status, SessionStatus::Open);
    assert!(matches!(status.state, Patch::Value(StateUpdate::Idle(_))));
    let unknown = client
        .request(&acp_v2::SessionStatusRequest::new("sess_404"))
        .await
        .expect_err("unknown");
    assert_eq!(unknown.code(), -32002);

    // A fork carries the history: resumed with replay, it shows the original's prompt.
    let b = client
        .request(&acp_v2::ForkSessionRequest::new(a.clone(), cwd()))
        .await
        .expect("session/fork")
        .session_id;
    assert_ne!(a, b);
    // A prompt in the fork is a new message after the copied ones, never one of them again.
    client
        .request(&acp_v2::PromptRequest::new(
            b.clone(),
            vec![acp_v2::ContentBlock::from("in the fork")],
        ))
        .await
        .expect("session/prompt in the fork");
    recorder.0.lock().expect("lock").clear();
    let resume = acp_v2::ResumeSessionRequest::new(b.clone(), cwd())
        .replay_from(acp_v2::ReplayFrom::Start(Default::default()));
    client.request(&resume).await.expect("resume the fork");
    let replayed = recorder.0.lock().expect("lock").clone();
    let user_said: Vec<String> = replayed
        .iter()
        .filter(|n| n.session_id == b)
        .filter_map(|n| match &n.update {
            SessionUpdate::UserMessage(m) => Some(acp_sdk::text_of(
                m.content.as_option().map(Vec::as_slice).unwrap_or_default(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(user_said, ["hello", "in the fork"], "{replayed:?}");

    // Archived: out of the default list, in `only` and `include`, marked; unarchived: back.
    client
        .request(&acp_v2::ArchiveSessionRequest::new(a.clone()))
        .await
        .expect("session/archive");
    let a_id = a.to_string();
    let b_id = b.to_string();
    assert_eq!(list(&client, None).await, [(b_id.clone(), false)]);
    assert_eq!(
        list(&client, Some(SessionArchiveFilter::Only)).await,
        [(a_id.clone(), true)]
    );
    assert_eq!(
        list(&client, Some(SessionArchiveFilter::Include)).await,
        [(a_id.clone(), true), (b_id.clone(), false)]
    );
    let bad = client
        .request(&acp_v2::ListSessionsRequest::new().archived(SessionArchiveFilter::from("_x")))
        .await
        .expect_err("an unknown filter");
    assert_eq!(bad.code(), -32602);
    // Archiving closed it, as session/close does: not active until resumed.
    let refused = client
        .request(&acp_v2::PromptRequest::new(
            a.clone(),
            vec![acp_v2::ContentBlock::from("again")],
        ))
        .await
        .expect_err("closed");
    assert_eq!(refused.code(), -32002);
    client
        .request(&acp_v2::UnarchiveSessionRequest::new(a.clone()))
        .await
        .expect("session/unarchive");
    assert_eq!(list(&client, None).await, [(a_id, false), (b_id, false)]);
}

async fn list_v1(
    client: &Connection,
    filter: Option<acp_v1::SessionArchiveFilter>,
) -> Vec<(String, bool)> {
    let mut request = acp_v1::ListSessionsRequest::new();
    if let Some(filter) = filter {
        request = request.archived(filter);
    }
    let page = client.request(&request).await.expect("session/list");
    page.sessions
        .into_iter()
        .map(|s| {
            let archived = s.archived.as_option().copied().unwrap_or(false);
            (s.session_id.to_string(), archived)
        })
        .collect()
}

/// The user's text in a v1 replay, message by message.
fn user_text(updates: &[acp_v1::SessionNotification], session: &acp_v1::SessionId) -> String {
    updates
        .iter()
        .filter(|n| &n.session_id == session)
        .filter_map(|n| match &n.update {
            acp_v1::SessionUpdate::UserMessageChunk(chunk) => match &chunk.content {
                acp_v1::ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("|")
}

#[tokio::test]
async fn v1_clients_get_the_same_draft_methods() {
    use acp_v1::SessionArchiveFilter as Filter;

    let server = Server::new(Scripted);
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(agent_io);
    server.connect(read, write);
    let (read, write) = tokio::io::split(client_io);
    let recorder = Recorder::<acp_v1::SessionNotification>::new();
    let (client, _task) =
        Connection::spawn(read, write, recorder.clone(), ConnectionOptions::default());
    let hello = client
        .request(&acp_v1::InitializeRequest::new(1))
        .await
        .expect("initialize");
    let session = hello
        .agent_capabilities
        .expect("agent capabilities")
        .session_capabilities
        .expect("session capabilities");
    assert!(session.fork.is_value() && session.archive.is_value());
    assert!(session.title.is_value() && session.status.is_value());

    let a = client
        .request(&acp_v1::NewSessionRequest::new(cwd(), vec![]))
        .await
        .expect("session/new")
        .session_id;
    client
        .request(&acp_v1::PromptRequest::new(
            a.clone(),
            vec![acp_v1::ContentBlock::from("hello")],
        ))
        .await
        .expect("session/prompt");

    // A title: answered, listed, and sent to the session's connection.
    let titled = client
        .request(&acp_v1::SetSessionTitleRequest::new(a.clone(), "First"))
        .await
        .expect("session/set_title");
    assert_eq!(titled.title, "First");
    let page = client
        .request(&acp_v1::ListSessionsRequest::new())
        .await
        .expect("list");
    assert_eq!(
        page.sessions[0].title.as_option().map(String::as_str),
        Some("First")
    );
    let sent_title = recorder.0.lock().expect("lock").iter().any(|n| {
        matches!(&n.update, acp_v1::SessionUpdate::SessionInfoUpdate(info)
            if info.title.as_option().map(String::as_str) == Some("First"))
    });
    assert!(sent_title, "the title was sent to the session's connection");

    // Status: in memory; an unknown session is -32002.
    let status = client
        .request(&acp_v1::SessionStatusRequest::new(a.clone()))
        .await
        .expect("session/status");
    assert_eq!(status.status, acp_v1::SessionStatus::Open);
    let unknown = client
        .request(&acp_v1::SessionStatusRequest::new("sess_404"))
        .await
        .expect_err("unknown");
    assert_eq!(unknown.code(), -32002);

    // A fork carries the log: loaded, it replays the original's prompt, then its own.
    let b = client
        .request(&acp_v1::ForkSessionRequest::new(a.clone(), cwd()))
        .await
        .expect("session/fork")
        .session_id;
    assert_ne!(a, b);
    client
        .request(&acp_v1::PromptRequest::new(
            b.clone(),
            vec![acp_v1::ContentBlock::from("in the fork")],
        ))
        .await
        .expect("session/prompt in the fork");
    recorder.0.lock().expect("lock").clear();
    client
        .request(&acp_v1::LoadSessionRequest::new(vec![], cwd(), b.clone()))
        .await
        .expect("load the fork");
    let replayed = recorder.0.lock().expect("lock").clone();
    assert_eq!(
        user_text(&replayed, &b),
        "hello|in the fork",
        "{replayed:?}"
    );
    // The original's log is its own: the fork's prompt is not in it.
    recorder.0.lock().expect("lock").clear();
    client
        .request(&acp_v1::LoadSessionRequest::new(vec![], cwd(), a.clone()))
        .await
        .expect("load the original");
    let replayed = recorder.0.lock().expect("lock").clone();
    assert_eq!(user_text(&replayed, &a), "hello", "{replayed:?}");

    // Archived: out of the default list, in `only` and `include`, marked; unarchived: back.
    client
        .request(&acp_v1::ArchiveSessionRequest::new(a.clone()))
        .await
        .expect("session/archive");
    let (a_id, b_id) = (a.to_string(), b.to_string());
    assert_eq!(list_v1(&client, None).await, [(b_id.clone(), false)]);
    assert_eq!(
        list_v1(&client, Some(Filter::Only)).await,
        [(a_id.clone(), true)]
    );
    assert_eq!(
        list_v1(&client, Some(Filter::Include)).await,
        [(a_id.clone(), true), (b_id.clone(), false)]
    );
    let bad = client
        .request(&acp_v1::ListSessionsRequest::new().archived(Filter::from("_x")))
        .await
        .expect_err("an unknown filter");
    assert_eq!(bad.code(), -32602);
    client
        .request(&acp_v1::UnarchiveSessionRequest::new(a.clone()))
        .await
        .expect("session/unarchive");
    assert_eq!(list_v1(&client, None).await, [(a_id, false), (b_id, false)]);
}
