//! Tests of the generator on schema shapes the bundled schemas do not have (yet): small schemas
//! under `xtask/tests/fixtures/`, each cut from a real one, generated the way `codegen` does.
//!
//! - `no-unlisted`: no notification outside an envelope (the protocol repository moved
//!   `$/cancel_request` into one): the registry's functions must still use every parameter.
//! - `excluded-tags`: a stable catch-all whose `not` list names tags that are only drafts
//!   (`PlanUpdateContent` in the protocol repository): those tags are errors, not unknowns.
//! - `tag-declared-late`: union members that declare `value` before `type`
//!   (`SetSessionConfigOptionRequest` in the protocol repository): encoded in that order.

use std::path::PathBuf;

use syn::visit_mut::VisitMut;

use super::{emit, merged_module, output, Merged, Target};

/// What the generator writes for one fixture: the models and the test registry.
struct Generated {
    models: String,
    registry: String,
}

fn generate_fixture(name: &str) -> Generated {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let fixture = Target {
        stable: "schema.json",
        unstable: "schema.unstable.json",
        module: "models.rs",
        registry: "registry.rs",
        module_path: "acp_fixture",
    };
    let Merged {
        stable,
        unstable,
        module,
    } = merged_module(&dir, &fixture).expect("the fixture classifies and merges");
    let sources = [
        (stable.source.as_str(), stable.text.as_str()),
        (unstable.source.as_str(), unstable.text.as_str()),
    ];
    let models = output::render(emit::module(&module), &sources).expect("models render");
    let registry =
        emit::registry::registry(&module, "acp_fixture", (&stable.source, &unstable.source));
    let registry = output::render(registry, &sources).expect("registry renders");
    Generated { models, registry }
}

/// Removes what a `cfg` attribute may compile away: statements, array elements, match arms.
struct StripGated;

fn gated(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg"))
}

fn stmt_attrs(stmt: &syn::Stmt) -> &[syn::Attribute] {
    match stmt {
        syn::Stmt::Local(local) => &local.attrs,
        syn::Stmt::Macro(mac) => &mac.attrs,
        syn::Stmt::Item(_) => &[],
        syn::Stmt::Expr(expr, _) => expr_attrs(expr),
    }
}

fn expr_attrs(expr: &syn::Expr) -> &[syn::Attribute] {
    match expr {
        syn::Expr::If(e) => &e.attrs,
        syn::Expr::Call(e) => &e.attrs,
        syn::Expr::MethodCall(e) => &e.attrs,
        syn::Expr::Tuple(e) => &e.attrs,
        syn::Expr::Closure(e) => &e.attrs,
        syn::Expr::Path(e) => &e.attrs,
        syn::Expr::Lit(e) => &e.attrs,
        syn::Expr::Return(e) => &e.attrs,
        syn::Expr::Macro(e) => &e.attrs,
        syn::Expr::Block(e) => &e.attrs,
        _ => &[],
    }
}

impl VisitMut for StripGated {
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        block.stmts.retain(|stmt| !gated(stmt_attrs(stmt)));
        syn::visit_mut::visit_block_mut(self, block);
    }

    fn visit_expr_array_mut(&mut self, array: &mut syn::ExprArray) {
        array.elems = std::mem::take(&mut array.elems)
            .into_iter()
            .filter(|e| !gated(expr_attrs(e)))
            .collect();
        syn::visit_mut::visit_expr_array_mut(self, array);
    }

    fn visit_expr_match_mut(&mut self, m: &mut syn::ExprMatch) {
        m.arms.retain(|arm| !gated(&arm.attrs));
        syn::visit_mut::visit_expr_match_mut(self, m);
    }
}

/// The parameters of free functions in `text` that no code outside a `cfg` uses: each would be
/// an unused variable in a build where those `cfg`s are off (or where a list is empty).
fn unused_parameters(text: &str) -> Vec<String> {
    let file = syn::parse_file(text).expect("generated code parses");
    let mut unused = Vec::new();
    for item in file.items {
        let syn::Item::Fn(mut function) = item else {
            continue;
        };
        StripGated.visit_block_mut(&mut function.block);
        let mut used = std::collections::BTreeSet::new();
        collect_idents(quote::ToTokens::to_token_stream(&function.block), &mut used);
        for input in &function.sig.inputs {
            let syn::FnArg::Typed(arg) = input else {
                continue;
            };
            let syn::Pat::Ident(pat) = &*arg.pat else {
                continue;
            };
            let name = pat.ident.to_string();
            if !name.starts_with('_') && !used.contains(&name) {
                unused.push(format!("{}({name})", function.sig.ident));
            }
        }
    }
    unused
}

fn collect_idents(tokens: proc_macro2::TokenStream, into: &mut std::collections::BTreeSet<String>) {
    for token in tokens {
        match token {
            proc_macro2::TokenTree::Ident(ident) => {
                into.insert(ident.to_string());
            }
            proc_macro2::TokenTree::Group(group) => collect_idents(group.stream(), into),
            _ => {}
        }
    }
}

/// Blind spot 3: with no notification outside an envelope, `decode_unlisted` had nothing to
/// route and left `method` and `params` unused (a warning, an error under `-D warnings`).
#[test]
fn the_registry_uses_every_parameter_when_no_notification_is_unlisted() {
    let generated = generate_fixture("no-unlisted");
    assert_eq!(unused_parameters(&generated.registry), Vec::<String>::new());
}

/// The same property on the bundled schemas, whose unlisted notification is stable.
#[test]
fn the_bundled_registries_use_every_parameter() {
    for file in super::tests::bundled() {
        if file.path.ends_with("registry.rs") {
            assert_eq!(
                unused_parameters(&file.text),
                Vec::<String>::new(),
                "{}",
                file.path.display()
            );
        }
    }
}

/// Blind spot 1: the protocol repository's stable `PlanUpdateContent` excludes `file` and
/// `markdown` (its drafts) from the catch-all. The generator read only the members, so a stable
/// build took `type: markdown` as an unknown variant, which the stable schema forbids.
#[test]
fn a_catch_alls_not_list_excludes_the_drafts_names() {
    let generated = generate_fixture("excluded-tags");
    let models = syn::parse_file(&generated.models).expect("models parse");
    let text = quote::ToTokens::to_token_stream(&models).to_string();
    assert!(
        text.contains(
            r#"const EXCLUDED_TAGS : & 'static [& 'static str] = & ["file" , "markdown"] ;"#
        ),
        "no exclusions in PlanUpdateContent's TaggedUnion impl"
    );
}

/// Blind spot 2: the protocol repository's `SetSessionConfigOptionRequest` members declare
/// `value` before `type`; the encoder wrote `type` first, so a message in the schema's order did
/// not re-encode byte for byte.
#[test]
fn a_discriminator_declared_late_is_encoded_where_declared() {
    let generated = generate_fixture("tag-declared-late");
    let models = syn::parse_file(&generated.models).expect("models parse");
    let text = quote::ToTokens::to_token_stream(&models).to_string();
    for tag in ["id", "boolean"] {
        let arm = format!(
            "key : \"type\" , tag : \"{tag}\" , after : 1 , body , }} . serialize (serializer)"
        );
        assert!(text.contains(&arm), "`{tag}` is not encoded after `value`");
    }
    // Nothing left uses the `Tagged` helper, so it is not emitted (it would be dead code).
    assert!(!text.contains("struct Tagged"), "an unused `Tagged` helper");
}
