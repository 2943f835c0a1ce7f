//! [`ClientError`]: what a client call fails with.

use acp_rpc::RpcError;

/// Why a client call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The agent could not be started.
    #[error("cannot start the agent: {0}")]
    Spawn(String),
    /// The agent answered with an error.
    #[error("the agent answered {}: {}", .0.code, .0.message)]
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
