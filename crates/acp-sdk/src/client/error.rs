//! [`ClientError`]: what a client call fails with.

use acp_rpc::RpcError;

/// Why a client call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The agent could not be started.
    #[error("cannot start the agent: {0}")]
    Spawn(String),
    /// The agent answered with an error (its `data`, when it sent one, in brackets: it often
    /// says what the message does not, "OPENAI_API_KEY is not set").
    #[error("the agent answered {}: {}{}", .0.code, .0.message, detail(.0.data.as_ref()))]
    Rpc(RpcError),
    /// The connection failed: closed, timed out, or an answer that does not decode.
    #[error("{0}")]
    Connection(String),
    /// The agent did not advertise what the call needs; nothing was sent.
    #[error("the agent does not support `{method}` (it did not advertise {capability})")]
    NotAdvertised {
        /// The method not called.
        method: &'static str,
        /// The capability it needs.
        capability: &'static str,
    },
    /// The call is not possible in this state (for example a second v1 prompt while one runs).
    #[error("{0}")]
    Usage(String),
}

/// The most characters of an error's `data` shown in its message.
const DETAIL_CHARS: usize = 300;

/// ` (data)` for an error's `data`: a string as it is, anything else as JSON, cut at
/// [`DETAIL_CHARS`].
fn detail(data: Option<&serde_json::Value>) -> String {
    let text = match data {
        None | Some(serde_json::Value::Null) => return String::new(),
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    let mut cut: String = text.chars().take(DETAIL_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    format!(" ({cut})")
}

impl From<acp_rpc::Error> for ClientError {
    fn from(err: acp_rpc::Error) -> Self {
        match err {
            acp_rpc::Error::Rpc(err) => ClientError::Rpc(err),
            other => ClientError::Connection(other.to_string()),
        }
    }
}

impl From<&acp_rpc::Error> for ClientError {
    fn from(err: &acp_rpc::Error) -> Self {
        match err {
            acp_rpc::Error::Rpc(err) => ClientError::Rpc(err.clone()),
            other => ClientError::Connection(other.to_string()),
        }
    }
}
