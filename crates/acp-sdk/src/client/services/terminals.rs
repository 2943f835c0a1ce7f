//! `terminal/*`: commands run for the agent, confined to the session's roots.
//!
//! Each command runs in its own process group: a kill reaches everything it started. Its
//! output (stdout and stderr together) is kept in a ring of at most its byte limit, so each
//! chunk costs its own length, never the buffer's. `terminal/wait_for_exit` reports the exit as
//! soon as the command has exited and its output has been read for a short grace, never waiting
//! for pipes a detached grandchild holds open. At most `LocalServices::max_terminals` are live
//! per session (released ones do not count).
//!
//! Locking: the map is locked for lookups only; each terminal's output has its own mutex,
//! written by its reader tasks and read by `terminal/output`, never held across an await.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_rpc::process::GroupChild;
use acp_rpc::{codes, RpcError};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use super::super::options::LocalServices;
use super::super::session::lock;
use super::fs::confine;
use super::refused;

/// How long the exit waits for the command's output to be read once it has exited.
const OUTPUT_GRACE: Duration = Duration::from_millis(200);

/// A command's output, keeping the last `limit` bytes in a ring.
#[derive(Debug, Default)]
struct Output {
    bytes: VecDeque<u8>,
    limit: usize,
    truncated: bool,
}

impl Output {
    fn push(&mut self, chunk: &[u8]) {
        // Only the end of a chunk larger than the whole ring can stay.
        let chunk = &chunk[chunk.len().saturating_sub(self.limit)..];
        let excess = (self.bytes.len() + chunk.len()).saturating_sub(self.limit);
        if excess > 0 {
            self.bytes.drain(..excess.min(self.bytes.len()));
            self.truncated = true;
        }
        self.bytes.extend(chunk);
    }

    /// The text, starting at a character boundary when the start was cut.
    fn text(&self) -> String {
        let skip = if self.truncated {
            self.bytes
                .iter()
                .take_while(|&&b| (b & 0xC0) == 0x80)
                .count()
        } else {
            0
        };
        let bytes: Vec<u8> = self.bytes.iter().skip(skip).copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
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

/// The command to start. A `command` without `args` is a shell line, as editors run it (agents
/// send `{"command": "touch hello.txt"}`): `$SHELL -c command` (`/bin/sh` when `SHELL` is unset
/// or not absolute; `cmd /C` on Windows). With `args` it is a program, run as given. Either
/// goes through `wrapper` when one is set (its first item the program, `{cwd}` in its
/// arguments replaced by the terminal's working directory).
fn command_for(
    wrapper: &[String],
    request: &acp_v1::CreateTerminalRequest,
    cwd: &std::path::Path,
) -> tokio::process::Command {
    let shell_line = request.args.as_ref().is_none_or(Vec::is_empty);
    let mut argv: Vec<std::ffi::OsString> = Vec::new();
    if let Some((sandbox, args)) = wrapper.split_first() {
        let cwd = cwd.to_string_lossy();
        argv.push(sandbox.into());
        argv.extend(args.iter().map(|arg| arg.replace("{cwd}", &cwd).into()));
    }
    if shell_line {
        let (shell, flag) = user_shell();
        argv.extend([shell, flag.into(), request.command.clone().into()]);
    } else {
        argv.push(request.command.clone().into());
    }
    let mut command = tokio::process::Command::new(&argv[0]);
    command.args(&argv[1..]);
    command
}

/// The user's shell and its flag for one command line.
fn user_shell() -> (std::ffi::OsString, &'static str) {
    #[cfg(windows)]
    {
        ("cmd".into(), "/C")
    }
    #[cfg(not(windows))]
    {
        let shell = std::env::var_os("SHELL")
            .filter(|shell| std::path::Path::new(shell).is_absolute())
            .unwrap_or_else(|| "/bin/sh".into());
        (shell, "-c")
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
        let mut command = command_for(&services.terminal_wrapper, request, &cwd);
        command
            .args(request.args.iter().flatten())
            .envs(request.env.iter().flatten().map(|v| (&v.name, &v.value)))
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The place is taken before the command starts, under one lock with the count: two
        // creates at once cannot both pass the limit.
        let id = format!("term_{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (exit_tx, exit_rx) = watch::channel(None);
        let (kill_tx, kill_rx) = tokio::sync::mpsc::channel(1);
        let output = Arc::new(Mutex::new(Output {
            limit: limit.max(1),
            ..Output::default()
        }));
        {
            let mut map = lock(&self.map);
            if map.len() >= services.max_terminals {
                return Err(RpcError::new(
                    codes::INTERNAL_ERROR,
                    format!(
                        "this session already has {} terminals, this client's limit: release one first",
                        map.len()
                    ),
                )
                .with_data(serde_json::json!({ "reason": "overloaded", "limit": services.max_terminals })));
            }
            map.insert(
                id.clone(),
                Terminal {
                    output: output.clone(),
                    exit: exit_rx,
                    kill: kill_tx,
                },
            );
        }
        // Its own group (a kill reaches what it started), and gone with this process.
        let mut child = GroupChild::spawn(&mut command).map_err(|err| {
            lock(&self.map).remove(&id);
            RpcError::invalid_params(format!("`command` `{}`: {err}", request.command))
        })?;
        let mut readers = Vec::new();
        if let Some(stdout) = child.child().stdout.take() {
            readers.push(tokio::spawn(pump(stdout, output.clone())));
        }
        if let Some(stderr) = child.child().stderr.take() {
            readers.push(tokio::spawn(pump(stderr, output.clone())));
        }
        tokio::spawn(supervise(child, readers, exit_tx, kill_rx));
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

/// Waits for the command (or kills its group when asked, or when the terminal is dropped with
/// its session or connection), then for its output within a grace (a grandchild may hold the
/// pipes open for ever), then reports the exit. A kill asked for after the exit, or the
/// terminal's drop, still reaches the group: what the command left running.
async fn supervise(
    mut child: GroupChild,
    readers: Vec<tokio::task::JoinHandle<()>>,
    exit: watch::Sender<Option<Exit>>,
    mut kill: tokio::sync::mpsc::Receiver<()>,
) {
    let status = tokio::select! {
        status = child.child().wait() => status,
        // A kill, or every sender gone (the terminal forgotten).
        _ = kill.recv() => {
            child.kill();
            child.child().wait().await
        }
    };
    let drained = async {
        for reader in readers {
            let _ = reader.await;
        }
    };
    let _ = tokio::time::timeout(OUTPUT_GRACE, drained).await;
    let ended = match status {
        Ok(status) => exit_of(status),
        Err(_) => Exit {
            code: None,
            signal: None,
        },
    };
    let _ = exit.send(Some(ended));
    // Released or killed later: what the command left in its group goes too. While a member
    // lives the group id cannot be reused; once none does, only a new group leader given the
    // same pid after the kernel's pids wrapped around could receive this signal.
    let _ = kill.recv().await;
    child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn services(max_terminals: usize) -> LocalServices {
        LocalServices::new()
            .terminals()
            .max_terminals(max_terminals)
    }

    fn shell(script: &str) -> acp_v1::CreateTerminalRequest {
        acp_v1::CreateTerminalRequest::new("s1", "/bin/sh").args(vec!["-c".into(), script.into()])
    }

    async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(5), future)
            .await
            .unwrap_or_else(|_| panic!("timed out: {what}"))
    }

    /// Creates the terminal, waits for its exit: the exit, the output, and its id.
    async fn run_to_exit(
        terminals: &Terminals,
        services: &LocalServices,
        roots: &[PathBuf],
        request: &acp_v1::CreateTerminalRequest,
    ) -> (acp_v1::WaitForTerminalExitResponse, String, String) {
        let created = terminals
            .create(services, roots, request)
            .await
            .expect("created");
        let id = created.terminal_id.as_str().to_owned();
        let exit = within("wait_for_exit", terminals.wait(&id))
            .await
            .expect("exit");
        let output = terminals.output(&id).expect("output").output;
        (exit, output, id)
    }

    /// Whether process `pid` is still running (not gone, not a zombie).
    fn running(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_command_without_args_is_a_shell_line() {
        let terminals = Terminals::default();
        let roots = vec![std::env::temp_dir()];
        // As claude-code sends it: a shell line, no `args`; pipes and quotes work.
        let line = acp_v1::CreateTerminalRequest::new("s1", "echo 'a  b' | tr ab xy");
        let (exit, output, _) = run_to_exit(&terminals, &services(4), &roots, &line).await;
        assert_eq!(exit.exit_code.as_option(), Some(&0));
        assert_eq!(output, "x  y\n");
        // With `args`, the command is a program, run as given (no shell).
        let exact = acp_v1::CreateTerminalRequest::new("s1", "/bin/echo")
            .args(vec!["$HOME".into(), "a|b".into()]);
        let (_, output, _) = run_to_exit(&terminals, &services(4), &roots, &exact).await;
        assert_eq!(output, "$HOME a|b\n");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_wrapper_runs_every_command_with_the_cwd_in_its_arguments() {
        let terminals = Terminals::default();
        let root = std::fs::canonicalize(std::env::temp_dir()).expect("canonical");
        let roots = vec![root.clone()];
        let wrapped = services(4).terminal_wrapper(["/usr/bin/env", "SANDBOXED_IN={cwd}"]);
        let script = shell("echo \"$SANDBOXED_IN\"");
        let (_, output, id) = run_to_exit(&terminals, &wrapped, &roots, &script).await;
        assert_eq!(output, format!("{}\n", root.display()));
        terminals.release(&id).await.expect("released");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_exit_is_reported_while_a_grandchild_holds_the_pipes() {
        let terminals = Terminals::default();
        let roots = vec![std::env::temp_dir()];
        let script = shell("sleep 30 & echo started; exit 7");
        let (exit, output, id) = run_to_exit(&terminals, &services(4), &roots, &script).await;
        assert_eq!(exit.exit_code.as_option(), Some(&7));
        assert_eq!(output, "started\n");
        terminals.release(&id).await.expect("released");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_kill_reaches_what_the_command_started() {
        let terminals = Terminals::default();
        let roots = vec![std::env::temp_dir()];
        let created = terminals
            .create(&services(4), &roots, &shell("sleep 30 & echo $!; wait"))
            .await
            .expect("created");
        let id = created.terminal_id.as_str().to_owned();
        let pid = within("the grandchild's pid", async {
            loop {
                let text = terminals.output(&id).expect("output").output;
                if text.ends_with('\n') {
                    return text.trim().to_owned();
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert!(running(&pid), "the grandchild {pid} runs");
        terminals.kill(&id).await.expect("killed");
        let exit = within("wait_for_exit", terminals.wait(&id))
            .await
            .expect("exit");
        assert_eq!(exit.signal.as_option().map(String::as_str), Some("9"));
        within("the grandchild's end", async {
            while running(&pid) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    }

    /// Starts `sh -c "sleep 30 & echo $!; exit 0"` and waits for its exit: the pid of the
    /// sleep it left running.
    async fn leave_a_grandchild(terminals: &Terminals, id_out: &mut String) -> String {
        let roots = vec![std::env::temp_dir()];
        let created = terminals
            .create(&services(4), &roots, &shell("sleep 30 & echo $!; exit 0"))
            .await
            .expect("created");
        *id_out = created.terminal_id.as_str().to_owned();
        within("wait_for_exit", terminals.wait(id_out))
            .await
            .expect("exit");
        let pid = terminals
            .output(id_out)
            .expect("output")
            .output
            .trim()
            .to_owned();
        assert!(running(&pid), "the grandchild {pid} runs");
        pid
    }

    async fn gone(pid: &str) {
        within("the grandchild's end", async {
            while running(pid) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_release_after_the_exit_reaches_what_the_command_left_running() {
        let terminals = Terminals::default();
        let mut id = String::new();
        let pid = leave_a_grandchild(&terminals, &mut id).await;
        terminals.release(&id).await.expect("released");
        gone(&pid).await;
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn dropping_the_terminals_kills_what_they_started() {
        let terminals = Terminals::default();
        let mut id = String::new();
        let pid = leave_a_grandchild(&terminals, &mut id).await;
        drop(terminals);
        gone(&pid).await;
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_session_has_at_most_its_limit_of_live_terminals() {
        let terminals = Terminals::default();
        let roots = vec![std::env::temp_dir()];
        let limit = services(2);
        let first = terminals
            .create(&limit, &roots, &shell("exit 0"))
            .await
            .expect("1");
        terminals
            .create(&limit, &roots, &shell("exit 0"))
            .await
            .expect("2");
        let refused = terminals
            .create(&limit, &roots, &shell("exit 0"))
            .await
            .expect_err("over the limit");
        assert_eq!(refused.code, -32603, "{refused}");
        terminals
            .release(first.terminal_id.as_str())
            .await
            .expect("released");
        terminals
            .create(&limit, &roots, &shell("exit 0"))
            .await
            .expect("room again");
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
        output.push(b"0123456789");
        assert_eq!(output.text(), "6789");
        assert_eq!(output.bytes.len(), 4);
    }
}
