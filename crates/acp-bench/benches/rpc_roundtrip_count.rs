//! Round trips for an instruction count: `rpc_roundtrip_count PEER N [CALLERS]` runs N rounds
//! of CALLERS concurrent round trips (1 by default: one after the other) with `PEER` (`acp-rs`,
//! `acp-rs-typed` or `official`) after one warm-up. `acp-rs-otel` and
//! `acp-rs-typed-otel` do the same with OpenTelemetry export on (`acp_sdk::telemetry`, to the
//! `OTEL_EXPORTER_OTLP_ENDPOINT` the caller sets), inside one root span: every message's span
//! recorded, its trace context injected and adopted, the batches sent. Run it under callgrind at
//! two values of N (`scripts/callgrind-roundtrip.sh`): the difference divided by the difference
//! in N is the cost of one round trip, setup excluded. No timing here: instruction counts do not
//! depend on the machine's load.

mod roundtrip;

fn main() {
    let mut args = std::env::args().skip(1);
    let peer = args.next().unwrap_or_else(|| "acp-rs".into());
    let n: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let callers: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1).max(1);
    let otel = peer.ends_with("-otel");
    let peer = peer.trim_end_matches("-otel").to_owned();
    let telemetry = otel.then(|| acp_sdk::telemetry::init("rpc_roundtrip_count"));
    let root = if otel {
        tracing::info_span!("acp_bench.roundtrips")
    } else {
        tracing::Span::none()
    };
    let rt = roundtrip::runtime();
    let _entered = root.enter();
    rt.block_on(async {
        match peer.as_str() {
            "acp-rs" | "acp-rs-typed" => {
                let client = roundtrip::acp_rs_client();
                let params = roundtrip::echo_params();
                roundtrip::acp_rs_raw(&client, &params).await;
                for _ in 0..n {
                    if peer == "acp-rs" {
                        concurrently(callers, || roundtrip::acp_rs_raw(&client, &params)).await;
                    } else {
                        concurrently(callers, || roundtrip::acp_rs_typed(&client)).await;
                    }
                }
            }
            "official" => {
                let (client, stop) = roundtrip::official::start().await;
                roundtrip::official_roundtrip(&client).await;
                for _ in 0..n {
                    concurrently(callers, || roundtrip::official_roundtrip(&client)).await;
                }
                let _ = stop.send(());
            }
            other => eprintln!("unknown peer `{other}` (acp-rs, acp-rs-typed, official)"),
        }
    });
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
}

/// `callers` round trips made by `trip` at once, on this task; one is simply awaited.
async fn concurrently<F: std::future::Future<Output = ()>>(callers: usize, trip: impl Fn() -> F) {
    if callers == 1 {
        trip().await;
    } else {
        futures::future::join_all((0..callers).map(|_| trip())).await;
    }
}
