//! [`GroupChild`]: a child process in a process group of its own, stopped as a whole, politely
//! then firmly; and [`termination`]: the signals that ask this process to end.
//!
//! One way everywhere a process is started for someone (an agent under a client, under `acp
//! serve` or `acp proxy`, a client's terminal): the child leads a new process group, so a stop
//! reaches whatever it started (an npm wrapper's native agent, a shell's commands); on Linux it
//! also gets a parent-death signal, so a `kill -9` of this process does not orphan it; stopping
//! is the child's stdin closing (by whoever holds it), a grace period, SIGTERM to the group,
//! the grace again, SIGKILL to the group; and a `GroupChild` dropped without a stop kills the
//! group at once.

use std::collections::HashSet;
use std::io;
use std::process::ExitStatus;
use std::sync::Mutex;
use std::time::Duration;

use tokio::process::{Child, Command};

/// The grace of each step of a stop, unless its owner chooses another: after the child's stdin
/// closes, and after SIGTERM. A stop takes at most twice this (then SIGKILL): agents we tried
/// exit within milliseconds of SIGTERM, and a process gone 5 s after its owner is what we promise.
pub const STOP_GRACE: Duration = Duration::from_secs(1);

/// The process groups of every [`GroupChild`] of this process not stopped yet, for
/// [`stop_all`].
static LIVE: Mutex<Option<HashSet<u32>>> = Mutex::new(None);

fn live() -> std::sync::MutexGuard<'static, Option<HashSet<u32>>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A child process leading its own process group.
#[derive(Debug)]
pub struct GroupChild {
    child: Child,
    /// Its process group (its own pid), while it may have members.
    group: Option<u32>,
}

/// A signal of the stop sequence.
#[derive(Debug, Clone, Copy)]
pub(super) enum Stop {
    Term,
    Kill,
}

impl GroupChild {
    /// Starts `command` as the leader of a new process group (with the parent-death signal on
    /// Linux), killed with its group when dropped.
    pub fn spawn(command: &mut Command) -> io::Result<Self> {
        command.kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        #[cfg(target_os = "linux")]
        parent_death_signal(command);
        let child = command.spawn()?;
        let group = child.id();
        if let Some(group) = group {
            live().get_or_insert_with(HashSet::new).insert(group);
            super::reaper::register(group, true);
        }
        Ok(Self { child, group })
    }

    /// Forgets the group once it is gone.
    fn forget_group(&mut self) {
        if let Some(group) = self.group.take() {
            if let Some(set) = live().as_mut() {
                set.remove(&group);
            }
            super::reaper::register(group, false);
        }
    }

    /// The child, to take its pipes or wait for it.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Stops it: waits up to `grace` for it to exit on its own (its stdin closed by whoever held
    /// it: the polite request), then SIGTERM to its group and `grace` again, then SIGKILL; then
    /// whatever it started still in its group gets the same. Nothing it started survives.
    pub async fn stop(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => status?,
            Err(_) => {
                tracing::debug!(
                    ?grace,
                    "did not exit after its stdin closed; SIGTERM to its group"
                );
                self.signal(Stop::Term);
                match tokio::time::timeout(grace, self.child.wait()).await {
                    Ok(status) => status?,
                    Err(_) => {
                        tracing::warn!(?grace, "did not exit after SIGTERM; SIGKILL to its group");
                        self.signal(Stop::Kill);
                        self.child.kill().await?;
                        self.child.wait().await?
                    }
                }
            }
        };
        self.reap_group(grace).await;
        Ok(status)
    }

    /// Kills the whole group now (SIGKILL), without waiting.
    pub fn kill(&mut self) {
        self.signal(Stop::Kill);
        let _ = self.child.start_kill();
    }

    /// Ends what is left in the group after the child itself has exited.
    async fn reap_group(&mut self, grace: Duration) {
        if !self.group_alive() {
            self.forget_group();
            return;
        }
        tracing::debug!("processes left behind in the group; SIGTERM to it");
        self.signal(Stop::Term);
        let deadline = tokio::time::Instant::now() + grace;
        while self.group_alive() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if self.group_alive() {
            self.signal(Stop::Kill);
        }
        self.forget_group();
    }

    /// `true` while a process of the group lives.
    pub fn group_alive(&self) -> bool {
        self.group.is_some_and(group_alive)
    }

    fn signal(&self, signal: Stop) {
        if let Some(group) = self.group {
            signal_groups(&[group], signal);
        }
    }
}

impl Drop for GroupChild {
    /// Dropped before [`GroupChild::stop`] finished, the whole group is killed (`kill_on_drop`
    /// reaches only the direct child).
    fn drop(&mut self) {
        if self.group.is_some() {
            self.signal(Stop::Kill);
            self.forget_group();
        }
    }
}

/// Stops every process group a [`GroupChild`] of this process started and did not stop yet:
/// SIGTERM to each, up to `grace` for them to go, then SIGKILL to what is left. For a program
/// about to exit on a signal, whose agents would otherwise only be killed as their owners drop.
pub async fn stop_all(grace: Duration) {
    let groups: Vec<u32> = live()
        .as_ref()
        .map_or_else(Vec::new, |set| set.iter().copied().collect());
    signal_groups(&groups, Stop::Term);
    let deadline = tokio::time::Instant::now() + grace;
    while groups.iter().any(|&group| group_alive(group)) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    signal_groups(&groups, Stop::Kill);
}

#[cfg(unix)]
pub(super) fn signal_groups(groups: &[u32], signal: Stop) {
    let signal = match signal {
        Stop::Term => rustix::process::Signal::TERM,
        Stop::Kill => rustix::process::Signal::KILL,
    };
    for &group in groups {
        if let Some(pid) = i32::try_from(group)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, signal);
        }
    }
}

#[cfg(not(unix))]
pub(super) fn signal_groups(_groups: &[u32], _signal: Stop) {}

#[cfg(unix)]
pub(super) fn group_alive(group: u32) -> bool {
    i32::try_from(group)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
}

#[cfg(not(unix))]
pub(super) fn group_alive(_group: u32) -> bool {
    false
}

/// Sets the child's parent-death signal to SIGKILL between fork and exec (Linux): when this
/// process dies, even by SIGKILL, the kernel kills the child too. (Its own children are reached
/// through the group by every other exit path.)
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn parent_death_signal(command: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // calls are allowed: it makes two system calls (prctl, getppid) through rustix, which
    // neither allocates nor takes locks, and builds its error from a raw OS code.
    unsafe {
        command.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // The parent may have died before the signal was set: then go at once.
            if rustix::process::getppid() != Some(parent) {
                return Err(io::Error::from_raw_os_error(libc_esrch()));
            }
            Ok(())
        });
    }
}

/// `ESRCH`: "no such process", the parent being gone.
#[cfg(target_os = "linux")]
fn libc_esrch() -> i32 {
    rustix::io::Errno::SRCH.raw_os_error()
}

/// A signal asking this process to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Termination {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP (the terminal went away).
    HangUp,
}

impl Termination {
    /// The conventional exit status after it: 128 + the signal's number.
    pub fn exit_code(self) -> i32 {
        128 + match self {
            Termination::Interrupt => 2,
            Termination::Terminate => 15,
            Termination::HangUp => 1,
        }
    }
}

/// Resolves at the first SIGINT, SIGTERM or SIGHUP (on Unix; Ctrl-C elsewhere) from the moment
/// it is created: the listeners are installed when this is called, before the returned future
/// is first polled. An error when they cannot be installed.
pub fn termination() -> io::Result<impl std::future::Future<Output = Termination> + Send> {
    listen(true)
}

/// [`termination`] without SIGINT, for a program that gives Ctrl-C a meaning of its own (an
/// interactive chat cancels a turn with it).
pub fn termination_but_interrupt(
) -> io::Result<impl std::future::Future<Output = Termination> + Send> {
    listen(false)
}

fn listen(interrupts: bool) -> io::Result<impl std::future::Future<Output = Termination> + Send> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = if interrupts {
            Some(signal(SignalKind::interrupt())?)
        } else {
            None
        };
        let mut terminate = signal(SignalKind::terminate())?;
        let mut hang_up = signal(SignalKind::hangup())?;
        Ok(async move {
            let interrupted = async {
                match &mut interrupt {
                    Some(interrupt) => {
                        interrupt.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = interrupted => Termination::Interrupt,
                _ = terminate.recv() => Termination::Terminate,
                _ = hang_up.recv() => Termination::HangUp,
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async move {
            if interrupts {
                let _ = tokio::signal::ctrl_c().await;
            } else {
                std::future::pending::<()>().await;
            }
            Termination::Interrupt
        })
    }
}
