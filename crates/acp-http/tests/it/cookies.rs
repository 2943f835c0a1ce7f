//! The RFD's cookie rule: a client keeps the cookies the server sets and sends them back on every
//! later request of the connection (sticky sessions behind a load balancer rely on it).

use crate::common;

use acp_http::client::ClientOptions;
use acp_http::server::{HttpServer, ServerOptions};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use common::Peer;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Default)]
struct Seen {
    requests: AtomicUsize,
    without_cookie: AtomicUsize,
}

#[tokio::test]
async fn the_client_returns_the_servers_cookie_on_every_request() {
    let seen = Arc::new(Seen::default());
    let server = HttpServer::new(common::scripted_agent, ServerOptions::default());
    // A load balancer's affinity cookie: set on the first answer, expected on everything after.
    let router = server.router().layer(axum::middleware::from_fn({
        let seen = seen.clone();
        move |request: Request, next: Next| {
            let seen = seen.clone();
            async move {
                let first = seen.requests.fetch_add(1, Ordering::Relaxed) == 0;
                let has_cookie = request
                    .headers()
                    .get("cookie")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.contains("affinity=node-7"));
                if !first && !has_cookie {
                    seen.without_cookie.fetch_add(1, Ordering::Relaxed);
                }
                let mut response: Response = next.run(request).await;
                if first {
                    response.headers_mut().insert(
                        "set-cookie",
                        "affinity=node-7; Path=/".parse().expect("valid"),
                    );
                }
                response
            }
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("http://{}/acp", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, router).await });

    let mut peer = Peer::connect(&url, ClientOptions::default()).await;
    let session = peer.open_session().await;
    let (answer, _) = peer
        .call(3, "emit", json!({"sessionId":session,"count":3}))
        .await;
    assert_eq!(answer["result"]["emitted"], 3);
    // initialize, two streams, session/new, emit.
    assert!(seen.requests.load(Ordering::Relaxed) >= 5);
    assert_eq!(seen.without_cookie.load(Ordering::Relaxed), 0);
}
