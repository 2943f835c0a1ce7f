//! Streams: resumption without loss or duplication, bounded buffers under a slow reader, many
//! connections, the agent's own requests, graceful shutdown.

use crate::common;

use acp_http::client::ClientOptions;
use acp_http::server::{HttpServer, ServerOptions};
use acp_http::wire;
use common::{Peer, Proxy};
use serde_json::{json, Value};
use std::time::Duration;

/// Reads SSE events (`id`, JSON data) from a raw response until `count` arrived.
async fn read_events(response: &mut reqwest::Response, count: usize) -> Vec<(u64, Value)> {
    let mut buffer = String::new();
    let mut events = Vec::new();
    while events.len() < count {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
            .await
            .expect("an event within 10 s")
            .expect("reads")
            .expect("the stream is open");
        buffer.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            let mut id = None;
            let mut data = None;
            for line in event.lines() {
                if let Some(value) = line.strip_prefix("id: ") {
                    id = Some(value.parse::<u64>().expect("a numeric id"));
                }
                if let Some(value) = line.strip_prefix("data: ") {
                    data = Some(serde_json::from_str(value).expect("JSON data"));
                }
            }
            if let (Some(id), Some(data)) = (id, data) {
                events.push((id, data));
            }
        }
    }
    events.truncate(count);
    events
}

fn seq(message: &Value) -> Option<u64> {
    message["params"]["update"]["seq"].as_u64()
}

#[tokio::test]
async fn a_stream_reopened_with_last_event_id_misses_and_repeats_nothing() {
    let (_server, url) = common::start(ServerOptions::default()).await;
    let http = common::raw_http();
    let (connection, _) = common::raw_initialize(&url).await;
    let post = |body: Value| {
        http.post(&url)
            .header("content-type", "application/json")
            .header(wire::CONNECTION_ID, &connection)
            .body(body.to_string())
            .send()
    };
    let open = |session: Option<&str>, last: Option<u64>| {
        let mut request = http
            .get(&url)
            .header("accept", wire::EVENT_STREAM)
            .header(wire::CONNECTION_ID, &connection);
        if let Some(session) = session {
            request = request.header(wire::SESSION_ID, session.to_owned());
        }
        if let Some(last) = last {
            request = request.header(wire::LAST_EVENT_ID, last.to_string());
        }
        request.send()
    };
    let mut main = open(None, None).await.expect("opens");
    post(json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}))
        .await
        .expect("answers");
    let new = read_events(&mut main, 1).await;
    let session = new[0].1["result"]["sessionId"]
        .as_str()
        .expect("an id")
        .to_owned();

    let mut stream = open(Some(&session), None).await.expect("opens");
    assert_eq!(stream.headers()[wire::SESSION_ID], session.as_str());
    post(json!({"jsonrpc":"2.0","id":2,"method":"emit","params":{"sessionId":session,"count":100,"size":10}}),
    )
    .await
    .expect("answers");
    let first = read_events(&mut stream, 30).await;
    let last_seen = first.last().expect("events").0;
    // The reader goes away mid-stream, with more of the turn in flight.
    drop(stream);
    let mut resumed = open(Some(&session), Some(last_seen))
        .await
        .expect("reopens");
    let rest = read_events(&mut resumed, 71).await;

    let ids: Vec<u64> = first.iter().chain(&rest).map(|(id, _)| *id).collect();
    let start = ids[0];
    assert_eq!(
        ids,
        (start..start + 101).collect::<Vec<_>>(),
        "ids go on without a gap"
    );
    let seqs: Vec<u64> = first
        .iter()
        .chain(&rest)
        .filter_map(|(_, m)| seq(m))
        .collect();
    assert_eq!(
        seqs,
        (0..100).collect::<Vec<_>>(),
        "every update once, in order"
    );
    assert_eq!(rest.last().expect("the result").1["result"]["emitted"], 100);
}

#[tokio::test]
async fn a_client_whose_connections_are_cut_mid_turn_loses_nothing() {
    let (_server, url) = common::start(ServerOptions::default()).await;
    let target = common::address_of(&url);
    let proxy = Proxy::start(target).await;
    let mut peer = Peer::connect(
        &format!("http://{}/acp", proxy.addr),
        ClientOptions::default(),
    )
    .await;
    let session = peer.open_session().await;
    peer.send(json!({"jsonrpc":"2.0","id":9,"method":"emit","params":{"sessionId":session,"count":300,"size":100,"delayMs":1}}))
        .await;
    let mut seqs = Vec::new();
    let mut cuts = 0;
    loop {
        let message = peer.next().await;
        if message["id"] == 9 {
            assert_eq!(message["result"]["emitted"], 300);
            break;
        }
        let seq = seq(&message).expect("an update");
        seqs.push(seq);
        // Cut every TCP connection (the SSE streams and the pooled POST connections) twice
        // during the turn.
        if (seq == 60 || seq == 180) && cuts < 2 {
            proxy.cut();
            cuts += 1;
        }
    }
    assert_eq!(cuts, 2);
    assert_eq!(
        seqs,
        (0..300).collect::<Vec<_>>(),
        "every update once, in order"
    );
    // The connection still carries requests.
    let (answer, _) = peer
        .call(10, "emit", json!({"sessionId":session,"count":1}))
        .await;
    assert_eq!(answer["result"]["emitted"], 1);
}

#[tokio::test]
async fn a_reader_that_does_not_read_holds_the_agent_back_not_memory() {
    let options = ServerOptions::default()
        .stream_buffer(64 * 1024)
        .resume_window(16 * 1024);
    let (server, url) = common::start(options).await;
    let http = common::raw_http();
    let (connection, _) = common::raw_initialize(&url).await;
    let post = |body: Value| {
        http.post(&url)
            .header("content-type", "application/json")
            .header(wire::CONNECTION_ID, &connection)
            .body(body.to_string())
            .send()
    };
    post(json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}))
        .await
        .expect("answers");
    let session = "s-slow";
    // 4 MB of updates for a session stream nobody reads yet.
    post(json!({"jsonrpc":"2.0","id":2,"method":"emit","params":{"sessionId":session,"count":4000,"size":1000}}))
        .await
        .expect("answers");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = server.held_bytes();
    assert!(
        held <= 64 * 1024 + 1100,
        "held {held} bytes: the buffer and one event"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.held_bytes(), held, "the agent waits; nothing grows");

    // Another connection is not held up.
    let mut other = Peer::connect(&url, ClientOptions::default()).await;
    other.open_session().await;

    // Reading it all lets the agent finish.
    let mut reader = http
        .get(&url)
        .header("accept", wire::EVENT_STREAM)
        .header(wire::CONNECTION_ID, &connection)
        .header(wire::SESSION_ID, session)
        .send()
        .await
        .expect("opens");
    let events = read_events(&mut reader, 4001).await;
    assert_eq!(
        events.last().expect("the result").1["result"]["emitted"],
        4000
    );
    assert!(
        server.held_bytes() <= 16 * 1024 + 1100,
        "only the window is kept"
    );
}

#[tokio::test]
async fn a_hundred_connections_at_once_over_both_profiles() {
    let (server, url) = common::start(ServerOptions::default()).await;
    let ws = url.replace("http://", "ws://");
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(101));
    let mut tasks = Vec::new();
    for n in 0..100 {
        let url = if n % 2 == 0 { url.clone() } else { ws.clone() };
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let mut peer = Peer::connect(&url, ClientOptions::default()).await;
            let session = peer.open_session().await;
            barrier.wait().await;
            let (answer, updates) = peer
                .call(5, "emit", json!({"sessionId":session,"count":20,"size":50}))
                .await;
            assert_eq!(answer["result"]["emitted"], 20);
            assert_eq!(
                updates.iter().filter_map(seq).collect::<Vec<_>>(),
                (0..20).collect::<Vec<_>>()
            );
            peer
        }));
    }
    barrier.wait().await;
    assert_eq!(server.connections(), 100);
    let mut peers = Vec::new();
    for task in tasks {
        peers.push(task.await.expect("a connection"));
    }
    drop(peers);
    assert_eq!(
        common::connections_left_after(&server, Duration::from_secs(5)).await,
        0,
        "every client hung up and its connection went"
    );
}

#[tokio::test]
async fn the_agent_asks_and_the_client_answers_over_both_profiles() {
    let (_server, url) = common::start(ServerOptions::default()).await;
    for url in [url.clone(), url.replace("http://", "ws://")] {
        let mut peer = Peer::connect(&url, ClientOptions::default()).await;
        let session = peer.open_session().await;
        peer.send(json!({"jsonrpc":"2.0","id":7,"method":"ask","params":{"sessionId":session}}))
            .await;
        let request = peer.next().await;
        assert_eq!(request["method"], "session/request_permission", "{url}");
        peer.send(json!({"jsonrpc":"2.0","id":request["id"],"result":{"outcome":"allowed"}}))
            .await;
        let answer = peer.next().await;
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["answer"]["outcome"], "allowed", "{url}");
    }
}

#[tokio::test]
async fn shutdown_answers_requests_in_flight_then_ends_connections() {
    let server = HttpServer::new(common::scripted_agent, ServerOptions::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("http://{}/acp", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn({
        let server = server.clone();
        async move {
            server
                .serve_until(
                    listener,
                    async { drop(stopped.await) },
                    Duration::from_secs(5),
                )
                .await
        }
    });
    let mut peer = Peer::connect(&url, ClientOptions::default()).await;
    peer.open_session().await;
    peer.send(json!({"jsonrpc":"2.0","id":3,"method":"slow","params":{"delayMs":300}}))
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.send(()).expect("the server listens");
    let answer = peer.next().await;
    assert_eq!(answer["id"], 3, "the request in flight was answered");
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server stops")
        .expect("joins")
        .expect("serves");
    assert_eq!(server.connections(), 0);
    let ended = tokio::time::timeout(Duration::from_secs(5), peer.lines.next_line())
        .await
        .expect("the client sees the end");
    assert!(matches!(ended, Ok(None)), "{ended:?}");
}

#[tokio::test]
async fn a_burst_over_websocket_arrives_one_frame_per_message_in_order_with_pongs() {
    // The server gathers queued messages into one write buffer: a burst many times its size,
    // with messages larger than it, must still arrive one text frame per message, in order,
    // and a ping sent mid-burst must still be answered.
    burst_over_websocket(ServerOptions::default(), &[(2000, 40), (60, 20_000)]).await;
}

#[tokio::test]
async fn messages_near_a_small_size_bound_go_out_behind_a_gathered_burst() {
    // The write buffer's bound leaves room for the gathered bytes and one more message of the
    // largest size, whatever that size is.
    let options = ServerOptions::default().max_message_size(3_000);
    burst_over_websocket(options, &[(200, 2_800), (300, 40)]).await;
}

/// Opens a session over WebSocket with a raw client and asks for each `(count, size)` burst,
/// with a ping after each request; checks every update arrives in its own frame, in order, and
/// the pong comes.
async fn burst_over_websocket(options: ServerOptions, bursts: &[(u64, usize)]) {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let (_server, url) = common::start(options).await;
    let (mut socket, _) = tokio_tungstenite::connect_async(url.replace("http://", "ws://"))
        .await
        .expect("the socket opens");
    let mut id = 0u64;
    let mut call = async |socket: &mut tokio_tungstenite::WebSocketStream<_>, method, params| {
        id += 1;
        let request = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
        socket
            .send(Message::text(request.to_string()))
            .await
            .expect("sends");
        id
    };
    call(&mut socket, "initialize", json!({"protocolVersion":1})).await;
    call(&mut socket, "session/new", json!({"cwd":"/"})).await;
    let mut session = None;
    while session.is_none() {
        let Some(Ok(Message::Text(text))) = socket.next().await else {
            panic!("a text frame");
        };
        let message: Value = serde_json::from_str(&text).expect("one JSON message per frame");
        session = message["result"]["sessionId"].as_str().map(str::to_owned);
    }
    for &(count, size) in bursts {
        let emit = call(
            &mut socket,
            "emit",
            json!({"sessionId":session,"count":count,"size":size}),
        )
        .await;
        socket
            .send(Message::Ping(b"mid-burst".to_vec().into()))
            .await
            .expect("pings");
        let (mut seqs, mut pongs) = (Vec::new(), 0);
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), socket.next())
                .await
                .expect("a frame within 10 s")
                .expect("the socket is open")
                .expect("a frame");
            match frame {
                Message::Text(text) => {
                    let message: Value =
                        serde_json::from_str(&text).expect("one JSON message per frame");
                    if message["id"] == json!(emit) {
                        assert_eq!(message["result"]["emitted"], count);
                        break;
                    }
                    seqs.extend(seq(&message));
                }
                Message::Pong(payload) => {
                    assert_eq!(&payload[..], b"mid-burst");
                    pongs += 1;
                }
                other => panic!("unexpected frame {other:?}"),
            }
        }
        assert_eq!(seqs, (0..count).collect::<Vec<_>>(), "size {size}");
        // The pong may trail the burst's answer; wait for it if it has not come yet.
        while pongs == 0 {
            match tokio::time::timeout(Duration::from_secs(10), socket.next()).await {
                Ok(Some(Ok(Message::Pong(_)))) => pongs += 1,
                other => panic!("a pong, not {other:?}"),
            }
        }
        assert_eq!(pongs, 1);
    }
}
