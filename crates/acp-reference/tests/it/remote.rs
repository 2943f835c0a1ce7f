//! The reference agent served remotely (`--listen`) and the reference client reaching it by URL,
//! as real processes over loopback: a full v2 session (streamed updates, a permission request,
//! a cancelled turn, a resume with replay on a new connection) over both profiles, and a v1
//! drive.

use std::process::Command;

use crate::common::ListeningAgent;

fn client(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_acp-reference-client"))
        .args(args)
        .output()
        .expect("the client runs");
    let text = format!(
        "{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn a_full_session_over_streamable_http_and_websocket() {
    let agent = ListeningAgent::start(&["--no-auth", "--step-delay-ms", "2"]);
    let ws = agent.url.replace("http://", "ws://");
    for url in [agent.url.as_str(), ws.as_str()] {
        let (ok, out) = client(&["--self-test", "--url", url, "--cancel-after-ms", "300"]);
        assert!(ok, "the self-test over {url} failed:\n{out}");
        for expected in [
            "permission requested: \"Allow deleting target/?\" → allow_once",
            "session/cancel after 0.3 s;",
            "idle (last stop reason: cancelled)",
            "replayed state equals the live state: yes",
            "session/delete ",
        ] {
            assert!(
                out.contains(expected),
                "over {url}, missing {expected:?} in:\n{out}"
            );
        }
    }
}

#[test]
fn a_v1_client_drives_the_remote_agent() {
    let agent = ListeningAgent::start(&["--no-auth", "--step-delay-ms", "2"]);
    let ws = agent.url.replace("http://", "ws://");
    for url in [agent.url.as_str(), ws.as_str()] {
        let (ok, out) = client(&[
            "--url",
            url,
            "--protocol",
            "1",
            "--prompt",
            "tool permission",
            "--allow",
        ]);
        assert!(ok, "the v1 drive over {url} failed:\n{out}");
        for expected in [
            "protocol v1",
            "[permission]",
            "resume with replay: ok",
            "same as live: yes",
            "diagnostics: ok",
        ] {
            assert!(
                out.contains(expected),
                "over {url}, missing {expected:?} in:\n{out}"
            );
        }
    }
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[cfg(target_os = "linux")]
#[test]
fn a_websocket_ping_flood_does_not_grow_the_server() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    let agent = ListeningAgent::start(&["--no-auth"]);
    let addr = agent
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/acp")
        .to_owned();
    let mut socket = std::net::TcpStream::connect(&addr).expect("connects");
    socket
        .write_all(
            b"GET /acp HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\n\
              sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n",
        )
        .expect("writes");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        socket.read_exact(&mut byte).expect("the handshake");
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"));
    let before = rss_kib(agent.pid());
    // Masked pings with a 125-byte payload (the most a control frame carries), their pongs
    // never read: up to a million, for at most 2 s (the server reads control frames at a
    // bounded rate, so the kernel's buffers fill and the writes stop; the old server read
    // 1,003,520 in 5 s and grew 120,520 KiB).
    let mut ping = vec![0x89, 0x80 | 125, 1, 2, 3, 4];
    ping.extend_from_slice(&[0x55; 125]);
    let batch: Vec<u8> = ping
        .iter()
        .copied()
        .cycle()
        .take(ping.len() * 4096)
        .collect();
    socket
        .set_write_timeout(Some(Duration::from_millis(200)))
        .expect("a write timeout");
    let started = Instant::now();
    let mut sent = 0usize;
    while sent < 1_000_000 && started.elapsed() < Duration::from_secs(2) {
        match socket.write(&batch) {
            Ok(n) => sent += n / ping.len(),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let grown = rss_kib(agent.pid()).saturating_sub(before);
    eprintln!("{sent} pings written; server RSS grew {grown} KiB");
    assert!(
        grown < 10 * 1024,
        "the server grew {grown} KiB for {sent} pings"
    );
}
