//! TLS for `https://` and `wss://`: rustls on the *ring* provider, trusting the webpki roots and
//! the certificates the options add.

use super::{ClientError, ClientOptions};
use rustls::pki_types::CertificateDer;
use std::sync::Arc;

/// A client configuration offering `alpn` (`h2`, `http/1.1`; none for a WebSocket, which is
/// HTTP/1.1 by its handshake).
pub(super) fn config(
    options: &ClientOptions,
    alpn: &[&[u8]],
) -> Result<rustls::ClientConfig, ClientError> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for der in &options.root_certificates {
        roots
            .add(CertificateDer::from(der.clone()))
            .map_err(|err| ClientError::Tls(format!("a root certificate: {err}")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| ClientError::Tls(err.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    Ok(config)
}
