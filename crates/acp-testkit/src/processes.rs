//! Process-hygiene checks (Linux, through `/proc`): a stubborn agent that ignores every polite
//! request to stop and starts a grandchild, and the assertion that everything it started is gone.
//!
//! The agent (`agents/stubborn_v1.py`) writes `PID PGID GRANDCHILD_PID` to the file named by its
//! `STUBBORN_PIDS` variable once both run; [`Stubborn::started`] reads it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The stubborn v1 agent's script (run it with `python3`): it ignores SIGTERM, SIGHUP, SIGINT
/// and its stdin's end, and its grandchild does too. A prompt saying "fast" ends at once; any
/// other is never answered.
pub fn stubborn_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/stubborn_v1.py")
}

/// The fake v1 agent with the real agents' habits (run it with `python3`): updates on the line
/// after a response, `used: null`, title-less permission questions with `allow_always` first,
/// shell-line terminals, an env-var login, noisy stderr; its docstring lists them and its flags.
pub fn habits_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/habits_v1.py")
}

/// A started stubborn agent: the processes to watch.
#[derive(Debug, Clone, Copy)]
pub struct Stubborn {
    /// The agent's pid.
    pub pid: i32,
    /// Its process group.
    pub group: i32,
    /// The grandchild it started.
    pub grandchild: i32,
}

impl Stubborn {
    /// The agent, once it has written its pids to `pids` (up to 10 s; panics after).
    pub fn started(pids: &Path) -> Self {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(text) = std::fs::read_to_string(pids) {
                let fields: Vec<i32> = text
                    .split_whitespace()
                    .filter_map(|field| field.parse().ok())
                    .collect();
                if let [pid, group, grandchild] = fields[..] {
                    return Self {
                        pid,
                        group,
                        grandchild,
                    };
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the stubborn agent never started ({})", pids.display());
    }

    /// Its processes still alive: its whole process group; or, should the agent share a group
    /// with the test itself (no group of its own), the agent and its grandchild.
    pub fn alive(&self) -> Vec<i32> {
        let ours = stat(std::process::id() as i32).map(|(_, group)| group);
        if ours == Some(self.group) {
            return [self.pid, self.grandchild]
                .into_iter()
                .filter(|&pid| matches!(stat(pid), Some((true, _))))
                .collect();
        }
        let Ok(entries) = std::fs::read_dir("/proc") else {
            panic!("these checks need /proc");
        };
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_string_lossy().parse::<i32>().ok())
            .filter(|&pid| stat(pid) == Some((true, self.group)))
            .collect()
    }

    /// Panics unless every process of the agent is gone within 5 s (what is left is killed
    /// first), and unless the agent led a process group of its own.
    pub fn assert_gone_within_5s(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut left = self.alive();
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            left = self.alive();
        }
        for pid in &left {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        assert!(left.is_empty(), "{what}: {left:?} still alive after 5 s");
        assert_eq!(
            self.pid, self.group,
            "{what}: the agent leads a group of its own"
        );
    }
}

/// Whether `pid` is alive (not a zombie), and its process group.
fn stat(pid: i32) -> Option<(bool, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's name (which may hold spaces and parentheses): state, ppid, pgrp.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((*fields.first()? != "Z", fields.get(2)?.parse().ok()?))
}

/// Sends signal `name` (`TERM`, `HUP`, `INT`, `KILL`...) to `child`.
pub fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} {}", child.id());
}

/// `child`'s exit code once it exits (up to 15 s; killed and a panic after).
pub fn exit_code(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("waitable") {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("{} did not exit within 15 s", child.id());
}

/// A child killed (SIGKILL) when the test ends, passed or not.
#[derive(Debug)]
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A scratch directory for one test's pid files: `$TMPDIR/acp-hygiene-NAME-PID`, empty.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acp-hygiene-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
