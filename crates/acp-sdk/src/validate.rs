//! Validation of session environment parameters, version-neutral: absolute paths and MCP server
//! configurations (accepted and checked, never connected).

use std::path::Path;

use crate::agent::McpServer;

/// What is wrong with a session parameter; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Invalid {
    /// A path that must be absolute is not.
    #[error("`{field}` must be an absolute path, got `{value}`")]
    NotAbsolute {
        /// The field, e.g. `cwd` or `additionalDirectories[1]`.
        field: String,
        /// The value received.
        value: String,
    },
    /// A path holding NUL or another control character: no file system can name it faithfully.
    #[error("`{field}` must not contain control characters, got {value:?}")]
    ControlCharacter {
        /// The field, e.g. `cwd`.
        field: String,
        /// The value received.
        value: String,
    },
    /// An MCP server without a name.
    #[error("`{field}.name` must not be empty")]
    EmptyName {
        /// The server's field, e.g. `mcpServers[0]`.
        field: String,
    },
    /// A stdio MCP server whose command is not an absolute path.
    #[error("`{field}.command` (MCP server `{name}`) must be an absolute path, got `{value}`")]
    RelativeCommand {
        /// The server's field.
        field: String,
        /// The server's name.
        name: String,
        /// The command received.
        value: String,
    },
    /// An HTTP MCP server whose URL is not an `http(s)://host...` URL.
    #[error("`{field}.url` (MCP server `{name}`) must be an http:// or https:// URL with a host, got `{value}`")]
    BadUrl {
        /// The server's field.
        field: String,
        /// The server's name.
        name: String,
        /// The URL received.
        value: String,
    },
    /// An MCP transport this agent does not support.
    #[error(
        "`{field}.type`: unsupported MCP server transport `{transport}` (supported: stdio, http)"
    )]
    UnsupportedTransport {
        /// The server's field.
        field: String,
        /// The transport's tag.
        transport: String,
    },
    /// A prompt without content blocks.
    #[error("`prompt` must not be empty")]
    EmptyPrompt,
    /// A prompt content block this agent does not support.
    #[error("`prompt[{index}]`: unsupported content block type `{kind}`")]
    UnsupportedBlock {
        /// The block's index.
        index: usize,
        /// Its type tag.
        kind: String,
    },
    /// Base64 data that does not decode.
    #[error("`{field}` is not valid base64: {reason}")]
    BadBase64 {
        /// The field, e.g. `prompt[1].data`.
        field: String,
        /// What the decoder reported.
        reason: String,
    },
}

/// Checks that `value` is an absolute path without control characters (a NUL would cut the path
/// short at the operating system).
pub fn absolute(field: &str, value: &str) -> Result<(), Invalid> {
    if value.chars().any(char::is_control) {
        return Err(Invalid::ControlCharacter {
            field: field.to_owned(),
            value: value.to_owned(),
        });
    }
    if Path::new(value).is_absolute() {
        Ok(())
    } else {
        Err(Invalid::NotAbsolute {
            field: field.to_owned(),
            value: value.to_owned(),
        })
    }
}

/// Checks every entry of `additionalDirectories`.
pub fn additional_directories<'a>(paths: impl IntoIterator<Item = &'a str>) -> Result<(), Invalid> {
    paths
        .into_iter()
        .enumerate()
        .try_for_each(|(i, path)| absolute(&format!("additionalDirectories[{i}]"), path))
}

/// Checks a stdio MCP server: a name and an absolute command path.
pub fn mcp_stdio(index: usize, name: &str, command: &str) -> Result<(), Invalid> {
    let field = format!("mcpServers[{index}]");
    named(&field, name)?;
    if Path::new(command).is_absolute() {
        Ok(())
    } else {
        Err(Invalid::RelativeCommand {
            field,
            name: name.to_owned(),
            value: command.to_owned(),
        })
    }
}

/// Checks an HTTP MCP server: a name and an `http://` or `https://` URL with a host.
pub fn mcp_http(index: usize, name: &str, url: &str) -> Result<(), Invalid> {
    let field = format!("mcpServers[{index}]");
    named(&field, name)?;
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    let host = rest.map(|rest| rest.split(['/', '?', '#']).next().unwrap_or_default());
    match host {
        Some(host) if !host.is_empty() && !url.chars().any(char::is_whitespace) => Ok(()),
        _ => Err(Invalid::BadUrl {
            field,
            name: name.to_owned(),
            value: url.to_owned(),
        }),
    }
}

/// An MCP transport this agent does not know.
pub fn unsupported_transport(index: usize, transport: &str) -> Invalid {
    Invalid::UnsupportedTransport {
        field: format!("mcpServers[{index}]"),
        transport: transport.to_owned(),
    }
}

/// The decoded size of base64 `data` in field `field` (e.g. `prompt[1].data`).
pub fn base64_len(field: &str, data: &str) -> Result<usize, Invalid> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map(|bytes| bytes.len())
        .map_err(|err| Invalid::BadBase64 {
            field: field.to_owned(),
            reason: err.to_string(),
        })
}

fn named(field: &str, name: &str) -> Result<(), Invalid> {
    if name.trim().is_empty() {
        return Err(Invalid::EmptyName {
            field: field.to_owned(),
        });
    }
    Ok(())
}

/// Checks `cwd`, the additional directories and the MCP servers (each already in neutral form,
/// or the name of a transport this build does not serve), `http` saying whether HTTP servers are
/// accepted.
fn environment<'a>(
    cwd: &str,
    directories: impl IntoIterator<Item = &'a str>,
    mcp_servers: impl IntoIterator<Item = Result<McpServer, String>>,
    http: bool,
) -> Result<Vec<McpServer>, Invalid> {
    absolute("cwd", cwd)?;
    additional_directories(directories)?;
    let mut servers = Vec::new();
    for (index, server) in mcp_servers.into_iter().enumerate() {
        let server = server.map_err(|transport| unsupported_transport(index, &transport))?;
        match &server {
            McpServer::Stdio { name, command, .. } => mcp_stdio(index, name, command)?,
            McpServer::Http { name, url, .. } if http => mcp_http(index, name, url)?,
            McpServer::Http { .. } => return Err(unsupported_transport(index, "http")),
        }
        servers.push(server);
    }
    Ok(servers)
}

/// Checks a v2 session environment (`session/new`, `session/resume`): `cwd`,
/// `additionalDirectories` and `mcpServers` (stdio and, when `http` is accepted, HTTP), and
/// returns the servers in neutral form.
pub fn environment_v2(
    cwd: &str,
    directories: &[acp_v2::AbsolutePath],
    mcp_servers: &[acp_v2::McpServer],
    http: bool,
) -> Result<Vec<McpServer>, Invalid> {
    let servers = mcp_servers.iter().map(|server| match server {
        acp_v2::McpServer::Stdio(stdio) => Ok(McpServer::Stdio {
            name: stdio.name.clone(),
            command: stdio.command.as_str().to_owned(),
            args: stdio.args.clone().unwrap_or_default(),
            env: stdio
                .env
                .iter()
                .flatten()
                .map(|v| (v.name.clone(), v.value.clone()))
                .collect(),
        }),
        acp_v2::McpServer::Http(served) => Ok(McpServer::Http {
            name: served.name.clone(),
            url: served.url.clone(),
            headers: served
                .headers
                .iter()
                .flatten()
                .map(|h| (h.name.clone(), h.value.clone()))
                .collect(),
        }),
        other => Err(other.tag().unwrap_or("unknown").to_owned()),
    });
    let directories = directories.iter().map(acp_v2::AbsolutePath::as_str);
    environment(cwd, directories, servers, http)
}

/// Checks a v1 session environment (`session/new`, `session/load`, `session/resume`), as
/// [`environment_v2`] does; SSE servers and draft transports are not supported.
pub fn environment_v1(
    cwd: &str,
    directories: &[String],
    mcp_servers: &[acp_v1::McpServer],
    http: bool,
) -> Result<Vec<McpServer>, Invalid> {
    let servers = mcp_servers.iter().map(|server| match server {
        acp_v1::McpServer::Stdio(stdio) => Ok(McpServer::Stdio {
            name: stdio.name.clone(),
            command: stdio.command.clone(),
            args: stdio.args.clone(),
            env: stdio
                .env
                .iter()
                .map(|v| (v.name.clone(), v.value.clone()))
                .collect(),
        }),
        acp_v1::McpServer::Http(served) => Ok(McpServer::Http {
            name: served.name.clone(),
            url: served.url.clone(),
            headers: served
                .headers
                .iter()
                .map(|h| (h.name.clone(), h.value.clone()))
                .collect(),
        }),
        other => Err(other.tag().unwrap_or("unknown").to_owned()),
    });
    environment(cwd, directories.iter().map(String::as_str), servers, http)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_be_absolute() {
        assert!(absolute("cwd", "/home/me").is_ok());
        assert_eq!(
            absolute("cwd", "project").map_err(|e| e.to_string()),
            Err("`cwd` must be an absolute path, got `project`".into())
        );
        let err = additional_directories(["/a", "b"]).expect_err("relative");
        assert!(err.to_string().starts_with("`additionalDirectories[1]`"));
    }

    #[test]
    fn mcp_servers_are_checked() {
        assert!(mcp_stdio(0, "fs", "/usr/bin/mcp-fs").is_ok());
        assert!(mcp_stdio(0, "fs", "npx").is_err());
        assert!(mcp_stdio(0, " ", "/usr/bin/mcp-fs").is_err());
        assert!(mcp_http(1, "web", "https://mcp.example.com/mcp").is_ok());
        assert!(mcp_http(1, "web", "HTTP://localhost:8080").is_ok());
        for bad in ["ftp://x", "https://", "mcp.example.com", "https://a b"] {
            assert!(mcp_http(1, "web", bad).is_err(), "{bad}");
        }
    }
}
