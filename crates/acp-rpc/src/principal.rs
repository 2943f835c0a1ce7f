//! [`Principal`]: who is on the other end of a connection.

use std::fmt;
use std::sync::Arc;

/// Who is on the other end of a connection, as its transport established it: over stdio the one
/// local user ([`Principal::local`]); over a remote transport, the identity its credentials map
/// to. What a principal creates (a session) belongs to it; another principal cannot see it.
///
/// ```
/// use acp_rpc::Principal;
/// assert_eq!(Principal::local().as_str(), "local");
/// assert_ne!(Principal::new("alice"), Principal::new("bob"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Principal(Arc<str>);

impl Principal {
    /// The principal named `name` (names are compared exactly).
    pub fn new(name: impl AsRef<str>) -> Self {
        Self(Arc::from(name.as_ref()))
    }

    /// The one local user of a stdio connection.
    pub fn local() -> Self {
        Self::new("local")
    }

    /// Its name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Principal {
    fn default() -> Self {
        Self::local()
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Principal({:?})", self.as_str())
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
