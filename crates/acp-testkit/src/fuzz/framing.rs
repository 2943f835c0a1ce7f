//! Framing and raw-message parsing on arbitrary bytes: never a panic, every line bounded, and a
//! parsed message re-encodes to a line that parses to the same message.

use acp_rpc::framing::{Frame, FrameReader};
use acp_rpc::message::{self, Incoming};

const MAX: usize = 4096;

pub(super) fn run(data: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        // A small buffer, so lines cross reads.
        let mut frames = FrameReader::new(tokio::io::BufReader::with_capacity(7, data), MAX);
        while let Ok(Some(frame)) = frames.next_frame().await {
            let Frame::Line(line) = frame else { continue };
            assert!(line.len() <= MAX);
            if let Ok(Incoming::Single(Ok(parsed))) = message::parse_bounded(&line, 64) {
                let text = parsed.to_json();
                match message::parse(text.as_bytes()) {
                    Ok(Incoming::Single(Ok(again))) => assert_eq!(again.to_json(), text),
                    other => panic!("a re-encoded message does not parse: {text} -> {other:?}"),
                }
            }
        }
    });
}
