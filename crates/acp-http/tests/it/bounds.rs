//! The server's bounds against a stranger: sockets that never send, dribble their headers or
//! their body, never read what they asked for; a principal that floods `initialize`; a
//! WebSocket that breaks the protocol. Each ends by its deadline or cap, and another client is
//! served within 2 s throughout.

use crate::common;

use acp_http::server::{AgentFactory, ProcessAgent, ServerOptions, Tokens};
use acp_rpc::Principal;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const INITIALIZE: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;

/// `initialize` with `token` (if any): its status and how long it took.
async fn initialize(url: &str, token: Option<&str>) -> (reqwest::StatusCode, Duration) {
    let started = Instant::now();
    let mut request = common::raw_http()
        .post(url)
        .header("content-type", "application/json")
        .timeout(Duration::from_secs(10))
        .body(INITIALIZE);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let status = request.send().await.expect("answers").status();
    (status, started.elapsed())
}

/// Whether the server closed `socket` (EOF or reset) within `within`, whatever it sent first.
async fn closed_within(socket: &mut TcpStream, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match tokio::time::timeout_at(deadline, socket.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// Serves a second client every 100 ms until `flood` ends; panics if one waits 2 s or more.
async fn served_throughout(url: &str, token: Option<&str>, flood: tokio::task::JoinHandle<()>) {
    let mut checks = 0;
    while !flood.is_finished() || checks == 0 {
        let (status, took) = initialize(url, token).await;
        assert_eq!(status, reqwest::StatusCode::OK, "check {checks}");
        assert!(
            took < Duration::from_secs(2),
            "check {checks} took {took:?}"
        );
        checks += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    flood.await.expect("the flood ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_thousand_slow_sockets_are_closed_and_never_lock_anyone_out() {
    let header_deadline = Duration::from_secs(1);
    let (_server, url) =
        common::start(ServerOptions::default().header_read_timeout(header_deadline)).await;
    let addr = common::address_of(&url);
    let flood = tokio::spawn(async move {
        // Half say nothing; half send a request line and then a header byte every 100 ms.
        let mut sockets = Vec::new();
        for n in 0..3000 {
            let mut socket = TcpStream::connect(addr).await.expect("connects");
            if n % 2 == 1 {
                socket
                    .write_all(b"POST /acp HTTP/1.1\r\n")
                    .await
                    .expect("writes");
            }
            sockets.push(socket);
        }
        let started = Instant::now();
        while started.elapsed() < Duration::from_millis(1500) {
            for socket in sockets.iter_mut().skip(1).step_by(2) {
                let _ = socket.write_all(b"x").await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Every one of them is closed by its header deadline.
        let mut open = 0;
        for socket in &mut sockets {
            if !closed_within(socket, Duration::from_secs(2)).await {
                open += 1;
            }
        }
        assert_eq!(open, 0, "slow sockets still open after the header deadline");
    });
    served_throughout(&url, None, flood).await;
}

#[tokio::test]
async fn at_the_socket_cap_idle_sockets_make_room_for_new_clients() {
    // Room for 32 sockets, the header deadline far away: 500 silent sockets would hold every
    // slot; the oldest idle ones are closed instead, and a real client is served.
    let (_server, url) = common::start(
        ServerOptions::default()
            .max_sockets(32)
            .header_read_timeout(Duration::from_secs(60)),
    )
    .await;
    let addr = common::address_of(&url);
    let mut silent = Vec::new();
    for _ in 0..500 {
        silent.push(TcpStream::connect(addr).await.expect("connects"));
    }
    let (status, took) = initialize(&url, None).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert!(took < Duration::from_secs(2), "{took:?}");
    // The first of them were pushed out.
    assert!(closed_within(&mut silent[0], Duration::from_secs(2)).await);
}

#[tokio::test]
async fn a_body_that_never_comes_gets_408() {
    let (_server, url) =
        common::start(ServerOptions::default().body_read_timeout(Duration::from_millis(500))).await;
    let mut socket = TcpStream::connect(common::address_of(&url))
        .await
        .expect("connects");
    socket
        .write_all(
            b"POST /acp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
              content-length: 100\r\n\r\n{\"jsonrpc\"",
        )
        .await
        .expect("writes");
    let mut answer = vec![0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(5), socket.read(&mut answer))
        .await
        .expect("an answer by the body deadline")
        .expect("reads");
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn a_stream_reader_that_stops_reading_is_cut_off() {
    let (_server, url) = common::start(
        ServerOptions::default()
            .write_timeout(Duration::from_millis(300))
            .header_read_timeout(Duration::from_secs(60)),
    )
    .await;
    let (connection, _) = common::raw_initialize(&url).await;
    let mut stream = TcpStream::connect(common::address_of(&url))
        .await
        .expect("connects");
    let get = format!(
        "GET /acp HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\
         acp-connection-id: {connection}\r\nacp-protocol-version: 1\r\n\r\n"
    );
    stream.write_all(get.as_bytes()).await.expect("writes");
    // 20 MB for the connection stream, far more than the socket buffers hold.
    let emit = r#"{"jsonrpc":"2.0","id":5,"method":"emit","params":{"count":2000,"size":10000}}"#;
    let response = common::raw_http()
        .post(&url)
        .header("content-type", "application/json")
        .header(acp_http::wire::CONNECTION_ID, &connection)
        .body(emit)
        .send()
        .await
        .expect("answers");
    assert_eq!(response.status(), reqwest::StatusCode::ACCEPTED);
    // The reader reads nothing for 1.5 s: its socket is closed by the write deadline, so what
    // it reads afterwards ends (short of the 20 MB) instead of waiting for more.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut received = 0usize;
    let mut buf = vec![0u8; 256 * 1024];
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received += n,
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the stream is still open after {received} bytes"
    );
    assert!(received < 20_000_000, "{received} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_principals_initialize_flood_does_not_lock_out_another() {
    let (alice, bob) = ("alice-token-0123456789", "bob-token-0123456789ab");
    let tokens = Tokens::new()
        .with(Principal::new("alice"), alice)
        .with(Principal::new("bob"), bob);
    let (server, url) = common::start(
        ServerOptions::default()
            .tokens(tokens)
            .max_connections_per_principal(64),
    )
    .await;
    let flood = tokio::spawn({
        let url = url.clone();
        async move {
            // 1,024 initialize POSTs, 32 at a time, their connections left idle.
            let mut statuses = Vec::new();
            for _ in 0..32 {
                let batch: Vec<_> = (0..32)
                    .map(|_| {
                        let url = url.clone();
                        tokio::spawn(async move { initialize(&url, Some(alice)).await.0 })
                    })
                    .collect();
                for task in batch {
                    statuses.push(task.await.expect("a POST"));
                }
            }
            let ok = statuses.iter().filter(|s| **s == 200).count();
            let limited = statuses.iter().filter(|s| **s == 429).count();
            assert_eq!((ok, limited), (64, 960), "alice's cap");
        }
    });
    served_throughout(&url, Some(bob), flood).await;
    assert!(server.connections() >= 65);
}

#[test]
fn agent_processes_are_capped_until_one_is_stopped() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let agents = ProcessAgent::new("cat", Vec::<String>::new()).max_processes(2);
        let local = Principal::local();
        let first = agents.start(&local).expect("the first");
        let _second = agents.start(&local).expect("the second");
        let Err(refused) = agents.start(&local) else {
            panic!("a third is refused");
        };
        assert!(
            refused.to_string().contains("2 agent processes"),
            "{refused}"
        );
        assert_eq!(agents.running(), 2);
        // Its connection ends: once it is stopped there is room again.
        drop(first);
        assert!(agents.stopped(Duration::from_secs(5)).await);
        assert_eq!(agents.running(), 1);
        agents.start(&local).expect("room again");
    });
}

#[tokio::test]
async fn a_websocket_frame_that_breaks_the_protocol_gets_a_close_frame() {
    let (_server, url) = common::start(ServerOptions::default()).await;
    let mut socket = TcpStream::connect(common::address_of(&url))
        .await
        .expect("connects");
    socket
        .write_all(
            b"GET /acp HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
              sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n",
        )
        .await
        .expect("writes");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        socket.read_exact(&mut byte).await.expect("the handshake");
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    // A masked, empty text frame with a reserved bit set: a protocol error.
    socket
        .write_all(&[0xC1, 0x80, 1, 2, 3, 4])
        .await
        .expect("writes");
    let mut frame = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(5), socket.read_exact(&mut frame))
        .await
        .expect("a close frame")
        .expect("reads");
    assert_eq!(frame[0], 0x88, "a close frame: {frame:?}");
    assert_eq!(
        u16::from_be_bytes([frame[2], frame[3]]),
        1002,
        "protocol error"
    );
}
