//! [`LimitExceeded`]: a bound of a served agent that a request hit, as the client sees it.

use acp_rpc::{codes, RpcError};

/// A bound of the served agent that a request hit. Each names its option of
/// [`ServerOptions`](super::ServerOptions) and reaches the client as a JSON-RPC error whose
/// `data` says which limit, its value and what was asked: `{"limit": "maxPromptBytes", "max":
/// 16777216, "actual": 31457280}` (see `docs/limits.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitExceeded {
    /// A prompt larger than `ServerOptions::max_prompt_bytes` (encoded): `-32602`.
    #[error("the prompt is {actual} bytes, more than this agent takes ({max})")]
    PromptBytes {
        /// The limit.
        max: usize,
        /// The prompt's size.
        actual: usize,
    },
    /// A prompt for a session whose history is full, with
    /// `HistoryPolicy::Refuse`: `-32603`.
    #[error("this session's history is full ({actual} of {max} bytes): start a new session")]
    HistoryBytes {
        /// The limit.
        max: usize,
        /// What the history holds.
        actual: usize,
    },
    /// A new session for a principal that has `ServerOptions::max_sessions_per_principal`
    /// already: `-32603`.
    #[error("you have {actual} sessions, the most this agent keeps ({max}): delete some first")]
    SessionsPerPrincipal {
        /// The limit.
        max: usize,
        /// The principal's sessions.
        actual: usize,
    },
}

impl LimitExceeded {
    /// The limit's name in the error's `data` (the option's name, camelCase).
    pub fn name(&self) -> &'static str {
        match self {
            LimitExceeded::PromptBytes { .. } => "maxPromptBytes",
            LimitExceeded::HistoryBytes { .. } => "historyBytes",
            LimitExceeded::SessionsPerPrincipal { .. } => "maxSessionsPerPrincipal",
        }
    }

    fn numbers(&self) -> (usize, usize) {
        match *self {
            LimitExceeded::PromptBytes { max, actual }
            | LimitExceeded::HistoryBytes { max, actual }
            | LimitExceeded::SessionsPerPrincipal { max, actual } => (max, actual),
        }
    }
}

impl From<LimitExceeded> for RpcError {
    fn from(limit: LimitExceeded) -> Self {
        let code = match limit {
            LimitExceeded::PromptBytes { .. } => codes::INVALID_PARAMS,
            _ => codes::INTERNAL_ERROR,
        };
        let (max, actual) = limit.numbers();
        RpcError::new(code, format!("Limit exceeded: {limit}")).with_data(serde_json::json!({
            "limit": limit.name(),
            "max": max,
            "actual": actual,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_names_itself_in_the_error_data() {
        let error = RpcError::from(LimitExceeded::PromptBytes {
            max: 10,
            actual: 12,
        });
        assert_eq!(error.code, codes::INVALID_PARAMS);
        assert_eq!(
            error.data,
            Some(serde_json::json!({"limit": "maxPromptBytes", "max": 10, "actual": 12}))
        );
        let error = RpcError::from(LimitExceeded::SessionsPerPrincipal { max: 2, actual: 2 });
        assert_eq!(error.code, codes::INTERNAL_ERROR);
    }
}
