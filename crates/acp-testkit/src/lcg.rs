//! [`Lcg`]: the seeded generator of the property and stress tests and of the benchmark corpus.

/// A 64-bit linear congruential generator (Knuth's MMIX constants): deterministic, no
/// dependency, the same sequence on every machine, so a failing seed can be replayed.
#[derive(Debug, Clone)]
pub struct Lcg(pub u64);

impl Lcg {
    /// A number in `0..below` (`0` when `below` is `0`).
    pub fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below.max(1)
    }

    /// One of `items`, which must not be empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[usize::try_from(self.next(items.len() as u64)).unwrap_or(0)]
    }
}
