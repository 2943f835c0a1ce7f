//! The types on the protocol's streamed path: what a `session/update` notification can hold.
//!
//! A session's updates are the messages a peer receives by the thousand (every chunk of text,
//! every tool call update); every other message comes a few times per session or per turn. The
//! decoders of the streamed types are `#[inline]`, so each is built into the decoder that reads
//! it. The others are not: an `#[inline]` function is compiled again in every codegen unit that
//! calls it, and all of a model crate's calls from `serde_json`'s reader land in the one codegen
//! unit of `serde_json`'s generic code, which then bounds the build's wall clock. Kept out of
//! line, the other types' decoders are compiled once, beside their types (`docs/performance.md`:
//! the release build, and decode on the streamed corpora unchanged).

use std::collections::BTreeSet;

use crate::codegen::ir::Module;

/// The notification whose params are the streamed path.
pub const STREAMED_METHOD: &str = "session/update";

/// The names of the types the params of [`STREAMED_METHOD`] reach, the params type included;
/// empty when the module has no such method.
pub fn reached(module: &Module) -> BTreeSet<&str> {
    let mut reached = BTreeSet::new();
    let mut pending: Vec<&str> = module
        .methods
        .iter()
        .filter(|m| m.name == STREAMED_METHOD)
        .map(|m| m.params.as_str())
        .collect();
    while let Some(name) = pending.pop() {
        if !reached.insert(name) {
            continue;
        }
        if let Some(def) = module.defs.iter().find(|d| d.name == name) {
            pending.extend(def.kind.referenced());
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::ir::{Def, DefKind, MessageKind, Method, Ty};

    fn def(name: &str, kind: DefKind) -> Def {
        Def {
            name: name.into(),
            docs: None,
            from_defs: true,
            kind,
            unstable: false,
        }
    }

    fn method(name: &str, params: &str) -> Method {
        Method {
            name: name.into(),
            side: "client".into(),
            params: params.into(),
            kind: MessageKind::Notification,
            response: None,
            in_envelope: true,
            unstable: false,
        }
    }

    #[test]
    fn follows_arrays_and_newtypes_from_the_streamed_params_only() {
        let module = Module {
            defs: vec![
                def("Cold", DefKind::Newtype(Ty::String)),
                def("Id", DefKind::Newtype(Ty::String)),
                def(
                    "Ids",
                    DefKind::Newtype(Ty::Array(Box::new(Ty::Named("Id".into())))),
                ),
                def("Params", DefKind::Newtype(Ty::Named("Ids".into()))),
            ],
            methods: vec![
                method(STREAMED_METHOD, "Params"),
                method("session/cancel", "Cold"),
            ],
        };
        let got: Vec<&str> = reached(&module).into_iter().collect();
        assert_eq!(got, ["Id", "Ids", "Params"]);
    }

    #[test]
    fn a_module_without_the_method_streams_nothing() {
        let module = Module {
            defs: vec![def("Params", DefKind::Newtype(Ty::String))],
            methods: vec![method("session/cancel", "Params")],
        };
        assert!(reached(&module).is_empty());
    }
}
