//! `cargo xtask codegen`: the four ACP schemas → the generated model modules.
//!
//! The pipeline, one module per stage: [`schema`] loads a file, [`classify`] recognises the ACP
//! conventions and builds the [`ir`], [`emit`] turns the IR into Rust tokens, and [`output`]
//! formats them with prettyplease and writes (or, with `--check`, compares) the files. The same
//! [`generate`] function serves both modes, so the check cannot drift from the generator.

pub mod classify;
pub mod emit;
pub mod ir;
pub mod naming;
pub mod output;
pub mod schema;

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

/// One schema file and the files generated from it.
pub struct Target {
    /// The schema, relative to the schema directory (`v2/schema.unstable.json`).
    pub schema: &'static str,
    /// The generated module (`crates/acp-v2/src/generated/unstable.rs`).
    pub module: &'static str,
    /// The generated test registry.
    pub registry: &'static str,
    /// The Rust path of the module, for the registry.
    pub module_path: &'static str,
}

/// The four schemas: protocol v1 and v2, stable and unstable surfaces, each its own module.
pub const TARGETS: &[Target] = &[
    Target {
        schema: "v1/schema.json",
        module: "crates/acp-v1/src/generated/stable.rs",
        registry: "crates/acp-v1/tests/generated/registry_stable.rs",
        module_path: "acp_v1",
    },
    Target {
        schema: "v1/schema.unstable.json",
        module: "crates/acp-v1/src/generated/unstable.rs",
        registry: "crates/acp-v1/tests/generated/registry_unstable.rs",
        module_path: "acp_v1::unstable",
    },
    Target {
        schema: "v2/schema.json",
        module: "crates/acp-v2/src/generated/stable.rs",
        registry: "crates/acp-v2/tests/generated/registry_stable.rs",
        module_path: "acp_v2",
    },
    Target {
        schema: "v2/schema.unstable.json",
        module: "crates/acp-v2/src/generated/unstable.rs",
        registry: "crates/acp-v2/tests/generated/registry_unstable.rs",
        module_path: "acp_v2::unstable",
    },
];

/// What one schema produced, for `--stats`.
pub struct Stats {
    /// The schema file.
    pub schema: &'static str,
    /// `$defs` entries.
    pub defs: usize,
    /// Types generated, lifted inline types included.
    pub types: usize,
    /// Methods in the method table.
    pub methods: usize,
    /// Lines of the generated module.
    pub lines: usize,
}

/// Generates every file from the schemas under `schema_dir`, in memory.
pub fn generate(schema_dir: &Path) -> Result<(Vec<GeneratedFile>, Vec<Stats>), CodegenError> {
    let mut files = Vec::new();
    let mut stats = Vec::new();
    for target in TARGETS {
        let source = format!("schema/{}", target.schema);
        let path = schema_dir.join(target.schema);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| CodegenError::new(path.display(), format!("cannot read: {e}")))?;
        let schema = schema::Schema::parse(&text)
            .map_err(|e| CodegenError::new(path.display(), e.message))?;
        let module = classify::classify(&schema)?;
        let schema_text = text;
        let text = output::render(emit::module(&module), &source, &schema_text)?;
        stats.push(Stats {
            schema: target.schema,
            defs: schema.defs().count(),
            types: module.defs.len(),
            methods: module.methods.len(),
            lines: text.lines().count(),
        });
        files.push(GeneratedFile {
            path: PathBuf::from(target.module),
            text,
        });
        let registry = emit::registry::registry(&module, target.module_path, &source);
        files.push(GeneratedFile {
            path: PathBuf::from(target.registry),
            text: output::render(registry, &source, &schema_text)?,
        });
    }
    Ok((files, stats))
}

/// `cargo xtask codegen [--check] [--stats]`.
pub fn run(root: &Path, check: bool, show_stats: bool) -> Result<(), String> {
    let started = Instant::now();
    let (files, stats) = generate(&root.join("schema")).map_err(|e| e.to_string())?;
    if show_stats {
        for s in &stats {
            println!(
                "{:<26} {:>4} $defs  {:>4} types  {:>3} methods  {:>6} lines",
                s.schema, s.defs, s.types, s.methods, s.lines
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

    /// The schema-drift check, in the normal test suite.
    #[test]
    fn generated_files_are_up_to_date() {
        let root = workspace_root();
        let (files, _) = generate(&root.join("schema")).expect("the bundled schemas generate");
        let stale = output::stale(&root, &files);
        assert!(
            stale.is_empty(),
            "stale generated files {stale:?}: run `cargo xtask codegen`"
        );
    }

    #[test]
    fn generation_is_deterministic() {
        let root = workspace_root();
        let (first, _) = generate(&root.join("schema")).expect("generates");
        let (second, _) = generate(&root.join("schema")).expect("generates");
        assert!(first
            .iter()
            .zip(&second)
            .all(|(a, b)| a.path == b.path && a.text == b.text));
    }

    #[test]
    fn every_file_starts_with_the_preamble() {
        let root = workspace_root();
        let (files, _) = generate(&root.join("schema")).expect("generates");
        for file in files {
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
