//! The reaper: a small helper process that outlives its owner just long enough to stop the
//! process groups the owner started, when the owner dies without stopping them (`kill -9`, a
//! crash).
//!
//! A program installs it once ([`install_reaper`]: its own executable started again with
//! [`REAPER_ARG`], which its `main` hands to [`reaper_main`]). From then on every [`GroupChild`]
//! the program starts is registered with the reaper (`+PGID` on the reaper's stdin) and
//! unregistered when stopped (`-PGID`). When the owner dies its end of the pipe closes: the
//! reaper reads end of file, sends SIGTERM to every group still registered, waits up to
//! [`REAPER_GRACE`] for them to go, sends SIGKILL to what is left, and exits. The reaper runs
//! in a process group of its own, so a terminal's Ctrl-C or hang-up, meant for its owner, does
//! not reach it.
//!
//! [`GroupChild`]: super::GroupChild

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The argument that makes a program run as its own reaper (see [`reaper_main`]).
pub const REAPER_ARG: &str = "__acp-reaper";

/// How long the groups get between SIGTERM and SIGKILL when their owner died.
pub const REAPER_GRACE: Duration = Duration::from_secs(2);

/// The installed reaper's stdin, where groups are registered.
static REAPER: Mutex<Option<ChildStdin>> = Mutex::new(None);

/// Starts this process's reaper: `program` (this program's own executable) with
/// [`REAPER_ARG`]. Groups started from now on are registered with it. Installing twice keeps
/// the first.
pub fn install_reaper(program: &Path) -> io::Result<()> {
    let mut installed = REAPER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if installed.is_some() {
        return Ok(());
    }
    let mut command = Command::new(program);
    command
        .arg(REAPER_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn()?;
    *installed = child.stdin.take();
    // The reaper is not waited for: it exits when this process does (its stdin closes), and is
    // then reparented and reaped by init.
    drop(child);
    Ok(())
}

/// Tells the reaper about a group started (`true`) or stopped (`false`); nothing without one.
pub(super) fn register(group: u32, started: bool) {
    let mut installed = REAPER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(stdin) = installed.as_mut() {
        let sign = if started { '+' } else { '-' };
        if writeln!(stdin, "{sign}{group}").is_err() {
            // The reaper is gone: nothing to tell any more.
            *installed = None;
        }
    }
}

/// The reaper's whole life (call it from `main` when the first argument is [`REAPER_ARG`]):
/// reads registrations until end of file, then stops every group still registered. Returns the
/// exit code.
pub fn reaper_main() -> i32 {
    let mut groups = std::collections::BTreeSet::new();
    let stdin = io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else {
            break;
        };
        let (sign, number) = line.split_at(line.len().min(1));
        let Ok(group) = number.trim().parse::<u32>() else {
            continue;
        };
        match sign {
            "+" => {
                groups.insert(group);
            }
            "-" => {
                groups.remove(&group);
            }
            _ => {}
        }
    }
    let groups: Vec<u32> = groups.into_iter().collect();
    if groups.is_empty() {
        return 0;
    }
    super::group::signal_groups(&groups, super::group::Stop::Term);
    let deadline = Instant::now() + REAPER_GRACE;
    while groups.iter().any(|&group| super::group::group_alive(group)) && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    super::group::signal_groups(&groups, super::group::Stop::Kill);
    0
}
