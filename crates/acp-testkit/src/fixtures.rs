//! The fixture harness: decodes each file of a fixture tree through a [`Registry`], checks the
//! naming rules and the schema, and renders the snapshot text.
//!
//! Layout of one surface (`fixtures/<vN>/<stable|unstable>/`):
//!
//! - `types/<TypeName>/<case>.json`: decoded with `decode_type(TypeName, value)`;
//! - `messages/<case>.json`: a JSON-RPC message. With `method` and `id` it is a request
//!   (`decode_request`), with `method` alone a notification (`decode_notification`), with
//!   `result` a response (`decode_response`, the method taken from the sibling request file
//!   `<stem>.json`, `<stem>` being this file's name up to its first `.`), with `error` an error
//!   response (the error object decoded as the type `Error`).
//!
//! Rules, each a test failure when broken:
//!
//! - a file whose name starts with `malformed_` must fail to decode, any other must decode;
//! - unless the name contains `lenient`, the re-encoding equals the original (for messages, the
//!   message rebuilt with the re-encoded params / result / error, compared whole);
//! - every re-encoding validates against the schema: types against their `$defs` entry,
//!   messages against the whole schema file.
//!
//! Use from a test, with `insta::glob!` giving each file its own snapshot:
//!
//! ```ignore
//! let mut harness = Harness::new(&REGISTRY, "fixtures/v2/stable");
//! insta::glob!("../../../fixtures/v2/stable", "**/*.json", |path| {
//!     insta::assert_snapshot!(harness.check(path));
//! });
//! harness.finish();
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use serde_json::value::RawValue;
use serde_json::Value;

use crate::schema::Schema;
use crate::{Decoded, Registry};

/// Walks one fixture surface; see the [module docs](self).
pub struct Harness<'r> {
    registry: &'r Registry,
    schema: Schema,
    surface: String,
    root: PathBuf,
    visited: usize,
    failures: Vec<String>,
}

/// What a fixture file is.
enum Kind {
    Type(String),
    Request(String),
    Notification(String),
    Response(String),
    ErrorResponse,
}

impl Kind {
    fn header(&self) -> String {
        match self {
            Kind::Type(name) => format!("type {name}"),
            Kind::Request(method) => format!("request {method}"),
            Kind::Notification(method) => format!("notification {method}"),
            Kind::Response(method) => format!("response to {method}"),
            Kind::ErrorResponse => "error response".to_owned(),
        }
    }
}

/// A fixture file, read and decoded.
struct Read {
    kind: Kind,
    /// The decoded value and the file rebuilt with its re-encoding, or why it does not decode.
    result: Result<(Decoded, Value), String>,
    original: Value,
    malformed: bool,
    lenient: bool,
}

impl<'r> Harness<'r> {
    /// A harness for the surface directory `surface` (relative to the workspace root, e.g.
    /// `"fixtures/v2/stable"`), decoding through `registry`.
    pub fn new(registry: &'r Registry, surface: &str) -> Self {
        let mut harness = Self::at(registry, &crate::workspace_root().join(surface));
        harness.surface = surface.to_owned();
        harness
    }

    /// A harness for the surface directory at `root` (any path; [`Harness::new`] is the usual
    /// way in).
    pub fn at(registry: &'r Registry, root: &Path) -> Self {
        let canonical = root
            .canonicalize()
            .unwrap_or_else(|err| panic!("fixture directory {} is missing: {err}", root.display()));
        Harness {
            registry,
            schema: Schema::load(registry.schema_file),
            surface: root.display().to_string(),
            root: canonical,
            visited: 0,
            failures: Vec::new(),
        }
    }

    /// The rule violations found so far, each prefixed with its file.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// Checks one fixture file and returns its snapshot text. Rule violations are printed and
    /// kept for [`Harness::finish`]; this never panics on a bad fixture, so a `glob!` run goes
    /// through every file.
    pub fn check(&mut self, path: &Path) -> String {
        self.visited += 1;
        let shown = self.display_path(path);
        let mut failures = Vec::new();
        let snapshot = self.check_file(path, &mut failures);
        for failure in failures {
            let failure = format!("{shown}: {failure}");
            eprintln!("fixture rule violated: {failure}");
            self.failures.push(failure);
        }
        snapshot
    }

    /// What decoding one fixture gave, in terms that do not depend on the build's features:
    /// whether it decoded (else the error), how many unknown variants and how many objects with
    /// unknown properties the decoded value holds, and whether it re-encodes to the file. Two
    /// builds that read a message alike give the same outline, so it compares a build with its
    /// drafts hidden (`acp_support::drafts::stable_only`) against one without them.
    pub fn outline(&mut self, path: &Path) -> String {
        self.visited += 1;
        let shown = self.display_path(path);
        let read = match self.read(path) {
            Ok(read) => read,
            Err((failure, _)) => return format!("{shown}: {failure}"),
        };
        match read.result {
            Err(err) => format!("{shown}: {}: error: {err}", read.kind.header()),
            Ok((decoded, rebuilt)) => format!(
                "{shown}: {}: ok, {} unknown variants, {} with unknown properties, {}",
                read.kind.header(),
                decoded.debug.matches("UnknownVariant {").count(),
                decoded.debug.matches("extra: ").count(),
                if crate::same_json(&rebuilt, &read.original) {
                    "re-encoded exactly"
                } else {
                    "re-encoded differently"
                }
            ),
        }
    }

    /// Ends the run: panics when no fixture was checked, when the glob missed files of the
    /// surface, or when any rule was violated.
    pub fn finish(self) {
        let on_disk = count_json_files(&self.root);
        if self.visited == 0 {
            panic!(
                "{}: no fixture was checked (the glob matched nothing)",
                self.surface
            );
        }
        let filtered = std::env::var_os("INSTA_GLOB_FILTER").is_some_and(|f| !f.is_empty());
        if !filtered && self.visited != on_disk {
            panic!(
                "{}: {} fixture files on disk but {} checked: the glob misses some",
                self.surface, on_disk, self.visited
            );
        }
        if !self.failures.is_empty() {
            panic!(
                "{}: {} fixture rule violation(s):\n\n{}",
                self.surface,
                self.failures.len(),
                self.failures.join("\n\n")
            );
        }
        println!("{}: {} fixtures checked", self.surface, self.visited);
    }

    fn display_path(&self, path: &Path) -> String {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        match canonical.strip_prefix(&self.root) {
            Ok(rel) => format!("{}/{}", self.surface, rel.display()),
            Err(_) => path.display().to_string(),
        }
    }

    /// Reads and decodes one fixture file. `Err` holds the rule it breaks and the snapshot text
    /// for it.
    fn read(&self, path: &Path) -> Result<Read, (String, String)> {
        let canonical = match path.canonicalize() {
            Ok(canonical) => canonical,
            Err(err) => {
                return Err((
                    format!("cannot resolve the path: {err}"),
                    format!("error:\ncannot resolve the path: {err}\n"),
                ));
            }
        };
        let rel: Vec<String> = match canonical.strip_prefix(&self.root) {
            Ok(rel) => rel
                .components()
                .filter_map(|c| match c {
                    Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect(),
            Err(_) => {
                return Err((
                    format!("not under {}", self.root.display()),
                    "error:\nnot under the surface directory\n".to_owned(),
                ));
            }
        };
        let file_name = rel.last().cloned().unwrap_or_default();
        let malformed = file_name.starts_with("malformed_");
        let lenient = file_name.contains("lenient");

        let text = match std::fs::read_to_string(&canonical) {
            Ok(text) => text,
            Err(err) => {
                return Err((
                    format!("cannot read: {err}"),
                    format!("error:\ncannot read: {err}\n"),
                ));
            }
        };
        let original: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(err) => {
                return Err((
                    format!("not valid JSON: {err}"),
                    format!("error:\nnot valid JSON: {err}\n"),
                ));
            }
        };

        let (kind, result) = match rel.first().map(String::as_str) {
            Some("types") if rel.len() == 3 => {
                let name = rel[1].clone();
                let result = match (self.registry.decode_type)(&name, original.clone()) {
                    Some(result) => result.map(|decoded| {
                        let reencoded = decoded.reencoded.clone();
                        (decoded, reencoded)
                    }),
                    None => {
                        return Err((
                            format!("no decodable type named {name} (directory types/{name})"),
                            format!("error:\nno decodable type named {name}\n"),
                        ));
                    }
                };
                (Kind::Type(name), result)
            }
            Some("messages") => match self.decode_message(&canonical, &text, &original) {
                Ok((kind, result)) => (kind, result),
                Err(err) => {
                    return Err((err.clone(), format!("error:\n{err}\n")));
                }
            },
            _ => {
                return Err((
                    "unexpected location: expected types/<TypeName>/<case>.json or \
                     messages/<case>.json"
                        .to_owned(),
                    "error:\nunexpected location\n".to_owned(),
                ));
            }
        };

        Ok(Read {
            kind,
            result,
            original,
            malformed,
            lenient,
        })
    }

    fn check_file(&self, path: &Path, failures: &mut Vec<String>) -> String {
        let Read {
            kind,
            result,
            original,
            malformed,
            lenient,
        } = match self.read(path) {
            Ok(read) => read,
            Err((failure, snapshot)) => {
                failures.push(failure);
                return snapshot;
            }
        };

        let mut snapshot = kind.header();
        snapshot.push_str("\n\n");
        match result {
            Err(err) => {
                if !malformed {
                    failures.push(format!("does not decode: {err}"));
                }
                let _ = writeln!(snapshot, "error:\n{err}");
            }
            Ok((decoded, rebuilt)) => {
                if malformed {
                    failures
                        .push("a malformed_ fixture decoded; it must fail to decode".to_owned());
                }
                if !lenient && !malformed && !crate::same_json(&rebuilt, &original) {
                    failures.push(format!(
                        "re-encoding differs from the file (name it *lenient* if that is \
                         intended)\n  file:       {}\n  re-encoded: {}",
                        compact(&original),
                        compact(&rebuilt)
                    ));
                }
                let valid = match &kind {
                    Kind::Type(name) => self.schema.validate_def(name, &rebuilt),
                    _ => self.schema.validate_message(&rebuilt),
                };
                if let Err(err) = valid {
                    failures.push(format!(
                        "re-encoding does not validate against {}:\n{err}",
                        self.registry.schema_file
                    ));
                }
                let _ = writeln!(
                    snapshot,
                    "decoded:\n{}\n\nre-encoded:\n{}",
                    decoded.debug,
                    pretty(&rebuilt)
                );
            }
        }
        snapshot
    }

    /// Decodes a JSON-RPC message file. `Err` is a harness-level problem (not a message, no
    /// sibling request); a decode failure is the inner `Err`.
    #[allow(clippy::type_complexity)]
    fn decode_message(
        &self,
        path: &Path,
        text: &str,
        original: &Value,
    ) -> Result<(Kind, Result<(Decoded, Value), String>), String> {
        let Value::Object(message) = original else {
            return Err("a message file must hold a JSON object".to_owned());
        };
        let raw: BTreeMap<String, Box<RawValue>> = serde_json::from_str(text)
            .map_err(|err| format!("cannot read the message members: {err}"))?;
        let method = message.get("method").map(|m| {
            m.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("`method` is not a string: {m}"))
        });
        let params = raw.get("params").map(|p| &**p);

        let rebuild = |member: &str, reencoded: &Value| -> Value {
            let mut rebuilt = message.clone();
            if message.contains_key(member) || !reencoded.is_null() {
                rebuilt.insert(member.to_owned(), reencoded.clone());
            }
            Value::Object(rebuilt)
        };

        if let Some(method) = method {
            let method = method?;
            let (kind, decoded) = if message.contains_key("id") {
                let decoded = (self.registry.decode_request)(&method, params);
                (Kind::Request(method), decoded)
            } else {
                let decoded = (self.registry.decode_notification)(&method, params);
                (Kind::Notification(method), decoded)
            };
            let result = decoded.map(|d| {
                let rebuilt = rebuild("params", &d.reencoded);
                (d, rebuilt)
            });
            return Ok((kind, result));
        }
        if let Some(result) = raw.get("result") {
            let method = sibling_request_method(path)?;
            let decoded = (self.registry.decode_response)(&method, result).map(|d| {
                let rebuilt = rebuild("result", &d.reencoded);
                (d, rebuilt)
            });
            return Ok((Kind::Response(method), decoded));
        }
        if let Some(error) = message.get("error") {
            let decoded = match (self.registry.decode_type)("Error", error.clone()) {
                Some(decoded) => decoded,
                None => return Err("the registry has no type named Error".to_owned()),
            };
            let result = decoded.map(|d| {
                let rebuilt = rebuild("error", &d.reencoded);
                (d, rebuilt)
            });
            return Ok((Kind::ErrorResponse, result));
        }
        Err("not a JSON-RPC message: no `method`, `result` or `error`".to_owned())
    }
}

/// The `method` of the request file a response file answers: `<stem>.json` beside it, where
/// `<stem>` is the response file's name up to its first `.`.
fn sibling_request_method(path: &Path) -> Result<String, String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.split('.').next().unwrap_or_default();
    let sibling = path.with_file_name(format!("{stem}.json"));
    if sibling == path {
        return Err(format!(
            "a response file needs a name like `{stem}.<what>.json` beside its request `{stem}.json`"
        ));
    }
    let text = std::fs::read_to_string(&sibling).map_err(|err| {
        format!(
            "cannot read the sibling request {}: {err}",
            sibling
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        )
    })?;
    let request: Value = serde_json::from_str(&text)
        .map_err(|err| format!("the sibling request {stem}.json is not JSON: {err}"))?;
    request
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("the sibling request {stem}.json has no string `method`"))
}

fn count_json_files(dir: &Path) -> usize {
    json_files(dir).len()
}

/// Every `.json` file under `dir`, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .flat_map(|entry| {
            let path = entry.path();
            if path.is_dir() {
                json_files(&path)
            } else if path.extension().is_some_and(|ext| ext == "json") {
                vec![path]
            } else {
                Vec::new()
            }
        })
        .collect();
    files.sort();
    files
}

/// The [`Harness::outline`] of every draft fixture of `version` (`fixtures/<version>/unstable`,
/// but the types the stable schema does not have), each decoded in the stable view
/// (`acp_support::drafts::stable_only`), one per line. A build without the drafts, where the view
/// hides nothing, and a build with them must give the same text: snapshot it in both.
pub fn stable_view_outline(registry: &Registry, version: &str) -> String {
    let stable = Schema::load(&format!("schema/{version}/schema.json"));
    let surface = format!("fixtures/{version}/unstable");
    let mut harness = Harness::new(registry, &surface);
    let types = harness.root.join("types");
    let mut lines = Vec::new();
    for path in json_files(&harness.root) {
        let draft_type = path
            .strip_prefix(&types)
            .ok()
            .and_then(|rel| rel.components().next())
            .is_some_and(|name| {
                !stable
                    .defs()
                    .contains_key(&*name.as_os_str().to_string_lossy())
            });
        if !draft_type {
            lines.push(acp_support::drafts::stable_only(|| harness.outline(&path)));
        }
    }
    lines.join("\n")
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|err| format!("<unprintable: {err}>"))
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|err| format!("<unprintable: {err}>"))
}
