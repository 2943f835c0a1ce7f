//! The v1 client services, served from the local machine: `fs/read_text_file`,
//! `fs/write_text_file` and `terminal/*`, confined to the session's roots.
//!
//! Confinement: a path must be absolute; it is resolved with every symlink followed (the file
//! for a read, the parent directory for a write) and must then lie under one of the roots, also
//! resolved. `..`, absolute paths elsewhere and symlinks out of the roots are refused `-32602`.
//! Each service is off unless [`LocalServices`] enables it; output is bounded by its limit.
//!
//! Terminals: locking of the map is for lookups only; each terminal's output buffer has its own
//! mutex, written by its reader tasks and read by `terminal/output`, never held across an await.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use acp_rpc::{codes, RpcError};
use tokio::io::AsyncReadExt;
use tokio::process::Child;
use tokio::sync::watch;

use super::options::LocalServices;
use super::session::lock;

fn refused(what: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "{what} is not enabled by this client (LocalServices)"
    ))
}

fn resolved_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .collect()
}

/// `path` resolved and checked to lie inside `roots`. For a write the file may not exist yet:
/// its parent is resolved and the name checked to be a plain name.
pub(crate) fn confine(path: &str, roots: &[PathBuf], for_write: bool) -> Result<PathBuf, RpcError> {
    let candidate = Path::new(path);
    if !candidate.is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "`path` must be absolute, got `{path}`"
        )));
    }
    let resolved = match std::fs::canonicalize(candidate) {
        Ok(resolved) => resolved,
        Err(_) if for_write => {
            let (Some(parent), Some(name)) = (candidate.parent(), candidate.file_name()) else {
                return Err(RpcError::invalid_params(format!(
                    "`path` `{path}` has no file name"
                )));
            };
            let parent = std::fs::canonicalize(parent).map_err(|err| {
                RpcError::invalid_params(format!(
                    "`path`: cannot resolve `{}`: {err}",
                    parent.display()
                ))
            })?;
            parent.join(name)
        }
        Err(err) => {
            return Err(
                RpcError::new(codes::RESOURCE_NOT_FOUND, format!("`{path}`: {err}"))
                    .with_data(serde_json::json!({ "uri": format!("file://{path}") })),
            )
        }
    };
    if resolved_roots(roots)
        .iter()
        .any(|root| resolved.starts_with(root))
    {
        Ok(resolved)
    } else {
        Err(RpcError::invalid_params(format!(
            "`path` `{path}` is outside the session's directories"
        )))
    }
}

/// `fs/read_text_file`: from 1-based `line`, at most `limit` lines, at most the output limit.
pub(crate) async fn read_text_file(
    services: &LocalServices,
    roots: &[PathBuf],
    request: &acp_v1::ReadTextFileRequest,
) -> Result<acp_v1::ReadTextFileResponse, RpcError> {
    if !services.read_files {
        return Err(refused("`fs/read_text_file`"));
    }
    let path = confine(&request.path, roots, false)?;
    let size = tokio::fs::metadata(&path)
        .await
        .map_err(RpcError::internal_error)?
        .len();
    let limit = services.output_limit as u64;
    if size > limit && request.line.as_option().is_none() && request.limit.as_option().is_none() {
        return Err(RpcError::invalid_params(format!(
            "`{}` is {size} bytes, over this client's limit of {limit}: read it by `line` and `limit`",
            request.path
        )));
    }
    let text = tokio::fs::read_to_string(&path)
        .await
        .map_err(|err| RpcError::invalid_params(format!("`{}`: {err}", request.path)))?;
    let skip = request
        .line
        .as_option()
        .map_or(0, |line| (*line as usize).saturating_sub(1));
    let take = request
        .limit
        .as_option()
        .map_or(usize::MAX, |n| *n as usize);
    let mut content = String::new();
    for line in text.split_inclusive('\n').skip(skip).take(take) {
        if content.len() + line.len() > services.output_limit {
            return Err(RpcError::invalid_params(format!(
                "the lines asked for are over this client's limit of {limit} bytes"
            )));
        }
        content.push_str(line);
    }
    Ok(acp_v1::ReadTextFileResponse::new(content))
}

/// `fs/write_text_file`.
pub(crate) async fn write_text_file(
    services: &LocalServices,
    roots: &[PathBuf],
    request: &acp_v1::WriteTextFileRequest,
) -> Result<acp_v1::WriteTextFileResponse, RpcError> {
    if !services.write_files {
        return Err(refused("`fs/write_text_file`"));
    }
    let path = confine(&request.path, roots, true)?;
    tokio::fs::write(&path, request.content.as_bytes())
        .await
        .map_err(|err| RpcError::invalid_params(format!("`{}`: {err}", request.path)))?;
    Ok(acp_v1::WriteTextFileResponse::new())
}

/// A command's output, keeping the last `limit` bytes.
#[derive(Debug, Default)]
struct Output {
    bytes: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Output {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > self.limit {
            let excess = self.bytes.len() - self.limit;
            self.bytes.drain(..excess);
            self.truncated = true;
        }
    }

    /// The text, starting at a character boundary when the start was cut.
    fn text(&self) -> String {
        let mut start = 0;
        if self.truncated {
            while start < self.bytes.len() && (self.bytes[start] & 0xC0) == 0x80 {
                start += 1;
            }
        }
        String::from_utf8_lossy(&self.bytes[start..]).into_owned()
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Exit {
    code: Option<u32>,
    signal: Option<String>,
}

struct Terminal {
    output: Arc<Mutex<Output>>,
    exit: watch::Receiver<Option<Exit>>,
    kill: tokio::sync::mpsc::Sender<()>,
}

/// The terminals a session's agent created.
#[derive(Default)]
pub(crate) struct Terminals {
    map: Mutex<HashMap<String, Terminal>>,
    next: AtomicU64,
}

fn exit_of(status: std::process::ExitStatus) -> Exit {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status).map(|s| format!("{s}"));
    #[cfg(not(unix))]
    let signal = None;
    Exit {
        code: status.code().and_then(|c| u32::try_from(c).ok()),
        signal,
    }
}

impl Terminals {
    fn get<T>(&self, id: &str, read: impl FnOnce(&Terminal) -> T) -> Result<T, RpcError> {
        lock(&self.map).get(id).map(read).ok_or_else(|| {
            RpcError::new(
                codes::RESOURCE_NOT_FOUND,
                format!("Terminal not found: `{id}`"),
            )
        })
    }

    /// `terminal/create`: starts the command, stdout and stderr into one bounded output.
    pub(crate) async fn create(
        &self,
        services: &LocalServices,
        roots: &[PathBuf],
        request: &acp_v1::CreateTerminalRequest,
    ) -> Result<acp_v1::CreateTerminalResponse, RpcError> {
        if !services.terminals {
            return Err(refused("`terminal/create`"));
        }
        let cwd = match request.cwd.as_option() {
            Some(cwd) => confine(cwd, roots, false)?,
            None => roots
                .first()
                .cloned()
                .ok_or_else(|| RpcError::invalid_params("`cwd`: the session has no directory"))?,
        };
        let limit = request
            .output_byte_limit
            .as_option()
            .map_or(services.output_limit, |n| {
                (*n).min(services.output_limit as u64) as usize
            });
        let mut command = tokio::process::Command::new(&request.command);
        command
            .args(request.args.iter().flatten())
            .envs(request.env.iter().flatten().map(|v| (&v.name, &v.value)))
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|err| {
            RpcError::invalid_params(format!("`command` `{}`: {err}", request.command))
        })?;
        let output = Arc::new(Mutex::new(Output {
            limit: limit.max(1),
            ..Output::default()
        }));
        let mut readers = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            readers.push(tokio::spawn(pump(stdout, output.clone())));
        }
        if let Some(stderr) = child.stderr.take() {
            readers.push(tokio::spawn(pump(stderr, output.clone())));
        }
        let (exit_tx, exit_rx) = watch::channel(None);
        let (kill_tx, kill_rx) = tokio::sync::mpsc::channel(1);
        tokio::spawn(supervise(child, readers, exit_tx, kill_rx));
        let id = format!("term_{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        lock(&self.map).insert(
            id.clone(),
            Terminal {
                output,
                exit: exit_rx,
                kill: kill_tx,
            },
        );
        Ok(acp_v1::CreateTerminalResponse::new(id))
    }

    /// `terminal/output`.
    pub(crate) fn output(&self, id: &str) -> Result<acp_v1::TerminalOutputResponse, RpcError> {
        self.get(id, |terminal| {
            let output = lock(&terminal.output);
            let mut response = acp_v1::TerminalOutputResponse::new(output.text(), output.truncated);
            if let Some(exit) = terminal.exit.borrow().clone() {
                response = response.exit_status(exit_status(&exit));
            }
            response
        })
    }

    /// `terminal/wait_for_exit`.
    pub(crate) async fn wait(
        &self,
        id: &str,
    ) -> Result<acp_v1::WaitForTerminalExitResponse, RpcError> {
        let mut exit = self.get(id, |terminal| terminal.exit.clone())?;
        let exit = exit
            .wait_for(Option::is_some)
            .await
            .map_err(|_| RpcError::internal_error("the terminal's supervisor ended"))?
            .clone()
            .unwrap_or(Exit {
                code: None,
                signal: None,
            });
        let mut response = acp_v1::WaitForTerminalExitResponse::new();
        if let Some(code) = exit.code {
            response = response.exit_code(code);
        }
        if let Some(signal) = exit.signal {
            response = response.signal(signal);
        }
        Ok(response)
    }

    /// `terminal/kill`: the command is killed; the terminal stays for its output.
    pub(crate) async fn kill(&self, id: &str) -> Result<acp_v1::KillTerminalResponse, RpcError> {
        let kill = self.get(id, |terminal| terminal.kill.clone())?;
        // A full channel means a kill is already on its way.
        let _ = kill.try_send(());
        Ok(acp_v1::KillTerminalResponse::new())
    }

    /// `terminal/release`: killed if running, and forgotten.
    pub(crate) async fn release(
        &self,
        id: &str,
    ) -> Result<acp_v1::ReleaseTerminalResponse, RpcError> {
        let terminal = lock(&self.map).remove(id);
        match terminal {
            Some(terminal) => {
                let _ = terminal.kill.try_send(());
                Ok(acp_v1::ReleaseTerminalResponse::new())
            }
            None => Err(RpcError::new(
                codes::RESOURCE_NOT_FOUND,
                format!("Terminal not found: `{id}`"),
            )),
        }
    }

    /// Kills and forgets every terminal (the session closed).
    pub(crate) async fn release_all(&self) {
        let terminals: Vec<Terminal> = lock(&self.map).drain().map(|(_, t)| t).collect();
        for terminal in terminals {
            let _ = terminal.kill.try_send(());
        }
    }
}

fn exit_status(exit: &Exit) -> acp_v1::TerminalExitStatus {
    let mut status = acp_v1::TerminalExitStatus::new();
    if let Some(code) = exit.code {
        status = status.exit_code(code);
    }
    if let Some(signal) = &exit.signal {
        status = status.signal(signal.as_str());
    }
    status
}

async fn pump(mut stream: impl tokio::io::AsyncRead + Unpin, output: Arc<Mutex<Output>>) {
    let mut buffer = vec![0u8; 8192];
    while let Ok(read) = stream.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        lock(&output).push(&buffer[..read]);
    }
}

/// Waits for the command (or kills it when asked), then for its output, then reports the exit.
async fn supervise(
    mut child: Child,
    readers: Vec<tokio::task::JoinHandle<()>>,
    exit: watch::Sender<Option<Exit>>,
    mut kill: tokio::sync::mpsc::Receiver<()>,
) {
    let status = tokio::select! {
        status = child.wait() => status,
        _ = kill.recv() => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    for reader in readers {
        let _ = reader.await;
    }
    let ended = match status {
        Ok(status) => exit_of(status),
        Err(_) => Exit {
            code: None,
            signal: None,
        },
    };
    let _ = exit.send(Some(ended));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root with `inside.txt`, a sibling directory with `secret.txt`, and symlinks from the
    /// root to both.
    fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical");
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::write(root.join("inside.txt"), "in").expect("write");
        std::fs::write(outside.join("secret.txt"), "secret").expect("write");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link.txt"))
                .expect("symlink");
            std::os::unix::fs::symlink(&outside, root.join("linkdir")).expect("symlink");
            std::os::unix::fs::symlink(root.join("inside.txt"), root.join("ok.txt"))
                .expect("symlink");
        }
        (dir, root, outside)
    }

    fn path(p: &Path) -> String {
        p.to_string_lossy().into_owned()
    }

    #[test]
    fn paths_are_confined_to_the_roots() {
        let (_dir, root, outside) = layout();
        let roots = vec![root.clone()];
        assert!(confine(&path(&root.join("inside.txt")), &roots, false).is_ok());
        assert!(confine(&path(&root.join("sub/../inside.txt")), &roots, false).is_ok());
        let refused = |p: &Path, write: bool| {
            let err = confine(&path(p), &roots, write).expect_err("outside the roots");
            assert_eq!(err.code, -32602, "{}: {err}", p.display());
        };
        refused(&root.join("../outside/secret.txt"), false);
        refused(&outside.join("secret.txt"), false);
        refused(&root.join("../outside/new.txt"), true);
        #[cfg(unix)]
        {
            refused(&root.join("link.txt"), false);
            refused(&root.join("link.txt"), true);
            refused(&root.join("linkdir/secret.txt"), false);
            refused(&root.join("linkdir/new.txt"), true);
            // A symlink that stays inside is fine.
            assert!(confine(&path(&root.join("ok.txt")), &roots, false).is_ok());
        }
        let err = confine("relative.txt", &roots, false).expect_err("relative");
        assert_eq!(err.code, -32602);
        let err = confine(&path(&root.join("missing.txt")), &roots, false).expect_err("missing");
        assert_eq!(err.code, -32002);
        assert!(confine(&path(&root.join("new.txt")), &roots, true).is_ok());
    }

    #[test]
    fn output_keeps_the_end_and_cuts_at_a_character() {
        let mut output = Output {
            limit: 4,
            ..Output::default()
        };
        output.push("aé".as_bytes());
        output.push(b"bcd");
        assert!(output.truncated);
        assert_eq!(output.text(), "bcd");
    }
}
