//! `cargo xtask schema-update --version X`: refreshes the bundled schemas from the npm registry;
//! `--from DIR` takes them from a directory instead (a `v1/` and `v2/` pair, or a checkout of the
//! protocol repository with them under `schema/`); `--from-git REPO --rev REV` from a commit of a
//! git repository ([`git`]); `--check` compares `schema/` with the provenance table ([`check`]).
//! Each update prints the change report of `cargo xtask schema-diff` (old → new) and writes it to
//! `schema/CHANGES.md` for the commit.
//!
//! The official ACP schemas ship in the npm package `@agentclientprotocol/sdk` under
//! `package/schema/v{1,2}/`. This command fetches one version with `npm pack`, unpacks it with
//! `tar`, checks that all four schema files are there and parse as JSON, and only then copies them
//! into `schema/` (with the package's `LICENSE`) and rewrites the provenance section of
//! `schema/README.md`: version, publication date and SHA-256 of each file.
//!
//! It changes nothing else. The second step of the workflow is `cargo xtask codegen`, then a
//! review of the diff and `cargo test`.
//!
//! External tools: `npm`, `tar` and `sha256sum`, run with [`std::process::Command`].

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

pub mod git;

/// The npm package the schemas come from.
pub const PACKAGE: &str = "@agentclientprotocol/sdk";

/// The schema files, as paths relative to `schema/` in the workspace and to `package/schema/` in
/// the npm tarball, each with a short description of its surface.
pub const SCHEMA_FILES: [(&str, &str); 4] = [
    ("v1/schema.json", "protocol v1, stable surface"),
    (
        "v1/schema.unstable.json",
        "protocol v1, stable + opt-in draft features",
    ),
    ("v2/schema.json", "protocol v2, stable baseline"),
    (
        "v2/schema.unstable.json",
        "protocol v2, stable baseline + opt-in draft features",
    ),
];

/// Opens the section of `schema/README.md` that this command rewrites.
pub const BEGIN_MARKER: &str = "<!-- schema-update:begin -->";
/// Closes the section of `schema/README.md` that this command rewrites.
pub const END_MARKER: &str = "<!-- schema-update:end -->";

/// Where one set of bundled schemas came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The exact package version, e.g. `2.4.0`; for a directory, its path; for git, the
    /// repository.
    pub version: String,
    /// The day the version was published (`YYYY-MM-DD`), when the registry said.
    pub date: Option<String>,
    /// Each schema file (relative to `schema/`), its description and its SHA-256 in hex.
    pub files: Vec<(String, String, String)>,
    /// Where the files came from.
    pub source: Source,
}

/// The kinds of source `schema-update` brings schemas in from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An npm release (`--version`).
    Npm,
    /// A directory (`--from`).
    Directory,
    /// A commit of a git repository (`--from-git REPO --rev REV`).
    Git {
        /// The revision asked for.
        rev: String,
        /// The commit it resolved to.
        commit: String,
    },
}

/// Refreshes `schema/` under `workspace_root` from `@agentclientprotocol/sdk@<version>`.
///
/// `version` is anything `npm pack` accepts (`2.4.0`, or a tag such as `latest`); the README
/// records the exact version found in the package. Nothing under `schema/` is written unless all
/// four schema files are present in the package and parse as JSON.
pub fn run(version: &str, workspace_root: &Path) -> Result<(), String> {
    check_version_arg(version)?;
    let schema_dir = workspace_root.join("schema");
    let readme_path = schema_dir.join("README.md");
    let readme = fs::read_to_string(&readme_path)
        .map_err(|e| format!("cannot read {}: {e}", readme_path.display()))?;

    let tmp = TempDir::new()?;
    let spec = format!("{PACKAGE}@{version}");
    eprintln!("schema-update: fetching {spec} with npm pack");
    let mut pack = Command::new("npm");
    pack.arg("pack")
        .arg(&spec)
        .arg("--pack-destination")
        .arg(tmp.path());
    run_command(&mut pack)?;
    let tarball = find_tarball(tmp.path())?;
    let mut untar = Command::new("tar");
    untar.arg("xzf").arg(&tarball).arg("-C").arg(tmp.path());
    run_command(&mut untar)?;

    let package = tmp.path().join("package");
    let exact_version = package_version(&package)?;
    let Installed { files, previous } = install(
        &package.join("schema"),
        &package.join("LICENSE"),
        &schema_dir,
        &spec,
    )?;
    let date = publish_date(&exact_version);
    let provenance = Provenance {
        version: exact_version,
        date,
        files,
        source: Source::Npm,
    };
    write_provenance(&readme_path, &readme, &provenance, previous)
}

/// Refreshes `schema/` under `workspace_root` from the directory `from`: one holding `v1/` and
/// `v2/`, or a checkout of the protocol repository (with them under `schema/`). Nothing is
/// written unless all four files are there and parse as JSON.
pub fn run_from(from: &Path, workspace_root: &Path) -> Result<(), String> {
    let schema_dir = workspace_root.join("schema");
    let readme_path = schema_dir.join("README.md");
    let readme = fs::read_to_string(&readme_path)
        .map_err(|e| format!("cannot read {}: {e}", readme_path.display()))?;
    let source = crate::schema_diff::schema_dir(from)?;
    let source = source
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", source.display()))?;
    if source == schema_dir.canonicalize().unwrap_or_default() {
        return Err("--from names schema/ itself: nothing to bring in".into());
    }
    let shown = source.display().to_string();
    let Installed { files, previous } =
        install(&source, &source.join("LICENSE"), &schema_dir, &shown)?;
    let provenance = Provenance {
        version: shown,
        date: None,
        files,
        source: Source::Directory,
    };
    write_provenance(&readme_path, &readme, &provenance, previous)
}

/// Checks the four files under `source` (each present, each JSON), then copies them and the
/// `license` (when there is one) into `schema_dir`: each file with its description and hash.
/// The schemas it replaces are kept aside for the change report ([`Previous`]).
fn install(
    source: &Path,
    license: &Path,
    schema_dir: &Path,
    what: &str,
) -> Result<Installed, String> {
    // Check everything before writing anything, so a bad source leaves schema/ untouched.
    for (file, _) in SCHEMA_FILES {
        let src = source.join(file);
        let bytes = fs::read(&src).map_err(|e| format!("{what} has no usable {file}: {e}"))?;
        serde_json::from_slice::<serde_json::Value>(&bytes)
            .map_err(|e| format!("{what}: {file} is not valid JSON: {e}"))?;
    }
    let previous = Previous::keep(schema_dir)?;
    let mut files = Vec::with_capacity(SCHEMA_FILES.len());
    for (file, description) in SCHEMA_FILES {
        let dest = schema_dir.join(file);
        copy(&source.join(file), &dest)?;
        files.push((file.to_owned(), description.to_owned(), sha256(&dest)?));
    }
    if license.is_file() {
        copy(license, &schema_dir.join("LICENSE"))?;
    } else {
        eprintln!("schema-update: warning: {what} has no LICENSE; schema/LICENSE left as it was");
    }
    Ok(Installed { files, previous })
}

/// What [`install`] did: each file with its description and hash, and the schemas it replaced.
struct Installed {
    files: Vec<(String, String, String)>,
    previous: Previous,
}

/// A copy of the schemas an update replaces, for the change report; `None` inside when
/// `schema/` did not hold all four (a first import).
struct Previous(Option<TempDir>);

impl Previous {
    fn keep(schema_dir: &Path) -> Result<Self, String> {
        if !SCHEMA_FILES
            .iter()
            .all(|(f, _)| schema_dir.join(f).is_file())
        {
            return Ok(Self(None));
        }
        let tmp = TempDir::new()?;
        for (file, _) in SCHEMA_FILES {
            copy(&schema_dir.join(file), &tmp.path().join(file))?;
        }
        Ok(Self(Some(tmp)))
    }
}

/// Rewrites the provenance section of `schema/README.md`, prints the change report (and writes
/// it to `schema/CHANGES.md`), and says what to do next.
fn write_provenance(
    readme_path: &Path,
    readme: &str,
    provenance: &Provenance,
    previous: Previous,
) -> Result<(), String> {
    let updated = replace_section(readme, &render_provenance(provenance))
        .map_err(|e| format!("{}: {e}", readme_path.display()))?;
    fs::write(readme_path, updated)
        .map_err(|e| format!("cannot write {}: {e}", readme_path.display()))?;
    let now = match &provenance.source {
        Source::Npm => format!("{PACKAGE} {}", provenance.version),
        Source::Directory => format!("the schemas of {}", provenance.version),
        Source::Git { rev, commit } => {
            format!("the schemas of {} at {rev} ({commit})", provenance.version)
        }
    };
    let schema_dir = readme_path.parent().unwrap_or(Path::new("schema"));
    if let Previous(Some(old)) = &previous {
        // Both sides named as the provenance section names them (its first line).
        let was = previous_label(readme);
        let is = previous_label(&render_provenance(provenance));
        let workspace = schema_dir.parent().unwrap_or(Path::new("."));
        let report = crate::schema_diff::report_labelled(
            old.path(),
            schema_dir,
            (&was, &is),
            Some(workspace),
        )?;
        print!("{report}");
        let changes = schema_dir.join("CHANGES.md");
        fs::write(&changes, &report)
            .map_err(|e| format!("cannot write {}: {e}", changes.display()))?;
        eprintln!("schema-update: the report above is in schema/CHANGES.md, for the commit.");
    }
    eprintln!(
        "schema-update: schema/ now holds {now}.\n\
         Next: `cargo xtask codegen` (it lists the commands after it)."
    );
    Ok(())
}

/// What a provenance section says first (the package and version, the directory, or the
/// repository and commit), to name a side of the change report.
fn previous_label(readme: &str) -> String {
    let section = readme
        .find(BEGIN_MARKER)
        .map(|start| &readme[start..])
        .unwrap_or_default();
    section
        .lines()
        .find_map(|line| line.strip_prefix("- "))
        .map(|line| line.replace(['*', '`'], ""))
        .unwrap_or_else(|| "the previous schema/".to_owned())
}

/// Compares each schema file under `workspace_root` with its hash in the provenance table of
/// `schema/README.md`: a file copied by hand (not with `schema-update`) fails, naming the
/// command to run.
pub fn check(workspace_root: &Path) -> Result<(), String> {
    let schema_dir = workspace_root.join("schema");
    let readme_path = schema_dir.join("README.md");
    let readme = fs::read_to_string(&readme_path)
        .map_err(|e| format!("cannot read {}: {e}", readme_path.display()))?;
    let recorded = recorded_hashes(&readme)?;
    let mut wrong = Vec::new();
    for (file, _) in SCHEMA_FILES {
        let actual = sha256(&schema_dir.join(file))?;
        match recorded.iter().find(|(name, _)| name == file) {
            Some((_, hash)) if *hash == actual => {}
            Some((_, hash)) => wrong.push(format!(
                "schema/{file}: sha256 {actual}, the table says {hash}"
            )),
            None => wrong.push(format!("schema/{file}: not in the table")),
        }
    }
    if wrong.is_empty() {
        return Ok(());
    }
    Err(format!(
        "schema/ does not match its provenance table in schema/README.md:\n  {}\n\
         Bring schemas in with `cargo xtask schema-update --version X` (npm) or `--from DIR`, \
         never by hand: it copies the files and records where they came from.",
        wrong.join("\n  ")
    ))
}

/// The `(file, sha256)` rows of the provenance section.
pub fn recorded_hashes(readme: &str) -> Result<Vec<(String, String)>, String> {
    let start = readme
        .find(BEGIN_MARKER)
        .ok_or_else(|| format!("schema/README.md has no `{BEGIN_MARKER}` marker"))?;
    let end = readme[start..]
        .find(END_MARKER)
        .map(|i| start + i)
        .ok_or_else(|| format!("schema/README.md has no `{END_MARKER}` marker"))?;
    Ok(readme[start..end]
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
            let [file, _, hash] = cells.as_slice() else {
                return None;
            };
            let unquote = |cell: &str| cell.trim().trim_matches('`').to_owned();
            let (file, hash) = (unquote(file), unquote(hash));
            (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
                .then_some((file, hash))
        })
        .collect())
}

/// Renders the provenance section of `schema/README.md`, markers included.
pub fn render_provenance(p: &Provenance) -> String {
    let mut out = String::new();
    out.push_str(BEGIN_MARKER);
    out.push_str(
        "\n<!-- Written by `cargo xtask schema-update`; edit outside the markers. -->\n\n",
    );
    match &p.source {
        Source::Directory => {
            out.push_str(&format!(
                "- Source: the directory `{}` (not a published release)\n",
                p.version
            ));
            out.push_str(&format!(
                "- Copied with: `cargo xtask schema-update --from {}`\n\n",
                p.version
            ));
        }
        Source::Git { rev, commit } => {
            out.push_str(&format!(
                "- Source: the git repository `{}`, revision `{rev}`, commit `{commit}`\n",
                p.version
            ));
            out.push_str(&format!(
                "- Copied with: `cargo xtask schema-update --from-git {} --rev {rev}`\n\n",
                p.version
            ));
        }
        Source::Npm => {
            out.push_str(&format!(
                "- Package: `{PACKAGE}`, version **{}**\n",
                p.version
            ));
            if let Some(date) = &p.date {
                out.push_str(&format!("- Published: {date}\n"));
            }
            out.push_str(&format!(
                "- Fetched with: `npm pack {PACKAGE}@{}`, files from `package/schema/`\n\n",
                p.version
            ));
        }
    }
    out.push_str("| file | what | sha256 |\n| --- | --- | --- |\n");
    for (file, what, hash) in &p.files {
        out.push_str(&format!("| `{file}` | {what} | `{hash}` |\n"));
    }
    out.push('\n');
    out.push_str(END_MARKER);
    out
}

/// Replaces the text from [`BEGIN_MARKER`] to [`END_MARKER`] (both included) in `readme` with
/// `section`, keeping everything around it byte for byte.
pub fn replace_section(readme: &str, section: &str) -> Result<String, String> {
    let start = readme
        .find(BEGIN_MARKER)
        .ok_or_else(|| format!("no `{BEGIN_MARKER}` marker"))?;
    let end = readme[start..]
        .find(END_MARKER)
        .map(|i| start + i + END_MARKER.len())
        .ok_or_else(|| format!("no `{END_MARKER}` marker after `{BEGIN_MARKER}`"))?;
    Ok(format!("{}{section}{}", &readme[..start], &readme[end..]))
}

/// Picks the publication day of `version` out of the output of `npm view PKG time --json` (an
/// object from version to RFC 3339 timestamp). `None` when absent or not a timestamp.
pub fn parse_publish_date(time_json: &str, version: &str) -> Option<String> {
    let times: serde_json::Value = serde_json::from_str(time_json).ok()?;
    let stamp = times.get(version)?.as_str()?;
    let day = stamp.get(..10)?;
    let well_formed = day.bytes().enumerate().all(|(i, b)| {
        if i == 4 || i == 7 {
            b == b'-'
        } else {
            b.is_ascii_digit()
        }
    });
    well_formed.then(|| day.to_owned())
}

/// Asks the registry when `version` was published. The date is a nicety: any failure is a
/// warning and the README omits it.
fn publish_date(version: &str) -> Option<String> {
    let mut view = Command::new("npm");
    view.args(["view", &format!("{PACKAGE}@{version}"), "time", "--json"]);
    let date = run_command(&mut view)
        .ok()
        .and_then(|json| parse_publish_date(&json, version));
    if date.is_none() {
        eprintln!("schema-update: warning: no publication date for {version}; README omits it");
    }
    date
}

/// Rejects a version argument that cannot be an npm version or tag, before running anything.
fn check_version_arg(version: &str) -> Result<(), String> {
    let ok = !version.is_empty()
        && !version.starts_with('-')
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{version}` is not a package version (expected e.g. `2.4.0`)"
        ))
    }
}

/// Reads the exact version from the unpacked `package/package.json`.
fn package_version(package: &Path) -> Result<String, String> {
    let path = package.join("package.json");
    let text = fs::read_to_string(&path)
        .map_err(|e| format!("the tarball has no readable package/package.json: {e}"))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("package/package.json is not valid JSON: {e}"))?;
    json.get("version")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| "package/package.json has no string `version`".to_owned())
}

/// The one `.tgz` that `npm pack` left in `dir`.
fn find_tarball(dir: &Path) -> Result<PathBuf, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "tgz"))
        .ok_or_else(|| format!("npm pack left no .tgz in {}", dir.display()))
}

/// The SHA-256 of a file in hex, from `sha256sum`.
fn sha256(path: &Path) -> Result<String, String> {
    let mut cmd = Command::new("sha256sum");
    cmd.arg(path);
    let out = run_command(&mut cmd)?;
    let hash = out.split_whitespace().next().unwrap_or_default();
    if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(hash.to_ascii_lowercase())
    } else {
        Err(format!(
            "unexpected sha256sum output for {}: {out:?}",
            path.display()
        ))
    }
}

/// Copies `src` to `dest`, creating `dest`'s directory when needed.
fn copy(src: &Path, dest: &Path) -> Result<(), String> {
    make_parent(dest)?;
    fs::copy(src, dest)
        .map(drop)
        .map_err(|e| format!("cannot copy {} to {}: {e}", src.display(), dest.display()))
}

/// Writes `bytes` to `path`, creating its directory when needed.
fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    make_parent(path)?;
    fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Creates the directory `path` goes in, when it has one.
fn make_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(parent) => fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display())),
        None => Ok(()),
    }
}

/// Runs a command to completion; its stdout on success, a message with its stderr otherwise.
fn run_command(cmd: &mut Command) -> Result<String, String> {
    let shown = format!("{cmd:?}");
    let stdout = run_for_bytes(cmd)?;
    String::from_utf8(stdout).map_err(|e| format!("{shown} printed non-UTF-8 output: {e}"))
}

/// [`run_command`] for output that need not be text.
fn run_for_bytes(cmd: &mut Command) -> Result<Vec<u8>, String> {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {shown}: {e} (is it installed and on PATH?)"))?;
    if !out.status.success() {
        return Err(format!(
            "{shown} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    Ok(out.stdout)
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, String> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let path =
            std::env::temp_dir().join(format!("acp-schema-update-{}-{nanos}", std::process::id()));
        fs::create_dir(&path)
            .map_err(|e| format!("cannot create temp dir {}: {e}", path.display()))?;
        Ok(Self(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provenance(date: Option<&str>) -> Provenance {
        Provenance {
            version: "2.4.0".to_owned(),
            date: date.map(str::to_owned),
            files: vec![(
                "v1/schema.json".to_owned(),
                "protocol v1, stable surface".to_owned(),
                "0d0b".to_owned(),
            )],
            source: Source::Npm,
        }
    }

    #[test]
    fn renders_version_date_and_hashes() {
        let text = render_provenance(&provenance(Some("2026-11-02")));
        assert!(text.starts_with(BEGIN_MARKER));
        assert!(text.ends_with(END_MARKER));
        assert!(text.contains("version **2.4.0**"));
        assert!(text.contains("- Published: 2026-11-02\n"));
        assert!(text.contains("| `v1/schema.json` | protocol v1, stable surface | `0d0b` |\n"));
    }

    #[test]
    fn omits_unknown_date() {
        assert!(!render_provenance(&provenance(None)).contains("Published"));
    }

    #[test]
    fn replaces_only_the_marked_section() -> Result<(), String> {
        let readme = format!("# Title\n\n{BEGIN_MARKER}\nold\n{END_MARKER}\n\nAfter.\n");
        let section = render_provenance(&provenance(None));
        let updated = replace_section(&readme, &section)?;
        assert_eq!(updated, format!("# Title\n\n{section}\n\nAfter.\n"));
        // Idempotent: a second run gives the same bytes.
        assert_eq!(replace_section(&updated, &section)?, updated);
        Ok(())
    }

    #[test]
    fn missing_markers_are_an_error() {
        assert!(replace_section("# no markers\n", "x").is_err());
        assert!(replace_section(&format!("{BEGIN_MARKER} only"), "x").is_err());
    }

    #[test]
    fn reads_publish_date_from_npm_time() {
        let json = r#"{"created":"2025-01-01T00:00:00Z","2.4.0":"2026-11-02T11:29:07+00:00"}"#;
        assert_eq!(
            parse_publish_date(json, "2.4.0").as_deref(),
            Some("2026-11-02")
        );
        assert_eq!(parse_publish_date(json, "9.9.9"), None);
        assert_eq!(parse_publish_date(r#"{"2.4.0":"soon"}"#, "2.4.0"), None);
        assert_eq!(parse_publish_date("not json", "2.4.0"), None);
    }

    /// The table the README holds is what `--check` reads: every file with its hash, and a
    /// file whose bytes changed without the tool is named with the command to run.
    #[test]
    fn the_check_reads_the_table_and_names_a_hand_copied_file() -> Result<(), String> {
        let hash = "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a";
        let mut p = provenance(None);
        p.files[0].2 = hash.to_owned();
        let readme = format!("# x\n{}\n", render_provenance(&p));
        assert_eq!(
            recorded_hashes(&readme)?,
            [("v1/schema.json".to_owned(), hash.to_owned())]
        );
        assert!(recorded_hashes("no markers").is_err());

        let root = TempDir::new()?;
        let schema = root.path().join("schema");
        for (file, _) in SCHEMA_FILES {
            fs::create_dir_all(schema.join(file).parent().unwrap_or(&schema))
                .map_err(|e| e.to_string())?;
            fs::write(schema.join(file), format!("{{\"file\": \"{file}\"}}"))
                .map_err(|e| e.to_string())?;
        }
        let mut p = provenance(None);
        p.files = SCHEMA_FILES
            .iter()
            .map(|(file, what)| {
                sha256(&schema.join(file)).map(|h| ((*file).to_owned(), (*what).to_owned(), h))
            })
            .collect::<Result<_, _>>()?;
        fs::write(schema.join("README.md"), render_provenance(&p)).map_err(|e| e.to_string())?;
        check(root.path())?;
        // A copy by hand: the bytes change, the table does not.
        fs::write(schema.join("v2/schema.json"), "{}").map_err(|e| e.to_string())?;
        let err = check(root.path()).expect_err("a hand copy fails");
        assert!(err.contains("schema/v2/schema.json: sha256"), "{err}");
        assert!(err.contains("cargo xtask schema-update"), "{err}");
        Ok(())
    }

    /// `--from DIR` takes a directory with v1/ and v2/, or a checkout with them under schema/,
    /// and records it as the source.
    #[test]
    fn from_a_directory_copies_the_files_and_records_the_source() -> Result<(), String> {
        let root = TempDir::new()?;
        let schema = root.path().join("schema");
        fs::create_dir_all(&schema).map_err(|e| e.to_string())?;
        let readme = format!("# x\n{BEGIN_MARKER}\nold\n{END_MARKER}\n");
        fs::write(schema.join("README.md"), readme).map_err(|e| e.to_string())?;
        let checkout = TempDir::new()?;
        for (file, _) in SCHEMA_FILES {
            let path = checkout.path().join("schema").join(file);
            fs::create_dir_all(path.parent().unwrap_or(checkout.path()))
                .map_err(|e| e.to_string())?;
            fs::write(&path, "{\"$defs\": {}}").map_err(|e| e.to_string())?;
        }
        run_from(checkout.path(), root.path())?;
        let written = fs::read_to_string(schema.join("README.md")).map_err(|e| e.to_string())?;
        assert!(written.contains("- Source: the directory `"), "{written}");
        assert!(
            written.contains("cargo xtask schema-update --from "),
            "{written}"
        );
        check(root.path())?;
        // A directory without the files changes nothing.
        let empty = TempDir::new()?;
        assert!(run_from(empty.path(), root.path()).is_err());
        Ok(())
    }

    #[test]
    fn rejects_odd_version_arguments() {
        assert!(check_version_arg("2.4.0").is_ok());
        assert!(check_version_arg("2.5.0-beta.1").is_ok());
        assert!(check_version_arg("").is_err());
        assert!(check_version_arg("--registry=x").is_err());
        assert!(check_version_arg("2.4.0 extra").is_err());
    }

    /// An update over schemas already in place prints the change report and writes it to
    /// schema/CHANGES.md, each side named as the provenance section names it.
    #[test]
    fn an_update_over_schemas_writes_the_change_report() -> Result<(), String> {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/no-unlisted");
        let source = TempDir::new()?;
        for (file, _) in SCHEMA_FILES {
            let name = file.split('/').nth(1).unwrap_or(file);
            copy(&fixture.join(name), &source.path().join(file))?;
        }
        let root = TempDir::new()?;
        let schema = root.path().join("schema");
        fs::create_dir_all(&schema).map_err(|e| e.to_string())?;
        let readme =
            format!("# x\n{BEGIN_MARKER}\n- Package: `old`, version **1**\n{END_MARKER}\n");
        fs::write(schema.join("README.md"), readme).map_err(|e| e.to_string())?;
        // The first import has nothing to compare with: no report.
        run_from(source.path(), root.path())?;
        assert!(!schema.join("CHANGES.md").exists());
        run_from(source.path(), root.path())?;
        let changes = fs::read_to_string(schema.join("CHANGES.md")).map_err(|e| e.to_string())?;
        assert!(
            changes.starts_with("# Schema changes: `Source: the directory "),
            "{changes}"
        );
        assert!(
            changes.contains("## v2 (`acp_v2`)\n\nNo changes.\n"),
            "{changes}"
        );
        Ok(())
    }
}
