//! Encoding a tagged member whose schema declares the discriminator after some of its fields
//! (`{"value": true, "type": "boolean"}`): the discriminator goes where the schema puts it, so a
//! message written in the schema's order re-encodes byte for byte.
//!
//! The body serializes itself as usual; a [`Serializer`] in between counts its entries and
//! writes the discriminator before the first entry past [`TagAfter::after`] (or last).

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};

/// A tagged union member's body with its discriminator written after the first `after`
/// entries. Generated unions use it for members that declare fields before the discriminator;
/// `after` counts those of them that are present in this value.
#[derive(Debug, Clone, Copy)]
pub struct TagAfter<'a, T: ?Sized> {
    /// The discriminator property, e.g. `"type"`.
    pub key: &'static str,
    /// The member's discriminator value.
    pub tag: &'static str,
    /// How many of the body's entries come before the discriminator.
    pub after: usize,
    /// The member's body: a value that serializes as an object.
    pub body: &'a T,
}

impl<T: Serialize + ?Sized> Serialize for TagAfter<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.body.serialize(Inserting {
            inner: serializer,
            key: self.key,
            tag: self.tag,
            after: self.after,
        })
    }
}

/// The serializer the body writes to: objects only.
struct Inserting<S> {
    inner: S,
    key: &'static str,
    tag: &'static str,
    after: usize,
}

impl<S: Serializer> Inserting<S> {
    fn open(self, len: Option<usize>) -> Result<InsertingMap<S::SerializeMap>, S::Error> {
        let mut map = InsertingMap {
            map: self.inner.serialize_map(len.map(|n| n + 1))?,
            key: self.key,
            tag: self.tag,
            remaining: Some(self.after),
        };
        map.before_entry()?;
        Ok(map)
    }
}

fn not_an_object<E: ser::Error>() -> E {
    E::custom("a tagged union member's body must encode as an object")
}

/// The body's map, with the discriminator written when its turn comes.
struct InsertingMap<M> {
    map: M,
    key: &'static str,
    tag: &'static str,
    /// Entries still to come before the discriminator; `None` once it is written.
    remaining: Option<usize>,
}

impl<M: SerializeMap> InsertingMap<M> {
    fn before_entry(&mut self) -> Result<(), M::Error> {
        if self.remaining == Some(0) {
            self.map.serialize_entry(self.key, self.tag)?;
            self.remaining = None;
        }
        Ok(())
    }

    fn after_entry(&mut self) {
        if let Some(remaining) = &mut self.remaining {
            *remaining = remaining.saturating_sub(1);
        }
    }

    fn finish(mut self) -> Result<M::Ok, M::Error> {
        if self.remaining.is_some() {
            self.map.serialize_entry(self.key, self.tag)?;
        }
        self.map.end()
    }
}

impl<M: SerializeMap> SerializeMap for InsertingMap<M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_key<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(), M::Error> {
        self.before_entry()?;
        self.map.serialize_key(key)
    }

    fn serialize_value<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), M::Error> {
        self.map.serialize_value(value)?;
        self.after_entry();
        Ok(())
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), M::Error> {
        self.before_entry()?;
        self.map.serialize_entry(key, value)?;
        self.after_entry();
        Ok(())
    }

    fn end(self) -> Result<M::Ok, M::Error> {
        self.finish()
    }
}

impl<M: SerializeMap> SerializeStruct for InsertingMap<M> {
    type Ok = M::Ok;
    type Error = M::Error;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), M::Error> {
        SerializeMap::serialize_entry(self, key, value)
    }

    fn end(self) -> Result<M::Ok, M::Error> {
        self.finish()
    }
}

/// The `Serializer` methods for values that are not objects: each an error.
macro_rules! not_objects {
    ($($method:ident($($arg:ty),*) -> $out:ty;)*) => {$(
        fn $method(self, $(_: $arg),*) -> Result<$out, S::Error> {
            Err(not_an_object())
        }
    )*};
}

impl<S: Serializer> Serializer for Inserting<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = InsertingMap<S::SerializeMap>;
    type SerializeStruct = InsertingMap<S::SerializeMap>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.open(len)
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.open(Some(len))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<S::Ok, S::Error> {
        Err(not_an_object())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_an_object())
    }

    not_objects! {
        serialize_bool(bool) -> S::Ok;
        serialize_i8(i8) -> S::Ok;
        serialize_i16(i16) -> S::Ok;
        serialize_i32(i32) -> S::Ok;
        serialize_i64(i64) -> S::Ok;
        serialize_u8(u8) -> S::Ok;
        serialize_u16(u16) -> S::Ok;
        serialize_u32(u32) -> S::Ok;
        serialize_u64(u64) -> S::Ok;
        serialize_f32(f32) -> S::Ok;
        serialize_f64(f64) -> S::Ok;
        serialize_char(char) -> S::Ok;
        serialize_str(&str) -> S::Ok;
        serialize_bytes(&[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(&'static str) -> S::Ok;
        serialize_unit_variant(&'static str, u32, &'static str) -> S::Ok;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}
