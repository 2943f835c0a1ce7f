//! The v1 client services, served from the local machine: `fs/read_text_file`,
//! `fs/write_text_file` and `terminal/*`, confined to the session's roots. Each is off unless
//! [`LocalServices`](super::LocalServices) enables it, and what it holds is bounded by its
//! options, not by what the agent asks.

mod beneath;
mod fs;
mod terminals;

pub(crate) use fs::{read_text_file, write_text_file};
pub(crate) use terminals::Terminals;

use acp_rpc::RpcError;

fn refused(what: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "{what} is not enabled by this client (LocalServices)"
    ))
}
