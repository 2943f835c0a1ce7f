//! `cargo xtask msrv [--check]`: each workspace crate's `rust-version` against what it compiles.
//!
//! A crate's minimum supported Rust version cannot be lower than that of any crate it builds:
//! its normal and build dependencies, transitively, with every feature, on the platforms we
//! support ([`PLATFORMS`]: Linux, macOS and Windows; so `cargo metadata --all-features
//! --filter-platform ...` of the locked graph). A dependency only another target pulls in (a
//! WASI shim, say) does not count. Dev-dependencies do not count (a
//! user of the crate never builds them). The command prints, per workspace crate, the declared
//! `rust-version`, the highest one among its dependencies and the dependency that sets it;
//! `--check` fails when a declared version is lower, or missing on a publishable crate, so a
//! dependency update cannot make the manifests false without CI saying so.
//!
//! What this cannot see is our own code's use of newer language or library features: the machine
//! has one toolchain. The declared versions are at least the workspace's edition floor (1.85).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The targets whose dependency graphs decide a crate's `rust-version`.
pub const PLATFORMS: [&str; 4] = [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
];

/// A `major.minor.patch` version, missing parts `0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct RustVersion(u64, u64, u64);

impl RustVersion {
    /// Parses `1.88` or `1.88.0`; `None` when it is not such a version.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.trim().split('.').map(|part| part.parse::<u64>().ok());
        let major = parts.next()??;
        let minor = parts.next().unwrap_or(Some(0))?;
        let patch = parts.next().unwrap_or(Some(0))?;
        if parts.next().is_some() {
            return None;
        }
        Some(Self(major, minor, patch))
    }
}

impl std::fmt::Display for RustVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self(major, minor, 0) => write!(f, "{major}.{minor}"),
            Self(major, minor, patch) => write!(f, "{major}.{minor}.{patch}"),
        }
    }
}

/// One workspace crate's finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The crate.
    pub name: String,
    /// Its declared `rust-version`.
    pub declared: Option<RustVersion>,
    /// The highest `rust-version` among what it builds, and the dependency that declares it.
    pub needed: Option<Need>,
    /// `false` for `publish = false` crates.
    pub published: bool,
}

impl Finding {
    /// What is wrong with it, if anything.
    pub fn problem(&self) -> Option<String> {
        match (&self.declared, &self.needed) {
            (None, _) if self.published => Some(format!("{}: no rust-version", self.name)),
            (Some(declared), Some((needed, by))) if declared < needed => Some(format!(
                "{}: rust-version {declared}, but {by} needs {needed}",
                self.name
            )),
            _ => None,
        }
    }
}

/// A `rust-version` and the package that declares it.
pub type Need = (RustVersion, String);

/// Reads `cargo metadata` of the workspace at `root` and finds each member's needs, and the
/// workspace's with its dev-dependencies.
pub fn findings(root: &Path) -> Result<(Vec<Finding>, Option<Need>), String> {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.args([
        "metadata",
        "--format-version",
        "1",
        "--all-features",
        "--locked",
    ]);
    for platform in PLATFORMS {
        command.args(["--filter-platform", platform]);
    }
    let output = command
        .current_dir(root)
        .output()
        .map_err(|err| format!("cargo metadata: {err}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: Value = serde_json::from_slice(&output.stdout)
        .map_err(|err| format!("cargo metadata output: {err}"))?;
    Ok((from_metadata(&metadata)?, workspace_need(&metadata)))
}

/// The findings of a `cargo metadata` document.
pub fn from_metadata(metadata: &Value) -> Result<Vec<Finding>, String> {
    let bad = |what: &str| format!("cargo metadata: no {what}");
    let packages: BTreeMap<&str, &Value> = metadata["packages"]
        .as_array()
        .ok_or_else(|| bad("packages"))?
        .iter()
        .filter_map(|p| Some((p["id"].as_str()?, p)))
        .collect();
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .ok_or_else(|| bad("resolve"))?
        .iter()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let members = metadata["workspace_members"]
        .as_array()
        .ok_or_else(|| bad("workspace_members"))?;
    let version_of = |id: &str| {
        packages
            .get(id)
            .and_then(|p| p["rust_version"].as_str())
            .and_then(RustVersion::parse)
    };
    let name_of = |id: &str| {
        packages
            .get(id)
            .and_then(|p| p["name"].as_str())
            .unwrap_or(id)
            .to_owned()
    };
    let mut findings = Vec::new();
    for member in members.iter().filter_map(Value::as_str) {
        let mut seen = HashSet::new();
        let mut stack = vec![member];
        let mut needed: Option<Need> = None;
        while let Some(id) = stack.pop() {
            let deps = nodes.get(id).and_then(|n| n["deps"].as_array());
            for dep in deps.into_iter().flatten() {
                let built = dep["dep_kinds"].as_array().is_some_and(|kinds| {
                    kinds
                        .iter()
                        .any(|kind| kind["kind"].as_str() != Some("dev"))
                });
                let Some(dep_id) = dep["pkg"].as_str() else {
                    continue;
                };
                if !built || !seen.insert(dep_id) {
                    continue;
                }
                stack.push(dep_id);
                if let Some(version) = version_of(dep_id) {
                    if needed.as_ref().is_none_or(|(best, _)| version > *best) {
                        needed = Some((version, name_of(dep_id)));
                    }
                }
            }
        }
        let package = packages.get(member).ok_or_else(|| bad(member))?;
        // `publish = false` is `"publish": []` in cargo metadata; absent (null) is publishable.
        let published = package["publish"]
            .as_array()
            .is_none_or(|registries| !registries.is_empty());
        findings.push(Finding {
            name: name_of(member),
            declared: version_of(member),
            needed,
            published,
        });
    }
    findings.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(findings)
}

/// The highest `rust-version` among every package of the graph, dev-dependencies included: what
/// building the workspace with its tests needs (contributors, not users).
pub fn workspace_need(metadata: &Value) -> Option<Need> {
    metadata["packages"]
        .as_array()?
        .iter()
        .filter_map(|p| {
            let version = RustVersion::parse(p["rust_version"].as_str()?)?;
            Some((version, p["name"].as_str()?.to_owned()))
        })
        .max()
}

/// Prints the table; with `check`, fails on a problem.
pub fn run(root: &Path, check: bool) -> Result<(), String> {
    let (findings, workspace) = findings(root)?;
    println!("{:<16} {:>9} {:>9}  set by", "crate", "declared", "needed");
    for finding in &findings {
        let declared = finding
            .declared
            .map_or_else(|| "-".to_owned(), |v| v.to_string());
        let (needed, by) = finding.needed.as_ref().map_or_else(
            || ("-".to_owned(), ""),
            |(v, by)| (v.to_string(), by.as_str()),
        );
        let mark = if finding.problem().is_some() {
            "  <- too low"
        } else {
            ""
        };
        println!("{:<16} {declared:>9} {needed:>9}  {by}{mark}", finding.name);
    }
    if let Some((version, by)) = workspace {
        println!(
            "the workspace with its tests and tools (dev-dependencies too): {version}, set by {by}"
        );
    }
    let problems: Vec<String> = findings.iter().filter_map(Finding::problem).collect();
    if check && !problems.is_empty() {
        return Err(format!(
            "rust-version is not the truth:\n  {}\nraise each crate's rust-version in its Cargo.toml",
            problems.join("\n  ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metadata() -> Value {
        let dep =
            |pkg: &str, kind: Option<&str>| json!({"pkg": pkg, "dep_kinds": [{"kind": kind}]});
        json!({
            "packages": [
                {"id": "a", "name": "a", "rust_version": "1.85", "publish": null},
                {"id": "tool", "name": "tool", "rust_version": null, "publish": []},
                {"id": "x", "name": "x", "rust_version": "1.80.1"},
                {"id": "y", "name": "y", "rust_version": "1.88"},
                {"id": "t", "name": "t", "rust_version": "1.91"}
            ],
            "workspace_members": ["a", "tool"],
            "resolve": {"nodes": [
                {"id": "a", "deps": [dep("x", None), dep("t", Some("dev"))]},
                {"id": "tool", "deps": [dep("x", None)]},
                {"id": "x", "deps": [dep("y", Some("build"))]},
                {"id": "y", "deps": []},
                {"id": "t", "deps": []}
            ]}
        })
    }

    #[test]
    fn the_highest_built_dependency_sets_the_need_and_dev_dependencies_do_not() {
        let findings = from_metadata(&metadata()).expect("findings");
        let a = &findings[0];
        assert_eq!(a.name, "a");
        assert_eq!(a.needed, Some((RustVersion(1, 88, 0), "y".to_owned())));
        assert_eq!(
            a.problem().as_deref(),
            Some("a: rust-version 1.85, but y needs 1.88")
        );
        // An unpublished tool without a rust-version is no problem.
        assert_eq!(findings[1].problem(), None);
        // Contributors build the dev-dependencies too.
        assert_eq!(
            workspace_need(&metadata()),
            Some((RustVersion(1, 91, 0), "t".to_owned()))
        );
    }

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(RustVersion::parse("1.88"), Some(RustVersion(1, 88, 0)));
        assert!(RustVersion::parse("1.88.1") > RustVersion::parse("1.88"));
        assert_eq!(RustVersion::parse("1.x"), None);
        assert_eq!(RustVersion(1, 88, 0).to_string(), "1.88");
    }
}
