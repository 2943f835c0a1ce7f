//! The crate's integration tests, in one binary (one link, one copy of the shared
//! helpers); each module is one area.

#[cfg(all(feature = "server", feature = "client"))]
mod bounds;
#[cfg(all(feature = "server", feature = "client"))]
mod common;
#[cfg(all(feature = "server", feature = "client"))]
mod cookies;
#[cfg(all(feature = "server", feature = "client"))]
mod refusals;
#[cfg(all(feature = "server", feature = "client"))]
mod streams;
#[cfg(all(feature = "server", feature = "client", feature = "tls"))]
mod tls;
