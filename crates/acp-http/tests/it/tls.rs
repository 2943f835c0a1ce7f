//! `https://` and `wss://`: the client trusts a server's self-signed certificate it is given, and
//! refuses the server without it. A TLS terminator (tokio-rustls) sits in front of the plain test
//! server, as a reverse proxy would.

use crate::common;

use acp_http::client::{ClientError, ClientOptions};
use acp_http::server::ServerOptions;
use common::Peer;
use serde_json::json;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;

/// A TLS terminator for `localhost` forwarding to `backend`; its port and certificate (DER).
async fn terminator(backend: std::net::SocketAddr) -> (u16, Vec<u8>) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("a certificate");
    let cert = certified.cert.der().to_vec();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone().into()], key)
        .expect("a server configuration");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                if let Ok(mut plain) = TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                }
            });
        }
    });
    (port, cert)
}

#[tokio::test]
async fn a_session_over_https_and_wss() {
    let (_server, url) = common::start(ServerOptions::default()).await;
    let backend = common::address_of(&url);
    let (port, cert) = terminator(backend).await;
    for scheme in ["https", "wss"] {
        let url = format!("{scheme}://localhost:{port}/acp");
        let options = ClientOptions::default().root_certificate(cert.clone());
        let mut peer = Peer::connect(&url, options).await;
        let session = peer.open_session().await;
        let (answer, updates) = peer
            .call(5, "emit", json!({"sessionId": session, "count": 3}))
            .await;
        assert_eq!(answer["result"]["emitted"], 3, "{url}");
        assert_eq!(updates.len(), 3, "{url}");
    }
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused() {
    let (_server, url) = common::start(ServerOptions::default()).await;
    let backend = common::address_of(&url);
    let (port, _cert) = terminator(backend).await;
    let refused = acp_http::client::connect(
        &format!("wss://localhost:{port}/acp"),
        ClientOptions::default(),
    )
    .await;
    assert!(
        matches!(&refused, Err(ClientError::Network(reason)) if reason.contains("certificate")),
        "{refused:?}"
    );
    // Over HTTPS the failure answers the first request.
    let mut peer = Peer::connect(
        &format!("https://localhost:{port}/acp"),
        ClientOptions::default(),
    )
    .await;
    peer.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}))
        .await;
    let answer = peer.next().await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
}
