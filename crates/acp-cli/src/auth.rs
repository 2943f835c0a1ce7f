//! Logging in to an agent (`--auth METHOD`, `/auth METHOD`): bounded in time, with the
//! agent's own words when it refuses, and the methods it offers, variables included, when a
//! session needs a login.

use std::time::Duration;

use acp_sdk::client::ClientError;
use acp_sdk::Client;

use crate::CliError;

/// How long `authenticate` may take: a browser flow the user never finishes must not hang
/// the CLI (docs/limits.md).
pub const AUTH_TIMEOUT: Duration = Duration::from_secs(120);

/// The JSON-RPC code agents answer `session/new` with when a login is needed.
const AUTH_REQUIRED: i32 = -32000;

/// The exit code of a command that stopped because the agent wants a login nobody gave.
pub const AUTH_REQUIRED_EXIT: i32 = 6;

/// Logs in with `method`, within [`AUTH_TIMEOUT`].
pub async fn login(client: &Client, method: &str) -> Result<(), CliError> {
    match tokio::time::timeout(AUTH_TIMEOUT, client.authenticate(method)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(err)) => Err(CliError::Agent(format!("authenticate `{method}`: {err}"))),
        Err(_) => Err(CliError::Agent(format!(
            "authenticate `{method}`: no answer within {} s",
            AUTH_TIMEOUT.as_secs()
        ))),
    }
}

/// `true` when `err` is the agent saying a login is needed.
pub fn is_auth_required(err: &ClientError) -> bool {
    matches!(err, ClientError::Rpc(rpc) if rpc.code == AUTH_REQUIRED)
}

/// The methods the agent offers, one per line: `  ID: NAME (needs VAR, VAR)`.
pub fn methods(client: &Client) -> Vec<String> {
    client
        .agent()
        .auth_methods
        .iter()
        .map(|method| {
            let mut line = format!("  {}: {}", method.id, method.name);
            if !method.env_vars.is_empty() {
                line.push_str(&format!(" (needs {})", method.env_vars.join(", ")));
            }
            line
        })
        .collect()
}

/// The error for a session the agent refused until a login: what it said, and how to log in.
pub fn required(client: &Client, err: &ClientError, flag: &str) -> CliError {
    let methods = methods(client);
    let offer = if methods.is_empty() {
        "the agent offers no method".to_owned()
    } else {
        format!("log in with {flag} METHOD, one of:\n{}", methods.join("\n"))
    };
    CliError::AuthRequired(format!("session/new: {err}; {offer}"))
}
