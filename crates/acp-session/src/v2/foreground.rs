//! Foreground activity from `state_update`.

use acp_support::{Patch, UnknownVariant};
use acp_v2::{BackgroundWork, IdleStateUpdateStopReason, StateUpdate};
use serde::Serialize;

/// The session's foreground state.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ForegroundState {
    /// No `state_update` yet.
    #[default]
    NotReported,
    /// Foreground work is running.
    Running,
    /// Foreground work waits for the user (a permission, an elicitation).
    RequiresAction,
    /// No foreground work; a new prompt can be processed.
    Idle,
    /// The agent cannot currently determine foreground activity (the draft `unknown` state):
    /// treated as busy, never idle.
    #[cfg(feature = "unstable")]
    Unconfirmed,
    /// A state this build does not know: treated as busy, never idle.
    Unknown {
        /// The update as received.
        raw: UnknownVariant,
    },
}

/// Foreground state, the last stop reason, and the background work last reported.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Foreground {
    /// The current state.
    #[serde(flatten)]
    pub state: ForegroundState,
    /// The stop reason of the last idle update that reported one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_stop_reason: Option<IdleStateUpdateStopReason>,
    /// The last complete snapshot of background work, when the agent reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<Vec<BackgroundWork>>,
    /// The token usage of the last completed foreground work (a draft: idle `usage`).
    #[cfg(feature = "unstable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_usage: Option<acp_v2::Usage>,
}

impl Foreground {
    /// `true` while foreground work may be running: running, waiting for the user, or a state
    /// this build does not know.
    pub fn is_busy(&self) -> bool {
        matches!(
            self.state,
            ForegroundState::Running
                | ForegroundState::RequiresAction
                | ForegroundState::Unknown { .. }
        ) || self.is_unconfirmed()
    }

    /// No work runs any more (a copy of a session whose turn is not the copy's): a busy state
    /// becomes idle, the last stop reason stays.
    pub(crate) fn settle(&mut self) {
        if self.is_busy() {
            self.state = ForegroundState::Idle;
        }
    }

    #[cfg(feature = "unstable")]
    fn is_unconfirmed(&self) -> bool {
        self.state == ForegroundState::Unconfirmed
    }

    #[cfg(not(feature = "unstable"))]
    fn is_unconfirmed(&self) -> bool {
        false
    }

    pub(crate) fn apply(&mut self, update: StateUpdate) {
        let background = match update {
            StateUpdate::Running(running) => {
                self.state = ForegroundState::Running;
                running.background
            }
            StateUpdate::RequiresAction(waiting) => {
                self.state = ForegroundState::RequiresAction;
                waiting.background
            }
            StateUpdate::Idle(idle) => {
                self.state = ForegroundState::Idle;
                // Omitted and `null` both mean "not reported": the last report stays.
                #[cfg(feature = "unstable")]
                if let Patch::Value(usage) = idle.usage {
                    self.last_usage = Some(usage);
                }
                if idle.stop_reason != IdleStateUpdateStopReason::None {
                    self.last_stop_reason = Some(idle.stop_reason);
                }
                idle.background
            }
            #[cfg(feature = "unstable")]
            StateUpdate::Unknown(unknown) => {
                self.state = ForegroundState::Unconfirmed;
                unknown.background
            }
            StateUpdate::Other(raw) => {
                self.state = ForegroundState::Unknown { raw };
                Patch::Absent
            }
            // A state this build does not fold (a draft without this crate's `unstable`
            // feature, or one a newer build adds): busy, kept whole, like an unknown one.
            other => {
                if let Some(raw) = crate::meta::kept_whole("state", &other) {
                    self.state = ForegroundState::Unknown { raw };
                }
                Patch::Absent
            }
        };
        // Omitted and `null` both mean "not reported", not "nothing running".
        if let Patch::Value(work) = background {
            self.background = Some(work);
        }
    }
}
