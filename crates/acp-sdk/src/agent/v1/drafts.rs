//! The protocol's draft session methods (the `unstable` feature) for v1 clients, served for
//! every agent and advertised only under the feature, as for v2: `session/fork` (a new session
//! with a copy of the log `session/load` replays, the agent's state from
//! [`Agent::fork_session`]), `session/archive` and `session/unarchive` (an archived session's
//! turn is cancelled, as `session/close` does in v1, and it is left out of a default
//! `session/list`), `session/set_title` (logged, listed and sent to the session's connection)
//! and `session/status` (with no side effect).

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
        let original = self
            .in_use_or_restored(req.session_id.as_str(), cx.connection())
            .await?;
        let Wire::V1(source) = &original.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let directories = req.additional_directories.clone().unwrap_or_default();
        let servers = req.mcp_servers.clone().unwrap_or_default();
        let setup = self.setup(None, &req.cwd, &directories, &servers)?;
        self.shared.admit(cx.connection().principal()).await?;
        let state = self.agent().fork_session(&original.state, &setup).await?;
        let history = lock(&source.history).clone();
        let entry = self
            .open(&setup, &req.cwd, directories, state, history, cx)
            .await?;
        let response = ForkSessionResponse::new(entry.id.as_str());
        acp_rpc::result(&with_config!(response, self.config(&entry)))
    }

    /// `session/archive` (`true`) and `session/unarchive`: archiving cancels the session's turn
    /// (v1's `session/close`) and leaves it out of a default `session/list`; both succeed when
    /// already done. A session the store keeps but memory does not is archived in the store
    /// alone.
    pub(super) async fn set_archived(
        &self,
        session_id: &str,
        archived: bool,
        cx: &RequestContext,
    ) -> Answer {
        let principal = cx.connection().principal();
        let entry = self
            .shared
            .edit_record(1, session_id, principal, move |record| {
                record.archived = archived
            })
            .await?;
        if archived {
            if let Some(Wire::V1(wire)) = entry.as_ref().map(|entry| &entry.wire) {
                lock(&wire.session).cancel();
            }
            acp_rpc::result(&ArchiveSessionResponse::new())
        } else {
            acp_rpc::result(&UnarchiveSessionResponse::new())
        }
    }

    /// `session/set_title`: any session of the principal (one only kept is restored first). The
    /// title is stored (listed, and logged as a `session_info_update` that `session/load`
    /// replays) before the answer, and sent to the session's connection.
    pub(super) async fn set_title(
        &self,
        req: SetSessionTitleRequest,
        cx: &RequestContext,
    ) -> Answer {
        let entry = self
            .in_use_or_restored(req.session_id.as_str(), cx.connection())
            .await?;
        let Wire::V1(wire) = &entry.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let update = SessionUpdate::SessionInfoUpdate(Box::new(
            SessionInfoUpdate::new().title(req.title.clone()),
        ));
        lock(&wire.history).push(update.clone());
        entry.journal.commit().await;
        let session = lock(&wire.session).clone();
        // Stored whatever becomes of the notification (that connection may be gone).
        if let Err(err) = session.send(update).await {
            tracing::debug!(session = %entry.id, %err, "the new title was stored, not sent");
        }
        acp_rpc::result(&SetSessionTitleResponse::new(req.title))
    }

    /// `session/status`: a session of the principal, in memory or kept, is `open`. No side
    /// effect: the lookup does not count as a use.
    pub(super) async fn status(&self, req: SessionStatusRequest, cx: &RequestContext) -> Answer {
        let principal = cx.connection().principal();
        let id = req.session_id.as_str();
        match self.shared.v1.peek(id, principal) {
            Some(entry) if matches!(entry.wire, Wire::V1(_)) => {}
            Some(_) => return Err(not_found(id)),
            None => {
                self.shared.kept(1, id, principal).await?;
            }
        }
        acp_rpc::result(&SessionStatusResponse::new(SessionStatus::Open))
    }
}
