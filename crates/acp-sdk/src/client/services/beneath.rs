//! Files opened beneath a session's roots by handle, not by name.
//!
//! A path is first placed lexically: absolute, `.` and `..` folded, under one of the roots (as
//! given or resolved). Anything else is [`Refusal::Outside`] before the file system is touched,
//! so an outside path that exists and one that does not are refused alike. On Linux the file is
//! then opened relative to a handle on that root with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)`: the kernel refuses any step (`..`, a symlink, a magic link) that
//! would leave the root, whatever exists beyond it, and no rename or symlink planted between a
//! check and the open can redirect it. `RESOLVE_BENEATH` refuses every absolute symlink, even
//! one pointing inside: such a path, and every path elsewhere (or on a kernel without
//! `openat2`), is resolved and checked, then opened, and on Linux what was opened is checked
//! again through `/proc/self/fd`.
//!
//! Then the open file itself is checked: a regular file, with one name only. A hard link inside
//! a root to a file outside it is the same file under two names, invisible to any path check:
//! a file with more than one link is refused.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a file was not opened.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Not under any root (or resolving out of them): the same answer whether it exists or not.
    Outside,
    /// Under a root, and not there.
    NotFound,
    /// A write through a symlink (inside the roots) in the file's own name.
    Symlink,
    /// The file has other names (hard links).
    Linked,
    /// Not a regular file.
    NotAFile,
    /// Any other failure of the open.
    Io(io::Error),
}

/// `path` with `.` and `..` folded lexically (`..` at the top stays at the top).
fn fold(path: &Path) -> PathBuf {
    let mut folded = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                folded.pop();
            }
            other => folded.push(other.as_os_str()),
        }
    }
    folded
}

/// The root `path` lies under (as given or resolved) and the rest of the path below it.
fn place(path: &Path, roots: &[PathBuf]) -> Option<(PathBuf, PathBuf)> {
    let folded = fold(path);
    roots
        .iter()
        .flat_map(|root| {
            let resolved = std::fs::canonicalize(root).ok();
            [Some(fold(root)), resolved].into_iter().flatten()
        })
        .find_map(|root| {
            let rest = folded.strip_prefix(&root).ok()?.to_path_buf();
            Some((root, rest))
        })
}

/// Opens `path` under `roots` for reading, or (`write`) for writing, created if missing, never
/// truncated here; non-blocking (a FIFO is answered, not waited on). The file is regular and
/// has one link.
pub(crate) fn open(path: &Path, roots: &[PathBuf], write: bool) -> Result<std::fs::File, Refusal> {
    if !path.is_absolute() {
        return Err(Refusal::Outside);
    }
    let (root, rest) = place(path, roots).ok_or(Refusal::Outside)?;
    if rest.as_os_str().is_empty() {
        return Err(Refusal::NotAFile);
    }
    let file = open_below(&root, &rest, write)?;
    let metadata = file.metadata().map_err(Refusal::Io)?;
    if !metadata.is_file() {
        return Err(Refusal::NotAFile);
    }
    if links(&metadata) > 1 {
        return Err(Refusal::Linked);
    }
    Ok(file)
}

#[cfg(unix)]
fn links(metadata: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(metadata)
}

#[cfg(not(unix))]
fn links(_metadata: &std::fs::Metadata) -> u64 {
    1
}

#[cfg(target_os = "linux")]
fn open_below(root: &Path, rest: &Path, write: bool) -> Result<std::fs::File, Refusal> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;
    let dir = rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|err| Refusal::Io(err.into()))?;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    let access = if write {
        OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW
    } else {
        OFlags::RDONLY
    };
    let flags = access | OFlags::NONBLOCK | OFlags::CLOEXEC;
    // openat2 takes a mode only with O_CREAT (EINVAL otherwise).
    let mode = if write {
        Mode::from_raw_mode(0o666)
    } else {
        Mode::empty()
    };
    match rustix::fs::openat2(&dir, rest, flags, mode, resolve) {
        Ok(fd) => Ok(std::fs::File::from(fd)),
        // RESOLVE_BENEATH refuses every absolute symlink, even one that points inside: those
        // are resolved by path, and what was opened is checked to be inside (below).
        Err(Errno::XDEV) => open_checked(root, rest, write),
        Err(Errno::NOENT) => Err(Refusal::NotFound),
        // The name is a symlink (O_NOFOLLOW): outside if following it would leave the root.
        Err(Errno::LOOP) if write => {
            let probe = OFlags::PATH | OFlags::CLOEXEC;
            match rustix::fs::openat2(&dir, rest, probe, Mode::empty(), resolve) {
                Err(Errno::XDEV) => open_checked(root, rest, write),
                _ => Err(Refusal::Symlink),
            }
        }
        // No openat2 (Linux before 5.6, or a seccomp filter): the portable way.
        Err(Errno::NOSYS | Errno::PERM) => open_checked(root, rest, write),
        Err(err) => Err(Refusal::Io(err.into())),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_below(root: &Path, rest: &Path, write: bool) -> Result<std::fs::File, Refusal> {
    open_checked(root, rest, write)
}

/// Resolves the path (the parent for a write), checks it is still under `root`, then opens it;
/// on Linux, checks again that what was opened is under `root` (its `/proc/self/fd` link), so
/// a rename between the check and the open cannot lead outside. A path that does not resolve
/// is [`Refusal::Outside`] when its nearest existing ancestor is outside: the answer does not
/// depend on what exists out there.
fn open_checked(root: &Path, rest: &Path, write: bool) -> Result<std::fs::File, Refusal> {
    let root = std::fs::canonicalize(root).map_err(Refusal::Io)?;
    let full = root.join(rest);
    let resolved = if write {
        let (Some(parent), Some(name)) = (full.parent(), full.file_name()) else {
            return Err(Refusal::NotAFile);
        };
        let parent = resolve_or_place(parent, &root)?;
        let target = parent.join(name);
        if std::fs::symlink_metadata(&target).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return Err(match std::fs::canonicalize(&target) {
                Ok(end) if end.starts_with(&root) => Refusal::Symlink,
                _ => Refusal::Outside,
            });
        }
        target
    } else {
        resolve_or_place(&full, &root)?
    };
    if !resolved.starts_with(&root) {
        return Err(Refusal::Outside);
    }
    let mut options = std::fs::OpenOptions::new();
    if write {
        options.write(true).create(true);
    } else {
        options.read(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = rustix::fs::OFlags::NONBLOCK;
        if write {
            flags |= rustix::fs::OFlags::NOFOLLOW;
        }
        options.custom_flags(flags.bits() as i32);
    }
    let file = options.open(&resolved).map_err(Refusal::Io)?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()));
        if opened.is_ok_and(|opened| !opened.starts_with(&root)) {
            return Err(Refusal::Outside);
        }
    }
    Ok(file)
}

/// `path` resolved; when it does not resolve, [`Refusal::NotFound`] if its nearest existing
/// ancestor is under `root`, else [`Refusal::Outside`].
fn resolve_or_place(path: &Path, root: &Path) -> Result<PathBuf, Refusal> {
    if let Ok(resolved) = std::fs::canonicalize(path) {
        return Ok(resolved);
    }
    let inside = path
        .ancestors()
        .skip(1)
        .find_map(|ancestor| std::fs::canonicalize(ancestor).ok())
        .is_some_and(|ancestor| ancestor.starts_with(root));
    Err(if inside {
        Refusal::NotFound
    } else {
        Refusal::Outside
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fold_lexically() {
        assert_eq!(fold(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(fold(Path::new("/../../etc")), PathBuf::from("/etc"));
        let roots = [PathBuf::from("/work/root")];
        assert_eq!(
            place(Path::new("/work/root/sub/../x.txt"), &roots),
            Some((PathBuf::from("/work/root"), PathBuf::from("x.txt")))
        );
        assert_eq!(place(Path::new("/work/root/../other/x.txt"), &roots), None);
        assert_eq!(place(Path::new("/work/rootless/x.txt"), &roots), None);
    }

    #[test]
    fn files_inside_open_and_symlinks_inside_are_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("sub/a.txt"), "a").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("sub"), root.join("alias")).expect("symlink");
        let roots = [root.clone()];
        assert!(open(&root.join("sub/a.txt"), &roots, false).is_ok());
        #[cfg(unix)]
        assert!(open(&root.join("alias/a.txt"), &roots, false).is_ok());
        assert!(matches!(
            open(&root.join("sub/none.txt"), &roots, false),
            Err(Refusal::NotFound)
        ));
        assert!(open(&root.join("sub/new.txt"), &roots, true).is_ok());
        assert!(matches!(open(&root, &roots, false), Err(Refusal::NotAFile)));
        assert!(matches!(
            open(&root.join("sub"), &roots, false),
            Err(Refusal::NotAFile)
        ));
    }
}
