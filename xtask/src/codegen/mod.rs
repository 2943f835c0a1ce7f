//! `cargo xtask codegen`: the four ACP schemas → one generated model module per protocol version.
//!
//! The pipeline, one module per stage: [`schema`] loads a file, [`classify`] recognises the ACP
//! conventions and builds the [`ir`], [`merge`] folds a version's unstable schema into its stable
//! one (draft additions marked, anything else an error), [`emit`] turns the IR into Rust tokens, and [`output`]
//! formats them with prettyplease and writes (or, with `--check`, compares) the files. The same
//! [`generate`] function serves both modes, so the check cannot drift from the generator.

pub mod classify;
pub mod emit;
pub mod ir;
pub mod merge;
pub mod naming;
pub mod output;
pub mod schema;
#[cfg(test)]
mod shapes;

use std::path::{Path, PathBuf};
use std::time::Instant;

use output::GeneratedFile;

/// A generator failure, naming the schema node (or file) it is about.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CodegenError {
    /// Where: a `$defs` path such as `ToolCallUpdate.title`, or a file.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

impl CodegenError {
    /// An error at `path`.
    pub fn new(path: impl std::fmt::Display, message: impl Into<String>) -> Self {
        Self {
            path: path.to_string(),
            message: message.into(),
        }
    }
}

/// One protocol version: its stable and unstable schemas, merged into one module.
pub struct Target {
    /// The stable schema, relative to the schema directory (`v2/schema.json`).
    pub stable: &'static str,
    /// The unstable schema, whose additions are emitted behind `cfg(feature = "unstable")`.
    pub unstable: &'static str,
    /// The generated module (`crates/acp-v2/src/generated/models.rs`).
    pub module: &'static str,
    /// The generated test registry.
    pub registry: &'static str,
    /// The Rust path of the module, for the registry.
    pub module_path: &'static str,
}

/// Protocol v1 and v2: one type universe each, the draft surface behind the `unstable` feature.
pub const TARGETS: &[Target] = &[
    Target {
        stable: "v1/schema.json",
        unstable: "v1/schema.unstable.json",
        module: "crates/acp-v1/src/generated/models.rs",
        registry: "crates/acp-v1/tests/generated/registry.rs",
        module_path: "acp_v1",
    },
    Target {
        stable: "v2/schema.json",
        unstable: "v2/schema.unstable.json",
        module: "crates/acp-v2/src/generated/models.rs",
        registry: "crates/acp-v2/tests/generated/registry.rs",
        module_path: "acp_v2",
    },
];

/// What one version produced, for `--stats`.
pub struct Stats {
    /// The module generated.
    pub module: &'static str,
    /// `$defs` entries of the stable and the unstable schema.
    pub defs: (usize, usize),
    /// Types generated (lifted inline types included), and how many are unstable-only.
    pub types: (usize, usize),
    /// Methods in the method table, and how many are unstable-only.
    pub methods: (usize, usize),
    /// Lines of the generated module.
    pub lines: usize,
}

/// One schema file, read and parsed.
pub struct Loaded {
    /// Its path as the generated files cite it (`schema/v2/schema.json`).
    pub source: String,
    /// The file's text.
    pub text: String,
    /// The parsed schema, for readers of keywords the IR does not keep (`default`).
    pub schema: schema::Schema,
}

/// One protocol version: both schema files and the IR merged from them.
pub struct Merged {
    /// The stable schema file.
    pub stable: Loaded,
    /// The unstable schema file.
    pub unstable: Loaded,
    /// The merged IR: the stable surface, draft additions marked `unstable`.
    pub module: ir::Module,
}

fn load(schema_dir: &Path, file: &str) -> Result<(Loaded, ir::Module), CodegenError> {
    let path = schema_dir.join(file);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CodegenError::new(path.display(), format!("cannot read: {e}")))?;
    let schema =
        schema::Schema::parse(&text).map_err(|e| CodegenError::new(path.display(), e.message))?;
    let module = classify::classify(&schema)?;
    let loaded = Loaded {
        source: format!("schema/{file}"),
        text,
        schema,
    };
    Ok((loaded, module))
}

/// Loads, classifies and merges one version's two schema files under `schema_dir`: the front
/// end shared by [`generate`] and `cargo xtask schema-diff`.
pub fn merged_module(schema_dir: &Path, target: &Target) -> Result<Merged, CodegenError> {
    let (stable, stable_module) = load(schema_dir, target.stable)?;
    let (unstable, unstable_module) = load(schema_dir, target.unstable)?;
    let module = merge::merge(stable_module, unstable_module)?;
    Ok(Merged {
        stable,
        unstable,
        module,
    })
}

/// Generates every file from the schemas under `schema_dir`, in memory.
pub fn generate(schema_dir: &Path) -> Result<(Vec<GeneratedFile>, Vec<Stats>), CodegenError> {
    let mut files = Vec::new();
    let mut stats = Vec::new();
    for target in TARGETS {
        let Merged {
            stable,
            unstable,
            module,
        } = merged_module(schema_dir, target)?;
        let sources = [
            (stable.source.as_str(), stable.text.as_str()),
            (unstable.source.as_str(), unstable.text.as_str()),
        ];
        let text = output::render(emit::module(&module), &sources)?;
        stats.push(Stats {
            module: target.module,
            defs: (stable.schema.defs().count(), unstable.schema.defs().count()),
            types: (
                module.defs.len(),
                module.defs.iter().filter(|d| d.unstable).count(),
            ),
            methods: (
                module.methods.len(),
                module.methods.iter().filter(|m| m.unstable).count(),
            ),
            lines: text.lines().count(),
        });
        files.push(GeneratedFile {
            path: PathBuf::from(target.module),
            text,
        });
        let registry = emit::registry::registry(
            &module,
            target.module_path,
            (&stable.source, &unstable.source),
        );
        files.push(GeneratedFile {
            path: PathBuf::from(target.registry),
            text: output::render(registry, &sources)?,
        });
    }
    Ok((files, stats))
}

/// What a maintainer runs after the generated files changed (docs/codegen.md walks through it).
pub const NEXT_STEPS: &str = "\nNext:
  1. read schema/CHANGES.md (from schema-update) or `cargo xtask schema-diff OLD NEW`;
     docs/codegen.md maps the generated items the hand-written crates name
  2. cargo check --workspace --all-features --all-targets    # what the hand-written code broke
  3. cargo test -p acp-v1 -p acp-v2 --all-features           # models, fixtures, snapshots
     read every new .snap.new before accepting it (cargo insta review)
  4. cargo test --workspace --all-features                    # the README's test command
  5. commit schema/ and the generated files together (CI runs `cargo xtask codegen --check`)";

/// `cargo xtask codegen [--check] [--stats]`.
pub fn run(root: &Path, check: bool, show_stats: bool) -> Result<(), String> {
    let started = Instant::now();
    let (files, stats) = generate(&root.join("schema")).map_err(|e| e.to_string())?;
    if show_stats {
        for s in &stats {
            println!(
                "{:<40} {:>4}/{:<4} $defs  {:>4} types ({:>3} unstable)  {:>3} methods ({:>2} unstable)  {:>6} lines",
                s.module, s.defs.0, s.defs.1, s.types.0, s.types.1, s.methods.0, s.methods.1, s.lines
            );
        }
        println!("generated in {} ms", started.elapsed().as_millis());
    }
    if check {
        let stale = output::stale(root, &files);
        if stale.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = stale.iter().map(|p| format!("  {}", p.display())).collect();
        return Err(format!(
            "generated files are out of date:\n{}\nrun `cargo xtask codegen` and commit the result",
            list.join("\n")
        ));
    }
    let written = output::write(root, &files).map_err(|e| e.to_string())?;
    for path in &written {
        println!("wrote {}", path.display());
    }
    if written.is_empty() {
        println!("generated files are up to date");
    } else {
        println!("{NEXT_STEPS}");
    }
    Ok(())
}

/// The workspace root, found at run time: the nearest directory holding a `Cargo.toml` with a
/// `[workspace]` table, above the `CARGO_MANIFEST_DIR` cargo sets for `cargo xtask` (else above
/// the current directory). Never the path baked in at build time: with a target directory shared
/// by two checkouts, cargo may run a binary built in the other one.
pub fn workspace_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    find_workspace_root(&start).unwrap_or(start)
}

/// The nearest ancestor of `start` (itself included) whose `Cargo.toml` declares a workspace.
pub fn find_workspace_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        manifest
            .lines()
            .any(|line| line.trim() == "[workspace]")
            .then(|| dir.to_path_buf())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::OnceLock;

    /// The bundled schemas' output, generated once for the tests that only read it (a
    /// generation takes seconds in a debug build).
    pub(super) fn bundled() -> &'static [GeneratedFile] {
        static FILES: OnceLock<Vec<GeneratedFile>> = OnceLock::new();
        FILES.get_or_init(|| {
            let root = workspace_root();
            generate(&root.join("schema"))
                .expect("the bundled schemas generate")
                .0
        })
    }

    /// The schema-drift check, in the normal test suite.
    #[test]
    fn generated_files_are_up_to_date() {
        let stale = output::stale(&workspace_root(), bundled());
        assert!(
            stale.is_empty(),
            "stale generated files {stale:?}: run `cargo xtask codegen`"
        );
    }

    #[test]
    fn generation_is_deterministic() {
        let root = workspace_root();
        let (again, _) = generate(&root.join("schema")).expect("generates");
        assert!(bundled()
            .iter()
            .zip(&again)
            .all(|(a, b)| a.path == b.path && a.text == b.text));
    }

    #[test]
    fn every_file_starts_with_the_preamble() {
        for file in bundled() {
            assert!(
                file.text.starts_with(output::PREAMBLE),
                "{}",
                file.path.display()
            );
        }
    }

    #[test]
    fn unknown_shapes_fail_loudly() {
        let schema = schema::Schema::parse(r#"{"$defs":{"Odd":{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}}}"#)
            .expect("parses");
        let err = classify::classify(&schema)
            .expect_err("an inline union in a property is not a convention");
        assert!(err.to_string().starts_with("Odd.x:"), "{err}");
    }
}
