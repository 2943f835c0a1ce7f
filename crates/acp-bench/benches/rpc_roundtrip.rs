//! Request round trips per second over an in-memory duplex: acp-rpc beside the official
//! `agent-client-protocol` crate (5.2); the peers are in `roundtrip/`.

mod roundtrip;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn roundtrips(c: &mut Criterion) {
    let rt = roundtrip::runtime();
    let client = rt.block_on(async { roundtrip::acp_rs_client() });
    let params = roundtrip::echo_params();
    let mut group = c.benchmark_group("rpc_roundtrip");
    group.throughput(Throughput::Elements(1));
    group.bench_function("acp-rs", |b| {
        b.to_async(&rt)
            .iter(|| roundtrip::acp_rs_raw(&client, &params))
    });
    group.bench_function("acp-rs (typed)", |b| {
        b.to_async(&rt).iter(|| roundtrip::acp_rs_typed(&client))
    });
    let (official, stop) = rt.block_on(roundtrip::official::start());
    group.bench_function("agent-client-protocol 5.2", |b| {
        b.to_async(&rt)
            .iter(|| roundtrip::official_roundtrip(&official))
    });
    group.finish();
    let _ = stop.send(());
}

criterion_group!(benches, roundtrips);
criterion_main!(benches);
