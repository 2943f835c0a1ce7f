//! The protocol's draft session methods (the `unstable` feature), served by the SDK for every
//! agent and advertised only under the feature: `session/fork` (a new session with a copy of
//! the history, the agent's state from [`Agent::fork_session`]), `session/archive` and
//! `session/unarchive` (an archived session is closed and left out of a default
//! `session/list`), `session/set_title` (stored in the history, sent to the session's
//! connection) and `session/status` (a snapshot, with no side effect).

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
        let original = self
            .in_use_or_restored(req.session_id.as_str(), cx.connection())
            .await?;
        let Wire::V2(source) = &original.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let mut new = NewSessionRequest::new(req.cwd.clone());
        new.additional_directories = req.additional_directories.clone();
        new.mcp_servers = req.mcp_servers.clone();
        new.system_prompt = req.system_prompt.clone();
        let setup = self.setup(&new)?;
        self.shared.admit(cx.connection().principal()).await?;
        let state = self.agent().fork_session(&original.state, &setup).await?;
        let session = source.fork(
            cx.connection().clone(),
            setup.session_id.as_str(),
            BusyPolicy::Queue,
        );
        let entry = self
            .register(
                &setup,
                req.cwd.as_str(),
                state,
                session,
                cx.connection().principal(),
            )
            .await?;
        // The fork's history starts as the copy: kept whole in the store, as its first entries.
        if let Wire::V2(forked) = &entry.wire {
            entry.journal.compact(super::replay_entries(forked)).await;
        }
        let response = opened!(self, entry, ForkSessionResponse::new(entry.id.as_str()));
        acp_rpc::result(&response)
    }

    /// `session/archive` (`true`) and `session/unarchive`: archiving closes the session as
    /// `session/close` would (its work cancelled, prompts refused until it is resumed) and
    /// leaves it out of a default `session/list`; both succeed when already done. A session the
    /// store keeps but memory does not is archived in the store alone.
    pub(super) async fn set_archived(
        &self,
        session_id: &str,
        archived: bool,
        cx: &RequestContext,
    ) -> Answer {
        let principal = cx.connection().principal();
        let entry = self
            .shared
            .edit_record(2, session_id, principal, move |record| {
                record.archived = archived
            })
            .await?;
        if archived {
            if let Some(Wire::V2(session)) = entry.as_ref().map(|entry| &entry.wire) {
                session.close().await;
            }
            acp_rpc::result(&ArchiveSessionResponse::new())
        } else {
            acp_rpc::result(&UnarchiveSessionResponse::new())
        }
    }

    /// `session/set_title`: any session of the principal, active here or not (one only kept is
    /// restored first). The title is stored (the history folds a `session_info_update`, which
    /// `session/list` and a resume show) before the answer, and sent to the session's
    /// connection.
    pub(super) async fn set_title(
        &self,
        req: SetSessionTitleRequest,
        cx: &RequestContext,
    ) -> Answer {
        let entry = self
            .in_use_or_restored(req.session_id.as_str(), cx.connection())
            .await?;
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
        entry.journal.commit().await;
        acp_rpc::result(&SetSessionTitleResponse::new(req.title))
    }

    /// `session/status`: a session the SDK holds in memory is `open`, with its current
    /// foreground state; one only the store keeps is `open` and idle (it resumes on demand).
    /// No side effect: the lookup does not count as a use, and nothing is attached to this
    /// connection.
    pub(super) async fn status(&self, req: SessionStatusRequest, cx: &RequestContext) -> Answer {
        let principal = cx.connection().principal();
        let id = req.session_id.as_str();
        let response = match self.shared.v2.peek(id, principal) {
            Some(entry) => {
                let Wire::V2(session) = &entry.wire else {
                    return Err(not_found(id));
                };
                SessionStatusResponse::new(SessionStatus::Open).state(session.current_state())
            }
            None => {
                self.shared.kept(2, id, principal).await?;
                SessionStatusResponse::new(SessionStatus::Open)
            }
        };
        acp_rpc::result(&response)
    }
}
