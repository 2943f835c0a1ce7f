//! A deterministic mutator: libFuzzer's cheap mutations (bit flips, bytes, dictionary tokens,
//! erasures, copies, crossovers), driven by a seeded generator so a run is the same everywhere.

use crate::Lcg;

/// The tokens of `fuzz/json.dict` (libFuzzer's dictionary format: one quoted token per line,
/// `\\`, `\"` and `\xNN` escapes, `#` comments).
#[derive(Debug, Clone, Default)]
pub struct Dictionary {
    tokens: Vec<Vec<u8>>,
}

impl Dictionary {
    /// The workspace's `fuzz/json.dict`.
    pub fn load() -> Self {
        let path = crate::workspace_root().join("fuzz").join("json.dict");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        Self::parse(&text)
    }

    /// Parses a dictionary; lines that are not a quoted token are skipped.
    pub fn parse(text: &str) -> Self {
        let tokens = text
            .lines()
            .filter_map(|line| {
                let line = line.trim();
                let quoted = line.strip_prefix('"')?.strip_suffix('"')?;
                Some(unescape(quoted))
            })
            .filter(|token| !token.is_empty())
            .collect();
        Self { tokens }
    }

    /// The tokens, in file order.
    pub fn tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }
}

fn unescape(quoted: &str) -> Vec<u8> {
    let bytes = quoted.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'x')) => {
                let hex = quoted
                    .get(i + 2..i + 4)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 4;
                    }
                    None => {
                        out.push(b'\\');
                        i += 1;
                    }
                }
            }
            (b'\\', Some(&next)) => {
                out.push(next);
                i += 2;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// Makes new inputs from a corpus, one to four mutations each.
#[derive(Debug)]
pub struct Mutator<'d> {
    rng: Lcg,
    dictionary: &'d Dictionary,
}

/// Inputs are kept below this size (libFuzzer's default `-max_len` for these corpora).
const MAX_LEN: usize = 64 * 1024;

impl<'d> Mutator<'d> {
    /// A mutator whose choices follow `seed`.
    pub fn new(seed: u64, dictionary: &'d Dictionary) -> Self {
        Self {
            rng: Lcg(seed),
            dictionary,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.rng.next(n as u64)).unwrap_or(0)
    }

    /// A new input from one of `corpus` (an empty input when the corpus is empty).
    pub fn mutate(&mut self, corpus: &[Vec<u8>]) -> Vec<u8> {
        let mut input = match corpus.len() {
            0 => Vec::new(),
            n => corpus[self.below(n)].clone(),
        };
        for _ in 0..=self.below(4) {
            self.mutate_once(&mut input, corpus);
        }
        input.truncate(MAX_LEN);
        input
    }

    fn mutate_once(&mut self, input: &mut Vec<u8>, corpus: &[Vec<u8>]) {
        let len = input.len();
        match self.below(8) {
            // Flip one bit.
            0 if len > 0 => {
                let at = self.below(len);
                input[at] ^= 1 << self.below(8);
            }
            // Set one byte to anything, or to an interesting one.
            1 if len > 0 => {
                let at = self.below(len);
                const INTERESTING: [u8; 12] = [
                    0, 0x1b, b'\n', b'\r', b'"', b'\\', b'{', b'}', 0x7f, 0x80, 0xc3, 0xff,
                ];
                input[at] = if self.below(2) == 0 {
                    INTERESTING[self.below(INTERESTING.len())]
                } else {
                    self.below(256) as u8
                };
            }
            // Insert a dictionary token.
            2 | 3 if !self.dictionary.tokens().is_empty() => {
                let tokens = self.dictionary.tokens();
                let token = tokens[self.below(tokens.len())].clone();
                let at = self.below(len + 1);
                input.splice(at..at, token);
            }
            // Erase a range.
            4 if len > 1 => {
                let start = self.below(len);
                let end = start + 1 + self.below((len - start).min(16));
                input.drain(start..end.min(len));
            }
            // Copy a range of the input elsewhere in it.
            5 if len > 1 => {
                let start = self.below(len);
                let end = (start + 1 + self.below(64)).min(len);
                let piece = input[start..end].to_vec();
                let at = self.below(len + 1);
                input.splice(at..at, piece);
            }
            // Cross over: this input's head with another's tail.
            6 if !corpus.is_empty() => {
                let other = &corpus[self.below(corpus.len())];
                let cut = self.below(len + 1);
                let from = self.below(other.len() + 1);
                input.truncate(cut);
                input.extend_from_slice(&other[from..]);
            }
            // Cut the tail.
            _ if len > 0 => {
                let cut = self.below(len);
                input.truncate(cut);
            }
            _ => input.push(self.below(256) as u8),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_format_is_read_with_its_escapes() {
        let dict = Dictionary::parse("# comment\n\"a\\\"b\"\n\"\\x1b[\"\n\"\\\\\"\nnot a token\n");
        assert_eq!(
            dict.tokens(),
            &[b"a\"b".to_vec(), b"\x1b[".to_vec(), b"\\".to_vec()]
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_inputs() {
        let dict = Dictionary::parse("\"{\"\n\"null\"\n");
        let corpus = vec![b"{\"a\":1}".to_vec(), b"[true]".to_vec()];
        let run = |seed| {
            let mut mutator = Mutator::new(seed, &dict);
            (0..200)
                .map(|_| mutator.mutate(&corpus))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().any(|input| !corpus.contains(input)));
    }
}
