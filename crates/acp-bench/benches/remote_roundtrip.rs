//! Request round trips over the remote transport (issue 12) beside the same peers over a pipe:
//! acp-rpc's echo agent served by `acp-http` on loopback, reached by its client over WebSocket,
//! Streamable HTTP (HTTP/1.1 and h2c); the baselines are two kernel pipes (a subprocess's stdio)
//! and the two 64 KiB in-memory pipes of `rpc_roundtrip`. One request at a time, current-thread
//! runtime, client and server in one process.
//!
//! `cargo bench -p acp-bench --bench remote_roundtrip`

mod roundtrip;

use acp_http::client::ClientOptions;
use acp_http::server::{HttpServer, ServerOptions};
use acp_rpc::{Connection, ConnectionOptions};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// The echo agent and a client over two kernel pipes, the shape of a subprocess's stdio.
fn os_pipes_client() -> Connection {
    use tokio::net::unix::pipe;
    let (to_agent, from_client) = pipe::pipe().expect("a pipe");
    let (to_client, from_agent) = pipe::pipe().expect("a pipe");
    let _agent = Connection::spawn(
        from_client,
        to_client,
        roundtrip::Echo,
        ConnectionOptions::default(),
    );
    let (client, _task) = Connection::spawn(
        from_agent,
        to_agent,
        roundtrip::Echo,
        ConnectionOptions::default(),
    );
    client
}

fn roundtrips(c: &mut Criterion) {
    let rt = roundtrip::runtime();
    let params = roundtrip::echo_params();
    let url = rt.block_on(async {
        let server = HttpServer::new(roundtrip::echo_agent_io, ServerOptions::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binds");
        let url = format!("http://{}/acp", listener.local_addr().expect("addr"));
        tokio::spawn(async move { server.serve(listener).await });
        url
    });
    let mut group = c.benchmark_group("remote_roundtrip");
    group.throughput(Throughput::Elements(1));
    let pipe = rt.block_on(async { roundtrip::acp_rs_client() });
    group.bench_function("in-memory pipe", |b| {
        b.to_async(&rt)
            .iter(|| roundtrip::acp_rs_raw(&pipe, &params))
    });
    let stdio = rt.block_on(async { os_pipes_client() });
    group.bench_function("stdio (OS pipes)", |b| {
        b.to_async(&rt)
            .iter(|| roundtrip::acp_rs_raw(&stdio, &params))
    });
    let ws = rt.block_on(roundtrip::remote_client(
        &url.replace("http://", "ws://"),
        ClientOptions::default(),
    ));
    group.bench_function("websocket", |b| {
        b.to_async(&rt).iter(|| roundtrip::acp_rs_raw(&ws, &params))
    });
    let http = rt.block_on(roundtrip::remote_client(&url, ClientOptions::default()));
    group.bench_function("streamable http (HTTP/1.1)", |b| {
        b.to_async(&rt)
            .iter(|| roundtrip::acp_rs_raw(&http, &params))
    });
    let h2 = rt.block_on(roundtrip::remote_client(
        &url,
        ClientOptions::default().http2(true),
    ));
    group.bench_function("streamable http (h2c)", |b| {
        b.to_async(&rt).iter(|| roundtrip::acp_rs_raw(&h2, &params))
    });
    group.finish();
}

criterion_group!(benches, roundtrips);
criterion_main!(benches);
