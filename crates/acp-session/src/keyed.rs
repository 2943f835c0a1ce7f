//! [`Keyed`]: entries in first-seen order, found by id in O(1).

use std::collections::HashMap;
use std::hash::Hash;

use serde::{Serialize, Serializer};

/// An ordered collection of entries keyed by id: insertion order is history order, lookups and
/// appends are O(1) (amortised).
#[derive(Debug, Clone)]
pub struct Keyed<K, V> {
    entries: Vec<V>,
    index: HashMap<K, usize>,
}

impl<K, V> Default for Keyed<K, V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash + Clone, V> Keyed<K, V> {
    /// The entry for `key`, created with `make` on first sight.
    pub fn upsert(&mut self, key: &K, make: impl FnOnce() -> V) -> &mut V {
        let position = match self.index.get(key) {
            Some(&position) => position,
            None => {
                self.entries.push(make());
                self.index.insert(key.clone(), self.entries.len() - 1);
                self.entries.len() - 1
            }
        };
        &mut self.entries[position]
    }

    /// The entry for `key`, if seen.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.index.get(key).map(|&i| &self.entries[i])
    }

    /// The entry for `key`, mutably, if seen.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.index.get(key).map(|&i| &mut self.entries[i])
    }

    /// Removes the entry for `key`, keeping the others in order. O(n): removals are rare (a
    /// `plan_removed`), lookups and appends are not.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let position = self.index.remove(key)?;
        let removed = self.entries.remove(position);
        for slot in self.index.values_mut() {
            if *slot > position {
                *slot -= 1;
            }
        }
        Some(removed)
    }

    /// Every entry, in first-seen order.
    pub fn iter(&self) -> std::slice::Iter<'_, V> {
        self.entries.iter()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<K, V: PartialEq> PartialEq for Keyed<K, V> {
    /// Equal when the entries are, in the same order (the index is derived from them).
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl<K, V: Serialize> Serialize for Keyed<K, V> {
    /// Serialises as the list of entries in order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.entries.serialize(serializer)
    }
}
