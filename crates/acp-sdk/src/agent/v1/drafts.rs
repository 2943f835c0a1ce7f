//! The protocol's draft session methods (the `unstable` feature) for v1 clients, served for
//! every agent and advertised only under the feature, as for v2: `session/fork` (a new session
//! with a copy of the log `session/load` replays, the agent's state from
//! [`Agent::fork_session`]), `session/archive` and `session/unarchive` (an archived session's
//! turn is cancelled, as `session/close` does in v1, and it is left out of a default
//! `session/list`), `session/set_title` (logged, listed and sent to the session's connection)
//! and `session/status` (with no side effect).

use std::sync::atomic::Ordering;

use acp_rpc::RequestContext;
use acp_v1::{
    ArchiveSessionResponse, ForkSessionRequest, ForkSessionResponse, SessionArchiveCapabilities,
    SessionCapabilities, SessionForkCapabilities, SessionInfoUpdate, SessionStatus,
    SessionStatusCapabilities, SessionStatusRequest, SessionStatusResponse,
    SessionTitleCapabilities, SessionUpdate, SetSessionTitleRequest, SetSessionTitleResponse,
    UnarchiveSessionResponse,
};

use super::{lock, not_found, Agent, Answer, V1Handler, Wire};

/// The draft session capabilities the SDK serves to v1 clients.
pub(super) fn capabilities(session: SessionCapabilities) -> SessionCapabilities {
    session
        .fork(SessionForkCapabilities::new())
        .archive(SessionArchiveCapabilities::new())
        .title(SessionTitleCapabilities::new())
        .status(SessionStatusCapabilities::new())
}

impl<A: Agent> V1Handler<A> {
    /// `session/fork`: validated as `session/new`, then a new session bound to this connection
    /// whose log (what `session/load` replays) is a copy of the original's.
    pub(super) async fn fork(&self, req: ForkSessionRequest, cx: &RequestContext) -> Answer {
        let original = self.entry(req.session_id.as_str())?;
        let Wire::V1(source) = &original.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let directories = req.additional_directories.clone().unwrap_or_default();
        let servers = req.mcp_servers.clone().unwrap_or_default();
        let setup = self.setup(None, &req.cwd, &directories, &servers)?;
        let state = self.agent().fork_session(&original.state, &setup).await?;
        let history = lock(&source.history).clone();
        let entry = self.open(&setup, &req.cwd, directories, state, history, cx);
        let response = ForkSessionResponse::new(entry.id.as_str());
        acp_rpc::result(&with_config!(response, self.config(&entry)))
    }

    /// `session/archive` (`true`) and `session/unarchive`: archiving cancels the session's turn
    /// (v1's `session/close`) and leaves it out of a default `session/list`; both succeed when
    /// already done.
    pub(super) fn set_archived(&self, session_id: &str, archived: bool) -> Answer {
        let entry = self.entry(session_id)?;
        if archived {
            if let Wire::V1(wire) = &entry.wire {
                lock(&wire.session).cancel();
            }
            entry.archived.store(true, Ordering::Relaxed);
            acp_rpc::result(&ArchiveSessionResponse::new())
        } else {
            entry.archived.store(false, Ordering::Relaxed);
            acp_rpc::result(&UnarchiveSessionResponse::new())
        }
    }

    /// `session/set_title`: any session the agent lists. The title is stored (listed, and
    /// logged as a `session_info_update` that `session/load` replays) before the answer, and
    /// sent to the session's connection.
    pub(super) async fn set_title(&self, req: SetSessionTitleRequest) -> Answer {
        let entry = self.entry(req.session_id.as_str())?;
        let Wire::V1(wire) = &entry.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let update = SessionUpdate::SessionInfoUpdate(Box::new(
            SessionInfoUpdate::new().title(req.title.clone()),
        ));
        *lock(&wire.title) = Some(req.title.clone());
        lock(&wire.history).push(update.clone());
        let session = lock(&wire.session).clone();
        // Stored whatever becomes of the notification (that connection may be gone).
        if let Err(err) = session.send(update).await {
            tracing::debug!(session = %entry.id, %err, "the new title was stored, not sent");
        }
        acp_rpc::result(&SetSessionTitleResponse::new(req.title))
    }

    /// `session/status`: a session the SDK holds is in memory (`open`). No side effect: the
    /// lookup does not count as a use.
    pub(super) fn status(&self, req: SessionStatusRequest) -> Answer {
        let entry = self.shared.v1.peek(req.session_id.as_str())?;
        if !matches!(entry.wire, Wire::V1(_)) {
            return Err(not_found(req.session_id.as_str()));
        }
        acp_rpc::result(&SessionStatusResponse::new(SessionStatus::Open))
    }
}
