//! Every refusal of the endpoint: the HTTP status, and nothing else of the server disturbed.

use crate::common;

use acp_http::server::ServerOptions;
use acp_http::wire;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

fn http() -> reqwest::Client {
    common::raw_http()
}

async fn post(url: &str, connection: Option<&str>, body: &str) -> (StatusCode, String) {
    let mut request = http()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(connection) = connection {
        request = request.header(wire::CONNECTION_ID, connection);
    }
    let response = request.send().await.expect("answers");
    (response.status(), response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn initialize_answers_in_the_body_and_everything_else_is_accepted() {
    let (_server, url) = common::start(ServerOptions::default()).await;
    let (connection, answer) = common::raw_initialize(&url).await;
    assert_eq!(answer["result"]["agentInfo"]["name"], "scripted");
    let (status, body) = post(
        &url,
        Some(&connection),
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}"#,
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
}

#[tokio::test]
async fn bad_requests_get_their_status() {
    let (_server, url) = common::start(ServerOptions::default().max_message_size(1024)).await;
    let (connection, _) = common::raw_initialize(&url).await;
    let c = Some(connection.as_str());

    // Media types.
    let response = http().post(&url).body("{}").send().await.expect("answers");
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let response = http()
        .get(&url)
        .header("accept", "application/json")
        .header(wire::CONNECTION_ID, &connection)
        .send()
        .await
        .expect("answers");
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);

    // Connection ids.
    let note = r#"{"jsonrpc":"2.0","method":"x","params":{}}"#;
    assert_eq!(post(&url, None, note).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(
        post(&url, Some("0123"), note).await.0,
        StatusCode::NOT_FOUND
    );

    // Bodies.
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{{"p":"{}"}}}}"#,
        "a".repeat(2000)
    );
    assert_eq!(post(&url, c, &big).await.0, StatusCode::PAYLOAD_TOO_LARGE);
    let (status, body) = post(&url, c, "[1]").await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED);
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON")["error"]["code"],
        -32600
    );
    let (status, body) = post(&url, c, "{nope").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON")["error"]["code"],
        -32700
    );

    // Headers that contradict the body or the connection.
    let response = http()
        .post(&url)
        .header("content-type", "application/json")
        .header(wire::CONNECTION_ID, &connection)
        .header(wire::SESSION_ID, "a")
        .body(r#"{"jsonrpc":"2.0","method":"x","params":{"sessionId":"b"}}"#)
        .send()
        .await
        .expect("answers");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let response = http()
        .post(&url)
        .header("content-type", "application/json")
        .header(wire::CONNECTION_ID, &connection)
        .header(wire::PROTOCOL_VERSION, "2")
        .body(note)
        .send()
        .await
        .expect("answers");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let response = http()
        .get(&url)
        .header("accept", wire::EVENT_STREAM)
        .header(wire::CONNECTION_ID, &connection)
        .header(wire::LAST_EVENT_ID, "99")
        .send()
        .await
        .expect("answers");
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "an id never sent"
    );
    let response = http().put(&url).send().await.expect("answers");
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);

    // The connection still works after all that.
    let (status, _) = post(
        &url,
        c,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
}

#[tokio::test]
async fn deleted_and_idle_connections_are_gone() {
    let options = ServerOptions::default().idle_timeout(Duration::from_millis(200));
    let (server, url) = common::start(options).await;
    let note = r#"{"jsonrpc":"2.0","method":"x","params":{}}"#;

    let (deleted, _) = common::raw_initialize(&url).await;
    let response = http()
        .delete(&url)
        .header(wire::CONNECTION_ID, &deleted)
        .send()
        .await
        .expect("answers");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert_eq!(
        post(&url, Some(&deleted), note).await.0,
        StatusCode::NOT_FOUND
    );

    let (idle, _) = common::raw_initialize(&url).await;
    assert_eq!(post(&url, Some(&idle), note).await.0, StatusCode::ACCEPTED);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(post(&url, Some(&idle), note).await.0, StatusCode::NOT_FOUND);
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn origins_and_credentials_are_checked() {
    let options = ServerOptions::default()
        .allow_origin("https://editor.example")
        .bearer_token("s3cret");
    let (_server, url) = common::start(options).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let send = |origin: Option<&str>, token: Option<&str>| {
        let mut request = http()
            .post(&url)
            .header("content-type", "application/json")
            .body(init);
        if let Some(origin) = origin {
            request = request.header("origin", origin.to_owned());
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let response = send(None, None).await.expect("answers");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    assert_eq!(
        send(None, Some("wrong")).await.expect("answers").status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        send(Some("https://evil.example"), Some("s3cret"))
            .await
            .expect("answers")
            .status(),
        StatusCode::FORBIDDEN
    );
    // DNS rebinding: a hostile page reaching the server under its own name sends an Origin that
    // equals the Host it used. Only listed origins pass.
    let own = url.trim_end_matches("/acp").to_owned();
    assert_eq!(
        send(Some(&own), Some("s3cret"))
            .await
            .expect("answers")
            .status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        send(Some("https://editor.example"), Some("s3cret"))
            .await
            .expect("answers")
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        send(None, Some("s3cret")).await.expect("answers").status(),
        StatusCode::OK
    );
    // A WebSocket upgrade passes the same checks.
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
            url.replace("http://", "ws://"),
        )
        .expect("a request");
    request
        .headers_mut()
        .insert("origin", "https://evil.example".parse().expect("valid"));
    match tokio_tungstenite::connect_async(request).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), StatusCode::FORBIDDEN.as_u16());
        }
        other => panic!("the upgrade should be refused: {other:?}"),
    }
}

#[tokio::test]
async fn the_connection_limit_answers_503_and_frees_with_delete() {
    let (_server, url) = common::start(ServerOptions::default().max_connections(2)).await;
    let (first, _) = common::raw_initialize(&url).await;
    let _second = common::raw_initialize(&url).await;
    let (status, _) = post(
        &url,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    http()
        .delete(&url)
        .header(wire::CONNECTION_ID, &first)
        .send()
        .await
        .expect("answers");
    common::raw_initialize(&url).await;
}

#[tokio::test]
async fn a_refused_initialize_opens_no_connection() {
    let options = ServerOptions::default();
    let (server, url) = common::start_with(
        || {
            Ok(acp_http::server::AgentIo::in_memory(
                1024,
                |reader, writer| {
                    tokio::spawn(async move {
                        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
                        let mut lines = tokio::io::BufReader::new(reader).lines();
                        let mut writer = writer;
                        while let Ok(Some(_)) = lines.next_line().await {
                            let refusal = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}});
                            let _ = writer.write_all(format!("{refusal}\n").as_bytes()).await;
                        }
                    });
                },
            ))
        },
        options,
    )
    .await;
    let response = http()
        .post(&url)
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .send()
        .await
        .expect("answers");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get(wire::CONNECTION_ID).is_none());
    let body: Value = serde_json::from_str(&response.text().await.expect("text")).expect("JSON");
    assert_eq!(body["error"]["code"], -32000);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn requests_past_the_pending_bound_get_429() {
    let (_server, url) = common::start(ServerOptions::default().max_pending_requests(2)).await;
    let (connection, _) = common::raw_initialize(&url).await;
    let slow = |id: u64| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"slow","params":{{"delayMs":2000}}}}"#)
    };
    assert_eq!(
        post(&url, Some(&connection), &slow(1)).await.0,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        post(&url, Some(&connection), &slow(2)).await.0,
        StatusCode::ACCEPTED
    );
    let (status, body) = post(&url, Some(&connection), &slow(3)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(serde_json::from_str::<Value>(&body).expect("JSON")["id"], 3);
    // Notifications and answers still pass.
    let note = r#"{"jsonrpc":"2.0","method":"x","params":{}}"#;
    assert_eq!(
        post(&url, Some(&connection), note).await.0,
        StatusCode::ACCEPTED
    );
}

#[tokio::test]
async fn an_initialize_whose_client_went_away_leaves_no_connection() {
    // An agent that never answers.
    let (server, url) = common::start_with(
        || {
            Ok(acp_http::server::AgentIo::in_memory(
                1024,
                |reader, writer| {
                    tokio::spawn(async move {
                        let _keep = (reader, writer);
                        std::future::pending::<()>().await;
                    });
                },
            ))
        },
        ServerOptions::default(),
    )
    .await;
    let gave_up = http()
        .post(&url)
        .header("content-type", "application/json")
        .timeout(Duration::from_millis(200))
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .send()
        .await;
    assert!(gave_up.is_err(), "the client timed out");
    assert_eq!(
        common::connections_left_after(&server, Duration::from_secs(3)).await,
        0,
        "the half-opened connection went with its client"
    );
}

#[tokio::test]
async fn headers_are_read_by_their_grammar() {
    let (_server, url) =
        common::start(ServerOptions::default().allow_origin("https://editor.example")).await;
    let initialize = |request: reqwest::RequestBuilder| async move {
        request
            .body(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
            )
            .send()
            .await
            .expect("answers")
            .status()
    };
    let json = || http().post(&url).header("content-type", "application/json");
    // Every Origin counts: a listed one first does not let an unlisted second through; one
    // that is not visible ASCII is not "no origin".
    let two = json()
        .header("origin", "https://editor.example")
        .header("origin", "https://evil.example");
    assert_eq!(initialize(two).await, StatusCode::FORBIDDEN);
    let odd = reqwest::header::HeaderValue::from_bytes(b"https://\xe9vil.example").expect("obs");
    assert_eq!(
        initialize(json().header("origin", odd)).await,
        StatusCode::FORBIDDEN
    );
    // The media type exactly, not a prefix of it.
    let jsonp = http()
        .post(&url)
        .header("content-type", "application/jsonp");
    assert_eq!(initialize(jsonp).await, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let charset = http()
        .post(&url)
        .header("content-type", "Application/JSON; charset=utf-8");
    assert_eq!(initialize(charset).await, StatusCode::OK);
    // Accept: ranges and weights.
    let (connection, _) = common::raw_initialize(&url).await;
    for (accept, expected) in [
        ("*/*", StatusCode::OK),
        ("text/*", StatusCode::OK),
        ("text/event-stream;q=0", StatusCode::NOT_ACCEPTABLE),
        ("application/json", StatusCode::NOT_ACCEPTABLE),
    ] {
        let response = http()
            .get(&url)
            .header("accept", accept)
            .header(wire::CONNECTION_ID, &connection)
            .header(wire::PROTOCOL_VERSION, "1")
            .send()
            .await
            .expect("answers");
        assert_eq!(response.status(), expected, "Accept: {accept}");
    }
}

#[tokio::test]
async fn a_connection_whose_agent_ends_at_once_is_forgotten() {
    // The agent's end may come before the registry has stored the connection, or after: either
    // way the connection is not kept.
    let (server, url) = common::start_with(
        || {
            Ok(acp_http::server::AgentIo::in_memory(
                1024,
                |reader, writer| drop((reader, writer)),
            ))
        },
        ServerOptions::default(),
    )
    .await;
    for _ in 0..50 {
        let answer = http()
            .post(&url)
            .header("content-type", "application/json")
            .timeout(Duration::from_secs(5))
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
            .send()
            .await
            .expect("an answer");
        assert!(!answer.status().is_success(), "no agent to answer");
    }
    assert_eq!(
        common::connections_left_after(&server, Duration::from_secs(3)).await,
        0,
        "every ended connection was forgotten"
    );
}
