//! Credentials: bearer tokens that map to principals ([`Tokens`], from a token file), and the
//! secure-by-default choice a server binary makes from its flags ([`Credentials::for_listener`]).
//!
//! A token file has one `PRINCIPAL TOKEN` pair per line (whitespace between them), `#` starting
//! a comment, blank lines ignored:
//!
//! ```text
//! # who   token
//! alice   4f6b0c1e9a7d2b38c5e1f0a9d8c7b6a5
//! bob     0a1b2c3d4e5f60718293a4b5c6d7e8f9
//! ```
//!
//! A request's `Authorization: Bearer TOKEN` is compared with every token of the file, each
//! comparison taking the same time whatever it finds (no early exit), so timing tells nothing
//! about which token, or how much of one, was right.

use std::net::SocketAddr;
use std::path::Path;

use acp_rpc::Principal;
use http::HeaderMap;

/// The shortest token a file may hold: guessing one must be out of reach.
pub const MIN_TOKEN_LENGTH: usize = 16;

/// Why credentials could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The token file could not be read.
    #[error("cannot read the token file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line of the token file is not `PRINCIPAL TOKEN`.
    #[error("{path}:{line}: {reason}")]
    Malformed {
        /// The file.
        path: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The token file has no token.
    #[error("{0}: no `PRINCIPAL TOKEN` line: nobody could connect")]
    Empty(String),
    /// Listening beyond loopback without credentials.
    #[error(
        "refusing to listen on {0} without credentials: it is reachable from other machines. \
         Give --token-file PATH (one `PRINCIPAL TOKEN` pair per line; clients send \
         `Authorization: Bearer TOKEN`), or --no-auth to let anyone who can reach it in"
    )]
    Exposed(SocketAddr),
    /// No random token could be drawn.
    #[error("no token could be generated: {0}")]
    Random(String),
}

/// Bearer tokens and the principal each one authenticates.
#[derive(Clone, Default)]
pub struct Tokens {
    entries: Vec<(Principal, Vec<u8>)>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Principals only: tokens never reach a log.
        f.debug_list()
            .entries(self.entries.iter().map(|(principal, _)| principal))
            .finish()
    }
}

impl Tokens {
    /// No tokens yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `token` for `principal`.
    #[must_use]
    pub fn with(mut self, principal: Principal, token: impl Into<String>) -> Self {
        self.entries.push((principal, token.into().into_bytes()));
        self
    }

    /// The tokens of a token file's text (`path` names it in errors).
    pub fn parse(text: &str, path: &str) -> Result<Self, AuthError> {
        let mut tokens = Self::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let malformed = |reason: &str| AuthError::Malformed {
                path: path.to_owned(),
                line: index + 1,
                reason: reason.to_owned(),
            };
            let mut words = line.split_whitespace();
            let (Some(principal), Some(token), None) = (words.next(), words.next(), words.next())
            else {
                return Err(malformed("expected `PRINCIPAL TOKEN`"));
            };
            if token.len() < MIN_TOKEN_LENGTH {
                return Err(malformed(&format!(
                    "the token of `{principal}` is shorter than {MIN_TOKEN_LENGTH} characters"
                )));
            }
            if tokens.entries.iter().any(|(_, t)| t == token.as_bytes()) {
                return Err(malformed("this token is given twice"));
            }
            tokens = tokens.with(Principal::new(principal), token);
        }
        if tokens.entries.is_empty() {
            return Err(AuthError::Empty(path.to_owned()));
        }
        Ok(tokens)
    }

    /// The tokens of the file at `path`.
    pub fn load(path: &Path) -> Result<Self, AuthError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| AuthError::Read {
            path: name.clone(),
            source,
        })?;
        Self::parse(&text, &name)
    }

    /// How many tokens.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The principal whose token a request carries (`Authorization: Bearer TOKEN`; the scheme
    /// is case-insensitive), or why it is refused. Every token is compared, in constant time.
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, String> {
        let refused = || "a valid bearer token is required".to_owned();
        let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(refused());
        };
        let value = value.as_bytes();
        let Some(given) = value
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case(b"bearer "))
            .and_then(|_| value.get(7..))
        else {
            return Err(refused());
        };
        let mut found = None;
        for (principal, token) in &self.entries {
            if constant_time_eq(given, token) {
                found = Some(principal.clone());
            }
        }
        found.ok_or_else(refused)
    }
}

/// Compares without stopping at the first difference, so timing does not tell how much of a
/// token was right.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A random token: 32 hex digits (128 bits) from the operating system's generator.
pub fn random_token() -> Result<String, AuthError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|err| AuthError::Random(err.to_string()))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// What a server binary asks of its clients.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Credentials {
    /// Bearer tokens.
    Tokens(Tokens),
    /// A token generated for this run, for the one local user: print it once.
    Generated {
        /// The token.
        token: String,
        /// The same, as [`Tokens`].
        tokens: Tokens,
    },
    /// Anyone who can reach the server (`--no-auth`).
    Open,
}

impl Credentials {
    /// Secure by default: a token file's tokens when one is given; else, when `no_auth` says
    /// so, none; else on a loopback address a token generated now (for [`Principal::local`]),
    /// and beyond loopback a refusal saying how to add a token file.
    pub fn for_listener(
        listen: SocketAddr,
        token_file: Option<&Path>,
        no_auth: bool,
    ) -> Result<Self, AuthError> {
        if let Some(path) = token_file {
            return Ok(Credentials::Tokens(Tokens::load(path)?));
        }
        if no_auth {
            return Ok(Credentials::Open);
        }
        if !listen.ip().is_loopback() {
            return Err(AuthError::Exposed(listen));
        }
        let token = random_token()?;
        let tokens = Tokens::new().with(Principal::local(), token.clone());
        Ok(Credentials::Generated { token, tokens })
    }

    /// The tokens to check, `None` when anyone may connect.
    pub fn tokens(&self) -> Option<&Tokens> {
        match self {
            Credentials::Tokens(tokens) | Credentials::Generated { tokens, .. } => Some(tokens),
            Credentials::Open => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_auth(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::AUTHORIZATION, value.parse().expect("valid"));
        headers
    }

    #[test]
    fn a_token_file_maps_tokens_to_principals() {
        let tokens = Tokens::parse(
            "# people\nalice  aaaaaaaaaaaaaaaaaaaa  # her laptop\n\nbob\tbbbbbbbbbbbbbbbbbbbb\n",
            "tokens",
        )
        .expect("parses");
        assert_eq!(tokens.len(), 2);
        let who = |value: &str| tokens.authenticate(&with_auth(value));
        assert_eq!(
            who("Bearer aaaaaaaaaaaaaaaaaaaa"),
            Ok(Principal::new("alice"))
        );
        assert_eq!(
            who("bearer bbbbbbbbbbbbbbbbbbbb"),
            Ok(Principal::new("bob"))
        );
        assert!(who("Bearer aaaaaaaaaaaaaaaaaaa").is_err());
        assert!(who("Basic aaaaaaaaaaaaaaaaaaaa").is_err());
        assert!(tokens.authenticate(&HeaderMap::new()).is_err());
        // Two Authorization headers are refused, whatever they hold.
        let mut two = with_auth("Bearer aaaaaaaaaaaaaaaaaaaa");
        two.append(
            http::header::AUTHORIZATION,
            "Bearer bbbbbbbbbbbbbbbbbbbb".parse().expect("valid"),
        );
        assert!(tokens.authenticate(&two).is_err());
        // Tokens never reach a log.
        assert!(!format!("{tokens:?}").contains("aaaa"));
    }

    #[test]
    fn malformed_token_files_are_refused_with_the_line() {
        for (text, expected) in [
            ("alice\n", "tokens:1: expected"),
            ("alice short\n", "tokens:1: the token of `alice` is shorter"),
            ("a xxxxxxxxxxxxxxxxxx extra\n", "tokens:1: expected"),
            (
                "a xxxxxxxxxxxxxxxxxx\nb xxxxxxxxxxxxxxxxxx\n",
                "tokens:2: this token is given twice",
            ),
            ("# nothing\n", "no `PRINCIPAL TOKEN` line"),
        ] {
            let err = Tokens::parse(text, "tokens").expect_err(text).to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn credentials_are_secure_by_default() {
        let loopback: SocketAddr = "127.0.0.1:8765".parse().expect("addr");
        let everywhere: SocketAddr = "0.0.0.0:8765".parse().expect("addr");
        match Credentials::for_listener(loopback, None, false).expect("generated") {
            Credentials::Generated { token, tokens } => {
                assert_eq!(token.len(), 32);
                let headers = with_auth(&format!("Bearer {token}"));
                assert_eq!(tokens.authenticate(&headers), Ok(Principal::local()));
            }
            other => panic!("expected a generated token, got {other:?}"),
        }
        let refused = Credentials::for_listener(everywhere, None, false).expect_err("exposed");
        assert!(refused.to_string().contains("--token-file"), "{refused}");
        assert!(matches!(
            Credentials::for_listener(everywhere, None, true),
            Ok(Credentials::Open)
        ));
    }
}
