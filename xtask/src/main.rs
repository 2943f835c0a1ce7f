//! Project automation for acp-rs.
//!
//! - `cargo xtask codegen [--check] [--stats]`: regenerate the model crates from `schema/`.
//! - `cargo xtask schema-update --version X | --from DIR | --from-git REPO --rev REV | --check`:
//!   refresh `schema/` from the npm package, a directory or a git commit (printing the change
//!   report), or check it against its provenance table.
//! - `cargo xtask schema-diff OLD NEW [--out FILE]`: what changed in the protocol between two
//!   sets of schemas, per version, as a Markdown report with a semver class per entry.
//! - `cargo xtask msrv [--check]`: each crate's `rust-version` against what it compiles.
//! - `cargo xtask publishable`: the crates that are published, one per line (for CI's packaging).

mod codegen;
mod msrv;
mod schema_diff;
mod schema_update;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "acp-rs project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate crates/acp-v1 and crates/acp-v2 from the schemas in schema/.
    Codegen {
        /// Write nothing; fail if a generated file is out of date.
        #[arg(long)]
        check: bool,
        /// Print per-schema figures (types, methods, lines, time).
        #[arg(long)]
        stats: bool,
    },
    /// Replace schema/ with the schemas of an `@agentclientprotocol/sdk` npm release or of a
    /// directory, recording where they came from; or check schema/ against that record.
    SchemaUpdate {
        /// The npm package version, e.g. 2.4.0.
        #[arg(long = "version", required_unless_present_any = ["from", "from_git", "check"])]
        version: Option<String>,
        /// A directory with v1/ and v2/ (or a checkout of the protocol repository, with them
        /// under schema/), instead of npm.
        #[arg(long, value_name = "DIR", conflicts_with = "version")]
        from: Option<std::path::PathBuf>,
        /// A git repository (a local path or a URL) with schema/v1/ and schema/v2/ (or v1/ and
        /// v2/ at its root), read at --rev.
        #[arg(long, value_name = "REPO", conflicts_with_all = ["version", "from"], requires = "rev")]
        from_git: Option<String>,
        /// The revision of --from-git: a branch, tag or commit.
        #[arg(long, value_name = "REV", requires = "from_git")]
        rev: Option<String>,
        /// Write nothing; fail if a schema file does not match the provenance table.
        #[arg(long, conflicts_with_all = ["version", "from", "from_git"])]
        check: bool,
    },
    /// Report what changed in the protocol from the schemas in OLD to those in NEW (each a
    /// directory with v1/ and v2/, or a checkout with them under schema/), as Markdown.
    SchemaDiff {
        /// The older schemas.
        old: std::path::PathBuf,
        /// The newer schemas.
        new: std::path::PathBuf,
        /// Write the report to FILE instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// Show each crate's rust-version against the highest its dependencies declare.
    Msrv {
        /// Fail when a crate's rust-version is lower than a dependency's.
        #[arg(long)]
        check: bool,
    },
    /// List the workspace crates that are published (not `publish = false`), one per line.
    Publishable,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = codegen::workspace_root();
    let result = match cli.command {
        Command::Codegen { check, stats } => codegen::run(&root, check, stats),
        Command::SchemaUpdate {
            version,
            from,
            from_git,
            rev,
            check,
        } => match (version, from, from_git.zip(rev)) {
            _ if check => schema_update::check(&root),
            (_, _, Some((repo, rev))) => schema_update::git::run(&repo, &rev, &root),
            (_, Some(from), None) => schema_update::run_from(&from, &root),
            (Some(version), None, None) => schema_update::run(&version, &root),
            (None, None, None) => {
                Err("give --version X, --from DIR, --from-git REPO --rev REV or --check".into())
            }
        },
        Command::SchemaDiff { old, new, out } => schema_diff::run(&old, &new, out.as_deref()),
        Command::Msrv { check } => msrv::run(&root, check),
        Command::Publishable => msrv::findings(&root).map(|(findings, _)| {
            for finding in findings.iter().filter(|f| f.published) {
                println!("{}", finding.name);
            }
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
