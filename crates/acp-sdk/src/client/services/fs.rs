//! `fs/read_text_file` and `fs/write_text_file`, confined to the session's roots.
//!
//! Confinement is by handle (see [`beneath`](super::beneath)): the file is opened beneath a
//! root, never through `..` or a symlink that leaves it, and must be a regular file with one
//! name (a hard link to a file outside is refused). Every path outside is refused `-32602` with
//! one message, whether something exists there or not; a missing file inside is `-32002`. A
//! write never follows a symlink in the file's own name (a dangling one would create its target
//! wherever it points). A read streams the file and keeps only the lines asked for, within the
//! output limit. [`confine`] (by path) places a terminal's working directory.

use std::path::{Path, PathBuf};

use acp_rpc::{codes, RpcError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::super::options::LocalServices;
use super::refused;

fn resolved_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .collect()
}

/// `path` resolved and checked to lie inside `roots`. For a write the file may not exist yet:
/// its parent is resolved and the name must be a plain name that is not a symlink.
pub(crate) fn confine(path: &str, roots: &[PathBuf], for_write: bool) -> Result<PathBuf, RpcError> {
    let candidate = Path::new(path);
    if !candidate.is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "`path` must be absolute, got `{path}`"
        )));
    }
    let resolved = if for_write {
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
        let target = parent.join(name);
        if std::fs::symlink_metadata(&target).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return Err(RpcError::invalid_params(format!(
                "`path` `{path}` is a symlink: this client does not write through one"
            )));
        }
        target
    } else {
        std::fs::canonicalize(candidate).map_err(|err| {
            RpcError::new(codes::RESOURCE_NOT_FOUND, format!("`{path}`: {err}"))
                .with_data(serde_json::json!({ "uri": format!("file://{path}") }))
        })?
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

/// The lines `skip + 1 ..= skip + take` of what `reader` yields, at most `limit` bytes of them,
/// read in pieces: memory stays within the limit and one piece whatever the file's size.
async fn read_lines(
    mut reader: impl tokio::io::AsyncRead + Unpin,
    skip: usize,
    take: usize,
    limit: usize,
) -> Result<Vec<u8>, RpcError> {
    let mut content = Vec::new();
    let mut piece = vec![0u8; 64 * 1024];
    // The 0-based number of the line the next byte belongs to.
    let mut line = 0usize;
    let end = skip.saturating_add(take);
    while line < end {
        let read = reader
            .read(&mut piece)
            .await
            .map_err(RpcError::internal_error)?;
        if read == 0 {
            break;
        }
        for &byte in &piece[..read] {
            if line >= end {
                break;
            }
            if line >= skip {
                if content.len() == limit {
                    return Err(RpcError::invalid_params(format!(
                        "the lines asked for are over this client's limit of {limit} bytes"
                    )));
                }
                content.push(byte);
            }
            if byte == b'\n' {
                line += 1;
            }
        }
    }
    Ok(content)
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
    let file = opened(&request.path, roots, false)?;
    let metadata = file.metadata().await.map_err(RpcError::internal_error)?;
    let size = metadata.len();
    let limit = services.output_limit;
    let whole = request.line.as_option().is_none() && request.limit.as_option().is_none();
    if whole && size > limit as u64 {
        return Err(RpcError::invalid_params(format!(
            "`{}` is {size} bytes, over this client's limit of {limit}: read it by `line` and `limit`",
            request.path
        )));
    }
    let skip = request.line.as_option().map_or(0, |line| {
        usize::try_from(*line)
            .unwrap_or(usize::MAX)
            .saturating_sub(1)
    });
    let take = request
        .limit
        .as_option()
        .map_or(usize::MAX, |n| usize::try_from(*n).unwrap_or(usize::MAX));
    let bytes = read_lines(tokio::io::BufReader::new(file), skip, take, limit).await?;
    let content = String::from_utf8(bytes)
        .map_err(|_| RpcError::invalid_params(format!("`{}` is not UTF-8 text", request.path)))?;
    Ok(acp_v1::ReadTextFileResponse::new(content))
}

/// `path` opened beneath `roots` (for writing: created if missing, not truncated), or the
/// refusal as the agent sees it.
fn opened(path: &str, roots: &[PathBuf], write: bool) -> Result<tokio::fs::File, RpcError> {
    use super::beneath::Refusal;
    if !Path::new(path).is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "`path` must be absolute, got `{path}`"
        )));
    }
    match super::beneath::open(Path::new(path), roots, write) {
        Ok(file) => Ok(tokio::fs::File::from_std(file)),
        Err(Refusal::Outside) => Err(RpcError::invalid_params(format!(
            "`path` `{path}` is outside the session's directories"
        ))),
        Err(Refusal::NotFound) => Err(RpcError::new(
            codes::RESOURCE_NOT_FOUND,
            format!("`{path}` does not exist"),
        )
        .with_data(serde_json::json!({ "uri": format!("file://{path}") }))),
        Err(Refusal::Symlink) => Err(RpcError::invalid_params(format!(
            "`path` `{path}` is a symlink: this client does not write through one"
        ))),
        Err(Refusal::Linked) => Err(RpcError::invalid_params(format!(
            "`{path}` has other names (hard links): this client does not use such files"
        ))),
        Err(Refusal::NotAFile) => Err(not_a_file(path)),
        Err(Refusal::Io(err)) => Err(RpcError::invalid_params(format!("`{path}`: {err}"))),
    }
}

/// `-32602`: only regular files are read and written.
fn not_a_file(path: &str) -> RpcError {
    RpcError::invalid_params(format!("`{path}` is not a regular file"))
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
    let failed =
        |err: std::io::Error| RpcError::invalid_params(format!("`{}`: {err}", request.path));
    let mut file = opened(&request.path, roots, true)?;
    file.set_len(0).await.map_err(failed)?;
    file.write_all(request.content.as_bytes())
        .await
        .map_err(failed)?;
    file.flush().await.map_err(failed)?;
    Ok(acp_v1::WriteTextFileResponse::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root with `inside.txt`, a sibling directory with `secret.txt`, and symlinks from the
    /// root to both, and one to a file that does not exist outside.
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
            use std::os::unix::fs::symlink;
            symlink(outside.join("secret.txt"), root.join("link.txt")).expect("symlink");
            symlink(&outside, root.join("linkdir")).expect("symlink");
            symlink(root.join("inside.txt"), root.join("ok.txt")).expect("symlink");
            symlink(outside.join("planted.txt"), root.join("dangling.txt")).expect("symlink");
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
            refused(&root.join("dangling.txt"), true);
            // A symlink that stays inside is fine to read.
            assert!(confine(&path(&root.join("ok.txt")), &roots, false).is_ok());
        }
        let err = confine("relative.txt", &roots, false).expect_err("relative");
        assert_eq!(err.code, -32602);
        let err = confine(&path(&root.join("missing.txt")), &roots, false).expect_err("missing");
        assert_eq!(err.code, -32002);
        assert!(confine(&path(&root.join("new.txt")), &roots, true).is_ok());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_write_through_a_dangling_symlink_creates_nothing_outside() {
        let (_dir, root, outside) = layout();
        let services = LocalServices::new().write_files();
        let request =
            acp_v1::WriteTextFileRequest::new("s1", path(&root.join("dangling.txt")), "pwned");
        let err = write_text_file(&services, std::slice::from_ref(&root), &request)
            .await
            .expect_err("refused");
        assert_eq!(err.code, -32602, "{err}");
        assert!(!outside.join("planted.txt").exists());
        // Opened by handle: the open itself refuses the symlink.
        let file = super::super::beneath::open(
            &root.join("dangling.txt"),
            std::slice::from_ref(&root),
            true,
        );
        assert!(file.is_err());
        assert!(!outside.join("planted.txt").exists());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_fifo_is_refused_not_waited_on() {
        let (_dir, root, _outside) = layout();
        let fifo = root.join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .expect("mkfifo");
        let services = LocalServices::new().read_files().write_files();
        let roots = std::slice::from_ref(&root);
        let read = acp_v1::ReadTextFileRequest::new("s1", path(&fifo));
        let answer = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            read_text_file(&services, roots, &read),
        )
        .await
        .expect("answered, not blocked");
        assert_eq!(answer.expect_err("refused").code, -32602);
        let write = acp_v1::WriteTextFileRequest::new("s1", path(&fifo), "x");
        let answer = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            write_text_file(&services, roots, &write),
        )
        .await
        .expect("answered, not blocked");
        assert!(answer.is_err());
    }

    /// The error of a refused request with the path itself taken out: what an agent can tell
    /// apart.
    fn shape(err: &RpcError, path: &str) -> (i32, String) {
        (err.code, err.message.replace(path, "PATH"))
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_hard_link_inside_does_not_reach_the_file_outside() {
        let (_dir, root, outside) = layout();
        std::fs::hard_link(outside.join("secret.txt"), root.join("linked.txt")).expect("link");
        let services = LocalServices::new().read_files().write_files();
        let roots = std::slice::from_ref(&root);
        let linked = path(&root.join("linked.txt"));
        let read = acp_v1::ReadTextFileRequest::new("s1", linked.clone());
        let err = read_text_file(&services, roots, &read)
            .await
            .expect_err("a read through a hard link is refused");
        assert_eq!(err.code, -32602, "{err}");
        let write = acp_v1::WriteTextFileRequest::new("s1", linked, "pwned");
        let err = write_text_file(&services, roots, &write)
            .await
            .expect_err("a write through a hard link is refused");
        assert_eq!(err.code, -32602, "{err}");
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).expect("read"),
            "secret"
        );
    }

    #[tokio::test]
    async fn outside_paths_are_refused_alike_whether_they_exist_or_not() {
        let (_dir, root, outside) = layout();
        let services = LocalServices::new().read_files().write_files();
        let roots = std::slice::from_ref(&root);
        let mut shapes = Vec::new();
        let mut probes = vec![
            outside.join("secret.txt"),
            outside.join("nothing-here.txt"),
            root.join("../outside/secret.txt"),
            root.join("../outside/nothing-here.txt"),
        ];
        if cfg!(unix) {
            probes.push(root.join("link.txt"));
            probes.push(root.join("linkdir/secret.txt"));
            probes.push(root.join("linkdir/nothing-here.txt"));
        }
        for probe in &probes {
            let probe = path(probe);
            let read = acp_v1::ReadTextFileRequest::new("s1", probe.clone());
            let err = read_text_file(&services, roots, &read)
                .await
                .expect_err("refused");
            shapes.push(shape(&err, &probe));
            let write = acp_v1::WriteTextFileRequest::new("s1", probe.clone(), "x");
            let err = write_text_file(&services, roots, &write)
                .await
                .expect_err("refused");
            shapes.push(shape(&err, &probe));
        }
        shapes.dedup();
        assert_eq!(shapes.len(), 1, "{shapes:#?}");
        assert!(!outside.join("nothing-here.txt").exists());
    }

    #[tokio::test]
    async fn a_read_keeps_only_the_lines_asked_for_within_the_limit() {
        let text = "one\ntwo\nthree\nfour";
        let lines = |skip, take, limit| read_lines(text.as_bytes(), skip, take, limit);
        assert_eq!(lines(1, 2, 100).await.expect("read"), b"two\nthree\n");
        assert_eq!(lines(3, 5, 100).await.expect("read"), b"four");
        assert_eq!(
            lines(0, usize::MAX, 100).await.expect("read"),
            text.as_bytes()
        );
        assert_eq!(lines(9, 1, 100).await.expect("read"), b"");
        assert_eq!(lines(0, 1, 4).await.expect("read"), b"one\n");
        let err = lines(0, 2, 4).await.expect_err("over the limit");
        assert_eq!(err.code, -32602);
        // Far past the limit, skipped lines cost nothing.
        let big = "x\n".repeat(1 << 20);
        assert_eq!(
            read_lines(big.as_bytes(), (1 << 20) - 1, 1, 8)
                .await
                .expect("read"),
            b"x\n"
        );
    }
}
