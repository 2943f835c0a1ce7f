//! The protocol's draft session methods (the `unstable` feature), served by the SDK for every
//! agent and advertised only under the feature: `session/fork` (a new session with a copy of
//! the history, the agent's state from [`Agent::fork_session`]), `session/archive` and
//! `session/unarchive` (an archived session is closed and left out of a default
//! `session/list`), `session/set_title` (stored in the history, sent to the session's
//! connection) and `session/status` (a snapshot, with no side effect).

use std::sync::atomic::Ordering;

use acp_rpc::RequestContext;
use acp_session::v2::agent::BusyPolicy;
use acp_v2::{
    ArchiveSessionResponse, ForkSessionRequest, ForkSessionResponse, NewSessionRequest,
    SessionArchiveCapabilities, SessionCapabilities, SessionForkCapabilities, SessionInfoUpdate,
    SessionStatus, SessionStatusCapabilities, SessionStatusRequest, SessionStatusResponse,
    SessionTitleCapabilities, SessionUpdate, SetSessionTitleRequest, SetSessionTitleResponse,
    UnarchiveSessionResponse,
};

use super::{not_found, Agent, Answer, V2Handler, Wire};

/// The draft session capabilities the SDK serves.
pub(super) fn capabilities(session: SessionCapabilities) -> SessionCapabilities {
    session
        .fork(SessionForkCapabilities::new())
        .archive(SessionArchiveCapabilities::new())
        .title(SessionTitleCapabilities::new())
        .status(SessionStatusCapabilities::new())
}

impl<A: Agent> V2Handler<A> {
    /// `session/fork`: validated as `session/new`, then a new session whose history is a copy of
    /// the original's (any session the agent lists can be forked), bound to this connection.
    pub(super) async fn fork(&self, req: ForkSessionRequest, cx: &RequestContext) -> Answer {
        let original = self.shared.v2.get(req.session_id.as_str())?;
        let Wire::V2(source) = &original.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let mut new = NewSessionRequest::new(req.cwd.clone());
        new.additional_directories = req.additional_directories.clone();
        new.mcp_servers = req.mcp_servers.clone();
        new.system_prompt = req.system_prompt.clone();
        let setup = self.setup(&new)?;
        let state = self.agent().fork_session(&original.state, &setup).await?;
        let session = source.fork(
            cx.connection().clone(),
            setup.session_id.as_str(),
            BusyPolicy::Queue,
        );
        let entry = self.register(&setup, req.cwd.as_str(), state, session);
        let response = opened!(self, entry, ForkSessionResponse::new(entry.id.as_str()));
        acp_rpc::result(&response)
    }

    /// `session/archive` (`true`) and `session/unarchive`: archiving closes the session as
    /// `session/close` would (its work cancelled, prompts refused until it is resumed) and
    /// leaves it out of a default `session/list`; both succeed when already done.
    pub(super) async fn set_archived(&self, session_id: &str, archived: bool) -> Answer {
        let entry = self.shared.v2.get(session_id)?;
        if archived {
            if let Wire::V2(session) = &entry.wire {
                session.close().await;
            }
            entry.archived.store(true, Ordering::Relaxed);
            acp_rpc::result(&ArchiveSessionResponse::new())
        } else {
            entry.archived.store(false, Ordering::Relaxed);
            acp_rpc::result(&UnarchiveSessionResponse::new())
        }
    }

    /// `session/set_title`: any session the agent lists, active here or not. The title is
    /// stored (the history folds a `session_info_update`, which `session/list` and a resume
    /// show) before the answer, and sent to the session's connection.
    pub(super) async fn set_title(&self, req: SetSessionTitleRequest) -> Answer {
        let entry = self.shared.v2.get(req.session_id.as_str())?;
        let Wire::V2(session) = &entry.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let update = SessionInfoUpdate::new().title(req.title.clone());
        // Stored whatever becomes of the notification (that connection may be gone).
        if let Err(err) = session
            .send(SessionUpdate::SessionInfoUpdate(Box::new(update)))
            .await
        {
            tracing::debug!(session = %entry.id, %err, "the new title was stored, not sent");
        }
        acp_rpc::result(&SetSessionTitleResponse::new(req.title))
    }

    /// `session/status`: a session the SDK holds is in memory (`open`), with its current
    /// foreground state. No side effect: the lookup does not count as a use, and nothing is
    /// attached to this connection.
    pub(super) fn status(&self, req: SessionStatusRequest) -> Answer {
        let entry = self.shared.v2.peek(req.session_id.as_str())?;
        let Wire::V2(session) = &entry.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let response =
            SessionStatusResponse::new(SessionStatus::Open).state(session.current_state());
        acp_rpc::result(&response)
    }
}
