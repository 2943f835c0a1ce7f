//! Decoding tagged unions in one pass, without buffering the whole object first.
//!
//! Generated unions implement [`TaggedUnion`] and call [`deserialize`]. The visitor reads keys
//! until it meets the discriminator; entries before it are kept aside (usually none: ACP peers
//! write the discriminator first). A known tag hands the buffered entries and the rest of the
//! live map to the variant's own `Deserialize`, so its body is parsed once, strictly: a malformed
//! body is an error naming the union and the tag, never the unknown-variant fallback. An unknown
//! tag collects the object into an [`UnknownVariant`] for open unions and is an error for closed
//! ones.
//!
//! A repeated discriminator is an error on every path: the tag that routes a value and the tag it
//! re-encodes with can never differ (`{"sessionUpdate":"_x","sessionUpdate":"user_message"}`
//! must not decode as an unknown update and re-encode as a real one).

use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer, MapAccess};
use serde::Deserialize as _;
use serde_json::Value;

use crate::json_text::{write_serialized, write_str, WriteJson};
use crate::{JsonObject, UnknownVariant};

mod tag_after;

pub use tag_after::TagAfter;

/// A tagged union generated from the schema: what [`deserialize`] needs to know about it.
pub trait TaggedUnion: Sized {
    /// The union's type name, for error messages.
    const NAME: &'static str;
    /// The discriminator property, e.g. `"sessionUpdate"`.
    const TAG: &'static str;
    /// The discriminator values this build knows.
    const KNOWN_TAGS: &'static [&'static str];
    /// Those of [`KNOWN_TAGS`](Self::KNOWN_TAGS) that are drafts (built with the `unstable`
    /// feature): unknown while [`drafts::hidden`](crate::drafts::hidden).
    const DRAFT_TAGS: &'static [&'static str] = &[];
    /// Discriminator values the schema's catch-all excludes though this build has no member for
    /// them (a stable schema reserving the names of its drafts): an error, never an unknown
    /// variant, as the schema says.
    const EXCLUDED_TAGS: &'static [&'static str] = &[];

    /// Decodes the body of the variant for a known `tag` (the discriminator entry removed).
    fn decode_known<'de, D: Deserializer<'de>>(tag: &str, body: D) -> Result<Self, D::Error>;

    /// Looks a discriminator value up among [`KNOWN_TAGS`](Self::KNOWN_TAGS). Generated unions
    /// answer with one `match` (a length switch and a comparison) and number their members for
    /// [`decode_known_map`](Self::decode_known_map); the default scans the table.
    fn known_tag(tag: &str) -> Option<KnownTag> {
        let index = Self::KNOWN_TAGS.iter().position(|known| *known == tag)?;
        let name = Self::KNOWN_TAGS[index];
        Some(KnownTag::new(index, name, Self::DRAFT_TAGS.contains(&name)))
    }

    /// Decodes the body of a known member straight from the rest of the map the discriminator
    /// was read from (nothing read before it); a repeated discriminator in it is an error.
    /// Generated unions decode their members' fields here with no adapter between; the default
    /// goes through [`decode_known`](Self::decode_known).
    fn decode_known_map<'de, A: MapAccess<'de>>(known: KnownTag, map: A) -> Result<Self, A::Error> {
        Self::decode_known(known.name(), rest_of::<Self, A>(map))
    }

    /// The fallback for an unknown tag; a closed union gives the object back.
    fn decode_unknown(raw: UnknownVariant) -> Result<Self, UnknownVariant> {
        Err(raw)
    }

    /// The member used when the discriminator is absent, for unions that have one.
    fn decode_untagged<'de, D: Deserializer<'de>>(body: D) -> Option<Result<Self, D::Error>> {
        let _ = body;
        None
    }

    /// The member used when the discriminator is absent, `null` or not a string, for unions
    /// with a `none` member (a discriminator that is itself optional).
    fn none() -> Option<Self> {
        None
    }
}

/// A discriminator value this build knows: the member's number in its union, its spelling,
/// and whether it is a draft (unknown in the stable view).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownTag {
    index: usize,
    name: &'static str,
    draft: bool,
}

impl KnownTag {
    /// The member numbered `index`, spelled `name`.
    pub const fn new(index: usize, name: &'static str, draft: bool) -> Self {
        Self { index, name, draft }
    }

    /// The member's number, as the union's `known_tag` gives it.
    pub const fn index(self) -> usize {
        self.index
    }

    /// The discriminator value.
    pub const fn name(self) -> &'static str {
        self.name
    }
}

/// Deserialises a [`TaggedUnion`] from a map.
#[inline]
pub fn deserialize<'de, D: Deserializer<'de>, T: TaggedUnion>(
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_map(UnionVisitor(PhantomData))
}

struct UnionVisitor<T>(PhantomData<T>);

enum Key {
    Tag,
    Other(String),
}

struct KeySeed(&'static str);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> de::Visitor<'de> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a property name")
    }
    #[inline]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(if v == self.0 {
            Key::Tag
        } else {
            Key::Other(v.to_owned())
        })
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
        Ok(if v == self.0 { Key::Tag } else { Key::Other(v) })
    }
}

impl<'de, T: TaggedUnion> de::Visitor<'de> for UnionVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a {} object with a `{}` discriminator", T::NAME, T::TAG)
    }

    // The usual shape (the discriminator first, a tag this build knows) is decoded inline, so
    // the member's decoder can be inlined into its caller; anything else goes out of line.
    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        match map.next_key_seed(KeySeed(T::TAG))? {
            Some(Key::Tag) => match map.next_value_seed(TagSeed::<T>(PhantomData))? {
                TagValue::Known(known) => decode_known_first::<T, A>(known, map),
                other => decode_with_tag::<T, A>(other, Vec::new(), map),
            },
            Some(Key::Other(key)) => decode_after_others::<T, A>(key, map),
            None => decode_without_tag::<T, A::Error>(Vec::new()),
        }
    }
}

/// Reads the entries before the discriminator (`first` is the first one's name), then decodes
/// with whatever the discriminator is.
#[inline(never)]
fn decode_after_others<'de, T: TaggedUnion, A: MapAccess<'de>>(
    first: String,
    mut map: A,
) -> Result<T, A::Error> {
    let (buffered, found) = entries_before_tag(T::TAG, first, &mut map)?;
    if !found {
        return decode_without_tag::<T, A::Error>(buffered);
    }
    let tag = map.next_value_seed(TagSeed::<T>(PhantomData))?;
    decode_with_tag::<T, A>(tag, buffered, map)
}

/// Entries read before a union's discriminator, in wire order.
type Buffered = Vec<(String, Value)>;

/// The entries of `map` before the discriminator `tag` (`first` is the first one's name, its value
/// not read yet), and whether the discriminator came (its value is next) or the map ended. It
/// needs nothing of the union but `tag`, so it is compiled once per map type.
fn entries_before_tag<'de, A: MapAccess<'de>>(
    tag: &'static str,
    first: String,
    map: &mut A,
) -> Result<(Buffered, bool), A::Error> {
    let mut buffered: Buffered = vec![(first, map.next_value()?)];
    loop {
        match map.next_key_seed(KeySeed(tag))? {
            Some(Key::Other(key)) => {
                let value: Value = map.next_value()?;
                buffered.push((key, value));
            }
            Some(Key::Tag) => return Ok((buffered, true)),
            None => return Ok((buffered, false)),
        }
    }
}

/// Decodes a known member from the rest of the map, its discriminator having come first.
#[inline]
fn decode_known_first<'de, T: TaggedUnion, A: MapAccess<'de>>(
    known: KnownTag,
    map: A,
) -> Result<T, A::Error> {
    T::decode_known_map(known, map).map_err(|err| malformed::<T, A::Error>(known.name(), err))
}

/// The error for a known member whose body does not decode.
#[cold]
fn malformed<T: TaggedUnion, E: de::Error>(tag: &str, err: E) -> E {
    de::Error::custom(format_args!(
        "{} variant `{}` is malformed: {}",
        T::NAME,
        tag,
        err
    ))
}

/// A discriminator's value, read without allocating when it is a tag this build knows.
enum TagValue {
    /// A known tag, as `KNOWN_TAGS` spells it.
    Known(KnownTag),
    /// Any other string.
    Unknown(String),
    /// Not a string at all.
    NotAString(Value),
}

struct TagSeed<T>(PhantomData<T>);

impl<'de, T: TaggedUnion> DeserializeSeed<'de> for TagSeed<T> {
    type Value = TagValue;
    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<TagValue, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<T: TaggedUnion> TagSeed<T> {
    #[inline]
    fn string(value: &str) -> Option<TagValue> {
        let known = T::known_tag(value)?;
        if known.draft && crate::drafts::hidden() {
            return None;
        }
        Some(TagValue::Known(known))
    }
}

impl<'de, T: TaggedUnion> de::Visitor<'de> for TagSeed<T> {
    type Value = TagValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a discriminator value")
    }
    #[inline]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<TagValue, E> {
        Ok(Self::string(v).unwrap_or_else(|| TagValue::Unknown(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<TagValue, E> {
        Ok(Self::string(&v).unwrap_or(TagValue::Unknown(v)))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<TagValue, E> {
        Ok(TagValue::NotAString(Value::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<TagValue, E> {
        Ok(TagValue::NotAString(Value::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<TagValue, E> {
        Ok(TagValue::NotAString(Value::from(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<TagValue, E> {
        Ok(TagValue::NotAString(Value::from(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<TagValue, E> {
        Ok(TagValue::NotAString(Value::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<TagValue, E> {
        Ok(TagValue::NotAString(Value::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<TagValue, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_seq<S: de::SeqAccess<'de>>(self, seq: S) -> Result<TagValue, S::Error> {
        Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(TagValue::NotAString)
    }
    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<TagValue, M::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(TagValue::NotAString)
    }
}

#[inline(never)]
fn decode_with_tag<'de, T: TaggedUnion, A: MapAccess<'de>>(
    tag: TagValue,
    buffered: Buffered,
    mut map: A,
) -> Result<T, A::Error> {
    let tag = match tag {
        // Only `decode_after_others` passes a known tag here, with the entries before it: the
        // member is decoded from the object rewritten tag first. (Calling the union's inline
        // dispatch here instead compiled a second copy of every member's decoder.)
        TagValue::Known(known) => return decode_reordered::<T, A>(known, buffered, map),
        TagValue::Unknown(tag) if T::EXCLUDED_TAGS.contains(&tag.as_str()) => {
            return Err(excluded::<T, A::Error>(&tag));
        }
        TagValue::Unknown(tag) => tag,
        TagValue::NotAString(other) => {
            if let Some(none) = T::none() {
                drain(UnionNames::of::<T>(), &mut map)?;
                return Ok(none);
            }
            return Err(de::Error::custom(format_args!(
                "{}: `{}` must be a string, found {}",
                T::NAME,
                T::TAG,
                other
            )));
        }
    };
    let json = keep_whole(UnionNames::of::<T>(), &tag, buffered, map, Order::AsRead)?;
    let unknown = match T::decode_unknown(UnknownVariant::from_json(tag, json)) {
        Ok(variant) => return Ok(variant),
        Err(unknown) => unknown,
    };
    let tag = unknown.tag().to_owned();
    // A closed union whose untagged member admits any discriminator (v1 `AuthMethod`).
    if let Some(result) = T::decode_untagged(Value::Object(unknown.into_raw())) {
        return result.map_err(de::Error::custom);
    }
    let expected: Vec<&str> = T::KNOWN_TAGS
        .iter()
        .copied()
        .filter(|known| !is_hidden_draft::<T>(known))
        .collect();
    Err(de::Error::custom(format_args!(
        "{}: unknown `{}` value `{}`, expected one of {:?}",
        T::NAME,
        T::TAG,
        tag,
        expected
    )))
}

/// The error for a discriminator value the schema's catch-all excludes.
#[cold]
fn excluded<T: TaggedUnion, E: de::Error>(tag: &str) -> E {
    E::custom(format_args!(
        "{}: `{}` value `{}` is excluded by the schema here (no member of this build has it, \
         and the catch-all does not take it)",
        T::NAME,
        T::TAG,
        tag
    ))
}

/// `true` when `tag` is a draft member and the drafts are hidden (the stable view).
fn is_hidden_draft<T: TaggedUnion>(tag: &str) -> bool {
    !T::DRAFT_TAGS.is_empty() && crate::drafts::hidden() && T::DRAFT_TAGS.contains(&tag)
}

fn repeated<E: de::Error>(union: UnionNames) -> E {
    E::custom(format_args!(
        "{}: the discriminator `{}` appears more than once",
        union.name, union.tag
    ))
}

/// A union's name and discriminator: all that its slow paths (an object kept whole, a body
/// drained) need of it, so they are compiled once per map type rather than once per union.
#[derive(Clone, Copy)]
struct UnionNames {
    name: &'static str,
    tag: &'static str,
}

impl UnionNames {
    fn of<T: TaggedUnion>() -> Self {
        Self {
            name: T::NAME,
            tag: T::TAG,
        }
    }
}

/// The error for a member's body that names its union's discriminator `tag` again (the union
/// wraps it with its own name and the member's tag).
pub(crate) fn discriminator_repeated<E: de::Error>(tag: &str) -> E {
    E::custom(format_args!(
        "the discriminator `{tag}` appears more than once"
    ))
}

#[inline(never)]
fn decode_without_tag<T: TaggedUnion, E: de::Error>(buffered: Buffered) -> Result<T, E> {
    if let Some(none) = T::none() {
        return Ok(none);
    }
    let mut body = JsonObject::new();
    for (name, value) in buffered {
        if body.contains_key(&name) {
            return Err(de::Error::custom(format_args!("duplicate field `{name}`")));
        }
        body.insert(name, value);
    }
    match T::decode_untagged(Value::Object(body)) {
        Some(result) => result.map_err(de::Error::custom),
        None => Err(de::Error::custom(format_args!(
            "{}: missing discriminator `{}`",
            T::NAME,
            T::TAG
        ))),
    }
}

/// Consumes the rest of a map whose discriminator was not a string (a `none` member), still
/// refusing a repeated discriminator.
fn drain<'de, A: MapAccess<'de>>(union: UnionNames, map: &mut A) -> Result<(), A::Error> {
    while let Some(key) = map.next_key_seed(KeySeed(union.tag))? {
        if matches!(key, Key::Tag) {
            return Err(repeated(union));
        }
        map.next_value::<IgnoredAny>()?;
    }
    Ok(())
}

/// A known member whose discriminator came after other properties (peers write it first, but a
/// schema may declare it after some fields): the object is written out as JSON text with the
/// discriminator first and decoded from that text by the union's usual decoder. Rare, so it pays
/// a second parse of this one object; in exchange no member has a second decoder, generic over
/// an adapter map, compiled for every map type the union is read from.
#[cold]
#[inline(never)]
fn decode_reordered<'de, T: TaggedUnion, A: MapAccess<'de>>(
    known: KnownTag,
    buffered: Buffered,
    map: A,
) -> Result<T, A::Error> {
    let json = keep_whole(
        UnionNames::of::<T>(),
        known.name(),
        buffered,
        map,
        Order::TagFirst,
    )?;
    // Only `serde_json`'s writer has written `json`: it is UTF-8.
    let text = String::from_utf8(json).map_err(de::Error::custom)?;
    let mut reader = serde_json::Deserializer::from_str(&text);
    deserialize::<_, T>(&mut reader).map_err(|err| reparsed_error(&text, &err))
}

/// An error from decoding a reordered object: its message with the path in the object instead
/// of a position in text the peer never sent.
#[cold]
fn reparsed_error<E: de::Error>(text: &str, err: &serde_json::Error) -> E {
    let message = err.to_string();
    let position = format!(" at line {} column {}", err.line(), err.column());
    let message = message.strip_suffix(&position).unwrap_or(&message);
    match crate::error_path::at(text, err) {
        // The object's own error (a missing field): no place in it to name.
        path if path == "." => E::custom(message),
        path => E::custom(format_args!("{message} (at `{path}` in the object)")),
    }
}

/// Where [`keep_whole`] writes the discriminator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Where it was read: after the entries read before it.
    AsRead,
    /// First, ahead of the entries read before it.
    TagFirst,
}

/// Writes the object of an unknown member as compact JSON text, in wire order (`Order::AsRead`:
/// the entries read before the discriminator, the discriminator, then the rest of the map), or
/// with the discriminator moved first. It is decoded one way only: a repeated property (the
/// discriminator or any other) is an error here as anywhere.
fn keep_whole<'de, A: MapAccess<'de>>(
    union: UnionNames,
    tag: &str,
    buffered: Buffered,
    mut map: A,
    order: Order,
) -> Result<Vec<u8>, A::Error> {
    let mut json = Vec::with_capacity(128);
    let mut names = Names::default();
    let write_tag = |json: &mut Vec<u8>| {
        write_str(json, union.tag);
        json.push(b':');
        write_str(json, tag);
    };
    json.push(b'{');
    if order == Order::TagFirst {
        write_tag(&mut json);
        json.push(b',');
    }
    for (name, value) in &buffered {
        let start = json.len();
        write_str(&mut json, name);
        names.keep::<A::Error>(&json, start)?;
        json.push(b':');
        write_serialized(&mut json, value);
        json.push(b',');
    }
    match order {
        Order::AsRead => write_tag(&mut json),
        // The comma after the last buffered entry: the loop writes its own before each entry.
        Order::TagFirst => {
            json.pop();
        }
    }
    loop {
        let at = json.len();
        json.push(b',');
        let start = json.len();
        let seed = RestName {
            out: &mut json,
            union,
        };
        if map.next_key_seed(seed)?.is_none() {
            json.truncate(at);
            break;
        }
        names.keep::<A::Error>(&json, start)?;
        json.push(b':');
        map.next_value_seed(WriteJson(&mut json))?;
    }
    json.push(b'}');
    Ok(json)
}

/// The property names of an object being kept, as the JSON strings written for them: a name
/// written twice is an error. A few names are compared in place; past [`Names::SCAN`] they move
/// to a set, so a peer's object with many names costs linear time.
#[derive(Default)]
struct Names {
    /// The first [`Names::SCAN`] names' spans in the text, held in place (no allocation for
    /// the objects most peers send).
    spans: [(usize, usize); Names::SCAN],
    /// How many of `spans` are in use.
    len: usize,
    set: Option<HashSet<Vec<u8>>>,
}

impl Names {
    const SCAN: usize = 16;

    /// Records the name written at `json[start..]`.
    fn keep<E: de::Error>(&mut self, json: &[u8], start: usize) -> Result<(), E> {
        let name = &json[start..];
        let repeated = match &mut self.set {
            Some(set) => !set.insert(name.to_vec()),
            None => self.spans[..self.len]
                .iter()
                .any(|&(s, e)| &json[s..e] == name),
        };
        if repeated {
            return Err(E::custom(format_args!(
                "duplicate field {}",
                String::from_utf8_lossy(name)
            )));
        }
        if self.set.is_none() {
            if self.len < Self::SCAN {
                self.spans[self.len] = (start, json.len());
                self.len += 1;
            } else {
                let names = self.spans.iter().map(|&(s, e)| json[s..e].to_vec());
                self.set = Some(names.chain([name.to_vec()]).collect());
            }
        }
        Ok(())
    }
}

/// A key seed for the rest of an unknown member's map: writes the name, refusing a repeated
/// discriminator.
struct RestName<'a> {
    out: &'a mut Vec<u8>,
    union: UnionNames,
}

impl<'de> DeserializeSeed<'de> for RestName<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> de::Visitor<'de> for RestName<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a property name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if v == self.union.tag {
            return Err(repeated(self.union));
        }
        write_str(self.out, v);
        Ok(())
    }
}

/// Consumes a variant body that has no fields of its own (a tag-only member).
pub fn unit_body<'de, D: Deserializer<'de>>(body: D) -> Result<(), D::Error> {
    IgnoredAny::deserialize(body).map(|_| ())
}

/// [`unit_body`] for [`TaggedUnion::decode_known_map`]: consumes the rest of the map, refusing a
/// repeated discriminator.
pub fn unit_fields<'de, T: TaggedUnion, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    drain(UnionNames::of::<T>(), &mut map)
}

/// The rest of the map after a union's discriminator, as a deserializer for a member's body
/// that is not a generated struct; a repeated discriminator in it is an error.
pub fn rest_of<'de, T: TaggedUnion, A: MapAccess<'de>>(
    map: A,
) -> MapAccessDeserializer<impl MapAccess<'de, Error = A::Error>> {
    MapAccessDeserializer::new(Rest { map, tag: T::TAG })
}

/// The rest of a live map after its discriminator.
struct Rest<A> {
    map: A,
    /// The discriminator, refused if it appears again.
    tag: &'static str,
}

/// A key seed that refuses the discriminator (a repeated one), passing every other key on
/// without allocating.
struct NotTag<K> {
    tag: &'static str,
    seed: K,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for NotTag<K> {
    type Value = K::Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<K::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, K: DeserializeSeed<'de>> de::Visitor<'de> for NotTag<K> {
    type Value = K::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a property name")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<K::Value, E> {
        if v == self.tag {
            return Err(discriminator_repeated(self.tag));
        }
        self.seed
            .deserialize(de::value::BorrowedStrDeserializer::new(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<K::Value, E> {
        if v == self.tag {
            return Err(discriminator_repeated(self.tag));
        }
        self.seed.deserialize(v.into_deserializer())
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Rest<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let tag = self.tag;
        self.map.next_key_seed(NotTag { tag, seed })
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

#[cfg(test)]
mod tests;
