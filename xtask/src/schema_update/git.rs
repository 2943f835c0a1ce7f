//! `cargo xtask schema-update --from-git REPO --rev REV`: the schemas of one commit of a git
//! repository (the protocol repository, a fork, a branch with an RFD under review).
//!
//! A local repository (a path; bare or not, a partial clone will do) is read in place with
//! `git show REV:path`; anything else is a URL, fetched at depth 1 into a temporary repository
//! first. The files are taken from `schema/v1/`, `schema/v2/` (the protocol repository's layout)
//! or `v1/`, `v2/` at the root, then installed as `--from DIR` installs them, with the commit
//! recorded in the provenance table.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{
    install, run_command, run_for_bytes, write, write_provenance, Installed, Provenance, Source,
    TempDir, SCHEMA_FILES,
};

/// Refreshes `schema/` under `workspace_root` from `rev` of the repository `repo`.
pub fn run(repo: &str, rev: &str, workspace_root: &Path) -> Result<(), String> {
    if rev.is_empty() || rev.starts_with('-') || repo.starts_with('-') {
        return Err(format!(
            "`{repo}` at `{rev}`: neither may be empty or start with `-`"
        ));
    }
    let schema_dir = workspace_root.join("schema");
    let readme_path = schema_dir.join("README.md");
    let readme = fs::read_to_string(&readme_path)
        .map_err(|e| format!("cannot read {}: {e}", readme_path.display()))?;

    let fetched;
    let (git_dir, rev_to_read) = if Path::new(repo).exists() {
        (PathBuf::from(repo), rev.to_owned())
    } else {
        fetched = TempDir::new()?;
        eprintln!("schema-update: fetching {rev} of {repo} with git");
        git(fetched.path(), &["init", "-q"])?;
        git(
            fetched.path(),
            &["fetch", "-q", "--depth", "1", "--", repo, rev],
        )?;
        (fetched.path().to_path_buf(), "FETCH_HEAD".to_owned())
    };
    let commit = git(
        &git_dir,
        &[
            "rev-parse",
            "--verify",
            &format!("{rev_to_read}^{{commit}}"),
        ],
    )?
    .trim()
    .to_owned();

    let export = TempDir::new()?;
    let prefix = ["schema/", ""]
        .into_iter()
        .find(|prefix| show(&git_dir, &commit, &format!("{prefix}v1/schema.json")).is_ok())
        .ok_or_else(|| {
            format!("{repo} at {rev} has no schema/v1/schema.json nor v1/schema.json")
        })?;
    for (file, _) in SCHEMA_FILES {
        let bytes = show(&git_dir, &commit, &format!("{prefix}{file}"))?;
        write(&export.path().join(file), &bytes)?;
    }
    // The license of the repository, when it has one at its root.
    if let Ok(license) = show(&git_dir, &commit, "LICENSE") {
        write(&export.path().join("LICENSE"), &license)?;
    }
    let what = format!("{repo} at {rev}");
    let Installed { files, previous } = install(
        export.path(),
        &export.path().join("LICENSE"),
        &schema_dir,
        &what,
    )?;
    let provenance = Provenance {
        version: repo.to_owned(),
        date: None,
        files,
        source: Source::Git {
            rev: rev.to_owned(),
            commit,
        },
    };
    write_provenance(&readme_path, &readme, &provenance, previous)
}

/// Runs `git` in `dir` (its `--git-dir` or work tree), returning its stdout.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args);
    run_command(&mut cmd)
}

/// The bytes of `path` at `commit`.
fn show(dir: &Path, commit: &str, path: &str) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(["show", &format!("{commit}:{path}")]);
    run_for_bytes(&mut cmd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema_update::{check, BEGIN_MARKER, END_MARKER};

    /// A repository with the protocol repository's layout, one commit; its path and commit.
    fn repository(dir: &Path) -> Result<String, String> {
        for (file, _) in SCHEMA_FILES {
            write(&dir.join("schema").join(file), b"{\"$defs\": {}}")?;
        }
        git(dir, &["init", "-q", "-b", "main"])?;
        git(dir, &["add", "."])?;
        git(
            dir,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "-m",
                "schemas",
            ],
        )?;
        Ok(git(dir, &["rev-parse", "HEAD"])?.trim().to_owned())
    }

    fn workspace() -> Result<TempDir, String> {
        let root = TempDir::new()?;
        let readme = format!("# x\n{BEGIN_MARKER}\nold\n{END_MARKER}\n");
        write(&root.path().join("schema/README.md"), readme.as_bytes())?;
        Ok(root)
    }

    /// `--from-git PATH --rev main` and `--from-git file://URL --rev main` copy the files of that
    /// commit and record the repository, the revision and the commit.
    #[test]
    fn from_git_records_the_commit_for_a_path_and_a_url() -> Result<(), String> {
        let repo = TempDir::new()?;
        let commit = repository(repo.path())?;
        let path = repo.path().display().to_string();
        for source in [path.clone(), format!("file://{path}")] {
            let root = workspace()?;
            run(&source, "main", root.path())?;
            let readme = fs::read_to_string(root.path().join("schema/README.md"))
                .map_err(|e| e.to_string())?;
            assert!(readme.contains(&format!("commit `{commit}`")), "{readme}");
            assert!(
                readme.contains(&format!("--from-git {source} --rev main")),
                "{readme}"
            );
            check(root.path())?;
        }
        let root = workspace()?;
        let err = run(&path, "no-such-branch", root.path()).expect_err("an unknown revision");
        assert!(err.contains("no-such-branch"), "{err}");
        Ok(())
    }
}
