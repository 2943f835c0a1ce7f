//! The intermediate representation: what the classifier recognised in a schema, in terms of the
//! ACP conventions, and all that the emitter needs. No JSON here and no tokens.

/// One generated module: every `$defs` entry of one schema file, plus the types the classifier
/// lifted out of inline schemas, sorted by name.
#[derive(Debug)]
pub struct Module {
    /// Every type, sorted by name.
    pub defs: Vec<Def>,
    /// Every method, sorted by wire name then side.
    pub methods: Vec<Method>,
}

/// A named type.
#[derive(Debug)]
pub struct Def {
    /// The Rust (and `$defs`) name.
    pub name: String,
    /// The schema's description.
    pub docs: Option<String>,
    /// `false` for types the classifier lifted out of an inline schema.
    pub from_defs: bool,
    /// What kind of type it is.
    pub kind: DefKind,
    /// Only in the unstable schema: emitted behind `#[cfg(feature = "unstable")]`.
    pub unstable: bool,
}

/// The shapes the ACP schemas use.
#[derive(Debug)]
pub enum DefKind {
    /// An object with known properties.
    Struct(Struct),
    /// A wrapper around one other type (`SessionId(String)`, `ExtRequest(Value)`).
    Newtype(Ty),
    /// An enum of string constants, open (with a catch-all string) or closed.
    StrEnum(ConstEnum<String>),
    /// An enum of integer constants (the schema's `ErrorCode`).
    IntEnum(ConstEnum<i64>, IntKind),
    /// A union discriminated by a string property.
    Tagged(TaggedUnion),
    /// A union decided by shape (`RequestId`, `ErrorData`).
    Untagged(Vec<UntaggedMember>),
    /// A JSON-RPC envelope routed by method (`ClientRequest`, `AgentNotification` ...).
    Envelope(Envelope),
}

impl DefKind {
    /// The named types this definition holds directly (through arrays and maps), in schema
    /// order, with repeats: an envelope's params and results too.
    pub fn referenced(&self) -> Vec<&str> {
        fn named<'a>(ty: &'a Ty, names: &mut Vec<&'a str>) {
            match ty {
                Ty::Named(name) => names.push(name),
                Ty::Array(inner) | Ty::Map(inner) => named(inner, names),
                _ => {}
            }
        }
        let mut names = Vec::new();
        match self {
            DefKind::Struct(s) => {
                for field in &s.fields {
                    named(&field.ty, &mut names);
                }
                if let Some(flattened) = &s.flattened {
                    names.push(flattened.type_name.as_str());
                }
            }
            DefKind::Newtype(ty) => named(ty, &mut names),
            DefKind::Tagged(u) => {
                names.extend(u.variants.iter().filter_map(|v| v.body.as_deref()));
                if let Some((_, ty)) = &u.untagged {
                    named(ty, &mut names);
                }
            }
            DefKind::Untagged(members) => {
                for ty in members.iter().filter_map(|m| m.ty.as_ref()) {
                    named(ty, &mut names);
                }
            }
            DefKind::Envelope(e) => names.extend(e.members.iter().map(|m| m.def.as_str())),
            DefKind::StrEnum(_) | DefKind::IntEnum(..) => {}
        }
        names
    }
}

/// An object type.
#[derive(Debug)]
pub struct Struct {
    /// Properties in schema order.
    pub fields: Vec<Field>,
    /// `additionalProperties: true`: unknown properties are kept.
    pub extra_properties: bool,
    /// A union merged into the object (`anyOf` beside `properties`), emitted as its own type.
    pub flattened: Option<Flattened>,
}

/// A union flattened into a struct.
#[derive(Debug)]
pub struct Flattened {
    /// The Rust field name.
    pub field: String,
    /// The union's type name.
    pub type_name: String,
}

/// One property of an object.
#[derive(Debug)]
pub struct Field {
    /// The wire name.
    pub json_name: String,
    /// The Rust name (snake_case, keywords escaped).
    pub rust_name: String,
    /// The property's description.
    pub docs: Option<String>,
    /// The value type (without the optional / nullable wrapper).
    pub ty: Ty,
    /// Whether the property must be present and whether it may be `null`.
    pub presence: Presence,
    /// `x-deserialize-default-on-error`.
    pub default_on_error: bool,
    /// `x-deserialize-default-on-null`.
    pub default_on_null: bool,
    /// `x-deserialize-skip-invalid-items`.
    pub skip_invalid_items: bool,
    /// Only in the unstable schema: emitted behind `#[cfg(feature = "unstable")]`.
    pub unstable: bool,
}

/// Required / optional × nullable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Required, not nullable: `T`.
    Required,
    /// Required and nullable: `Option<T>`, always serialised.
    RequiredNullable,
    /// Optional, not nullable: `Option<T>`, `null` rejected.
    Optional,
    /// Optional and nullable: `Patch<T>`, omitted / `null` / value kept apart.
    OptionalNullable,
}

/// A value type.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// A named type of this module.
    Named(String),
    /// `string`.
    String,
    /// `boolean`.
    Bool,
    /// `integer`, by its `format`.
    Int(IntKind),
    /// `number`.
    Float,
    /// Any JSON value (`{}`).
    Any,
    /// `array` of items.
    Array(Box<Ty>),
    /// `object` whose values follow one schema.
    Map(Box<Ty>),
    /// `object` with any properties.
    Object,
    /// The `_meta` object.
    Meta,
}

/// The Rust integer type for an `integer` schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntKind {
    /// `int32`.
    I32,
    /// `int64` or no format.
    I64,
    /// `uint16`.
    U16,
    /// `uint32`.
    U32,
    /// `uint64`.
    U64,
}

/// An enum of constants.
#[derive(Debug)]
pub struct ConstEnum<V> {
    /// The known values.
    pub variants: Vec<ConstVariant<V>>,
    /// The catch-all of an open enum: its variant name and docs.
    pub other: Option<Named>,
}

/// One known constant.
#[derive(Debug)]
pub struct ConstVariant<V> {
    /// The wire value.
    pub value: V,
    /// The Rust variant name.
    pub rust_name: String,
    /// Its description.
    pub docs: Option<String>,
    /// Only in the unstable schema: emitted behind `#[cfg(feature = "unstable")]`.
    pub unstable: bool,
}

/// A variant name with its docs.
#[derive(Debug, Clone)]
pub struct Named {
    /// The Rust variant name.
    pub rust_name: String,
    /// Its description.
    pub docs: Option<String>,
}

/// A union discriminated by a string property.
#[derive(Debug)]
pub struct TaggedUnion {
    /// The discriminator property.
    pub tag: String,
    /// The members with a known discriminator value.
    pub variants: Vec<TaggedVariant>,
    /// The open union's catch-all (`title: "other"` with `not`).
    pub fallback: Option<Named>,
    /// Discriminator values the catch-all's `not` list excludes though no member has them (a
    /// stable schema reserving its drafts' names): decoding them is an error, not an unknown.
    pub excluded: Vec<ExcludedTag>,
    /// A member without the discriminator, used when it is absent.
    pub untagged: Option<(Named, Ty)>,
    /// A member for an absent or `null` discriminator (`title: "none"`).
    pub none: Option<Named>,
}

/// A discriminator value a catch-all excludes without a member of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExcludedTag {
    /// The discriminator value.
    pub value: String,
    /// Only the unstable schema excludes it: emitted behind `#[cfg(feature = "unstable")]`.
    pub unstable: bool,
}

/// A member with a known discriminator value.
#[derive(Debug)]
pub struct TaggedVariant {
    /// The discriminator value.
    pub value: String,
    /// The Rust variant name.
    pub rust_name: String,
    /// Its description.
    pub docs: Option<String>,
    /// What the rest of the object holds.
    pub body: Option<String>,
    /// The wire names of the body's properties the schema declares before the discriminator
    /// (usually none): the encoder writes the discriminator after those of them present.
    pub declared_before_tag: Vec<String>,
    /// Only in the unstable schema: emitted behind `#[cfg(feature = "unstable")]`.
    pub unstable: bool,
}

/// A member of an untagged union.
#[derive(Debug)]
pub struct UntaggedMember {
    /// The Rust variant name.
    pub rust_name: String,
    /// Its description.
    pub docs: Option<String>,
    /// Its type; `None` for the `null` member.
    pub ty: Option<Ty>,
    /// Only in the unstable schema: emitted behind `#[cfg(feature = "unstable")]`.
    pub unstable: bool,
}

/// A JSON-RPC envelope: the methods one side sends, routed by method name.
#[derive(Debug)]
pub struct Envelope {
    /// Request, notification or response.
    pub kind: MessageKind,
    /// The routed members.
    pub members: Vec<EnvelopeMember>,
    /// The extension member (`_`-prefixed methods), if the envelope has one.
    pub ext: Option<Named>,
}

/// One method in an envelope.
#[derive(Debug)]
pub struct EnvelopeMember {
    /// The Rust variant name (the member's title).
    pub rust_name: String,
    /// Its description.
    pub docs: Option<String>,
    /// The params or result type.
    pub def: String,
    /// The wire method.
    pub method: String,
    /// Only in the unstable schema: emitted behind `#[cfg(feature = "unstable")]`.
    pub unstable: bool,
}

/// The three kinds of JSON-RPC message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MessageKind {
    /// Has an id and expects a response.
    Request,
    /// Has no id.
    Notification,
    /// Answers a request.
    Response,
}

/// A method from `x-method` / `x-side`.
#[derive(Debug)]
pub struct Method {
    /// The wire name.
    pub name: String,
    /// The side that handles it (`agent`, `client`, `protocol`, `proxy`).
    pub side: String,
    /// The params type of the request or notification.
    pub params: String,
    /// Request or notification.
    pub kind: MessageKind,
    /// The result type, for requests.
    pub response: Option<String>,
    /// `false` for a method no envelope lists (`$/cancel_request` in newer schemas).
    pub in_envelope: bool,
    /// Only in the unstable schema: emitted behind `#[cfg(feature = "unstable")]`.
    pub unstable: bool,
}
