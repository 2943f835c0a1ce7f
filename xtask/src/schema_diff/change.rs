//! One entry of the report: what changed, where, and what it means for users of the generated
//! crate.

use std::fmt;

/// What a change means for Rust code that uses the generated crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Code that compiled may stop compiling, or messages that decoded may stop decoding.
    Breaking,
    /// New surface; existing code compiles and decodes as before.
    Additive,
    /// Compiles the same, but a value decodes or defaults differently.
    Behaviour,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 3] = [Class::Breaking, Class::Additive, Class::Behaviour];

    /// The word the report uses.
    pub fn word(self) -> &'static str {
        match self {
            Class::Breaking => "breaking",
            Class::Additive => "additive",
            Class::Behaviour => "behaviour",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// The group of the report an entry is listed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Area {
    /// A method (wire name and side).
    Method,
    /// A type (`$defs` or lifted).
    Type,
    /// An object property.
    Field,
    /// A union variant or member, an enum value, an envelope member.
    Variant,
}

impl Area {
    /// Every area, in report order.
    pub const ALL: [Area; 4] = [Area::Method, Area::Type, Area::Field, Area::Variant];

    /// The heading of the area's group.
    pub fn heading(self) -> &'static str {
        match self {
            Area::Method => "Methods",
            Area::Type => "Types",
            Area::Field => "Fields",
            Area::Variant => "Variants and values",
        }
    }
}

/// One change between two versions of a schema.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    /// The group it is listed in (first, for sorting).
    pub area: Area,
    /// Its semver class.
    pub class: Class,
    /// The generated Rust item (`acp_v2::ToolCall::raw_input`), or for a method its wire name
    /// and side (`session/new (agent)`).
    pub rust_name: String,
    /// What changed, in a few words.
    pub summary: String,
    /// The item is a draft (behind the `unstable` feature) in the newer schema, or was in the
    /// older one when it is gone.
    pub draft: bool,
}

impl Change {
    /// A change of `area` and `class` on `rust_name`.
    pub fn new(
        area: Area,
        class: Class,
        rust_name: impl Into<String>,
        summary: impl Into<String>,
        draft: bool,
    ) -> Self {
        Self {
            area,
            class,
            rust_name: rust_name.into(),
            summary: summary.into(),
            draft,
        }
    }
}

impl Change {
    /// Whether the change alters the generated Rust API (a name, a type, a signature), so that
    /// hand-written code naming the item may stop compiling; a decode flag's change does not.
    pub fn alters_api(&self) -> bool {
        !self.summary.contains("`x-deserialize-")
    }
}

/// The changes for an item that moved between the stable and the draft surface, if it did.
pub fn stability(area: Area, rust_name: &str, was_draft: bool, is_draft: bool) -> Option<Change> {
    match (was_draft, is_draft) {
        (true, false) => Some(Change::new(
            area,
            Class::Additive,
            rust_name,
            "stabilised (no longer needs the `unstable` feature)",
            false,
        )),
        (false, true) => Some(Change::new(
            area,
            Class::Breaking,
            rust_name,
            "moved to draft (gone without the `unstable` feature)",
            true,
        )),
        _ => None,
    }
}
