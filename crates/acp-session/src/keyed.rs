//! [`Keyed`]: entries in first-seen order, found by id in O(1).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use serde::{Serialize, Serializer};

/// An ordered collection of entries keyed by id: insertion order is history order; lookups,
/// appends and letting the oldest go are O(1) (amortised).
#[derive(Debug, Clone)]
pub struct Keyed<K, V> {
    entries: VecDeque<(K, V)>,
    /// Each key's position counted from the first entry ever held, so that letting the oldest
    /// go moves no other position. The ids are the peer's choice, so the hasher is seeded at
    /// random per map (foldhash, as acp-rpc's table of incoming requests: a fraction of SipHash's
    /// cost on short ids).
    index: HashMap<K, u64, foldhash::quality::RandomState>,
    /// How many entries have gone from the front.
    base: u64,
}

impl<K, V> Default for Keyed<K, V> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            index: HashMap::default(),
            base: 0,
        }
    }
}

impl<K: Eq + Hash + Clone, V> Keyed<K, V> {
    fn slot(&self, key: &K) -> Option<usize> {
        let absolute = *self.index.get(key)?;
        usize::try_from(absolute - self.base).ok()
    }

    /// The entry for `key`, created with `make` on first sight.
    pub fn upsert(&mut self, key: &K, make: impl FnOnce() -> V) -> &mut V {
        let slot = match self.slot(key) {
            Some(slot) => slot,
            None => {
                let absolute = self.base + self.entries.len() as u64;
                self.entries.push_back((key.clone(), make()));
                self.index.insert(key.clone(), absolute);
                self.entries.len() - 1
            }
        };
        &mut self.entries[slot].1
    }

    /// The entry for `key`, if seen.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.slot(key).map(|slot| &self.entries[slot].1)
    }

    /// The entry for `key`, mutably, if seen.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.slot(key).map(|slot| &mut self.entries[slot].1)
    }

    /// Removes the entry for `key`, keeping the others in order. O(n): removals are rare (a
    /// `plan_removed`), lookups and appends are not.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let slot = self.slot(key)?;
        self.index.remove(key);
        let (_, removed) = self.entries.remove(slot)?;
        let gone = self.base + slot as u64;
        for position in self.index.values_mut() {
            if *position > gone {
                *position -= 1;
            }
        }
        Some(removed)
    }

    /// Lets the oldest entry go. O(1).
    pub fn pop_oldest(&mut self) -> Option<V> {
        let (key, oldest) = self.entries.pop_front()?;
        self.index.remove(&key);
        self.base += 1;
        Some(oldest)
    }

    /// Every entry, in first-seen order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(_, entry)| entry)
    }

    /// Every entry, mutably, in first-seen order.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, entry)| entry)
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
    /// Equal when the entries are, in the same order (keys and positions derive from them).
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|((_, a), (_, b))| a == b)
    }
}

impl<K, V: Serialize> Serialize for Keyed<K, V> {
    /// Serialises as the list of entries in order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.entries.iter().map(|(_, entry)| entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_goes_and_every_other_key_still_finds_its_entry() {
        let mut keyed: Keyed<u32, String> = Keyed::default();
        for key in 0..5 {
            keyed.upsert(&key, || format!("v{key}"));
        }
        assert_eq!(keyed.pop_oldest().as_deref(), Some("v0"));
        assert_eq!(keyed.remove(&2).as_deref(), Some("v2"));
        assert_eq!(keyed.pop_oldest().as_deref(), Some("v1"));
        keyed.upsert(&7, || "v7".into());
        assert_eq!(keyed.get(&0), None);
        assert_eq!(keyed.get(&3).map(String::as_str), Some("v3"));
        assert_eq!(keyed.get(&4).map(String::as_str), Some("v4"));
        assert_eq!(keyed.get(&7).map(String::as_str), Some("v7"));
        let order: Vec<&str> = keyed.iter().map(String::as_str).collect();
        assert_eq!(order, ["v3", "v4", "v7"]);
        // A key that went can come back, at the end.
        keyed.upsert(&0, || "again".into());
        assert_eq!(keyed.iter().last().map(String::as_str), Some("again"));
    }
}
