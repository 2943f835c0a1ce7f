//! [`Permission`]: the answer to a permission request, in both protocol versions.

/// The answer to a permission request, as the agent may act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// The user picked the option with this id.
    Selected(String),
    /// The request was cancelled (the turn was cancelled, or the user dismissed it).
    Cancelled,
    /// An outcome this build does not understand: never to be taken as approval.
    Unrecognised,
}
