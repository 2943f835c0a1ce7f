//! `acp proxy`: sits between an editor and an agent. Every byte is forwarded unchanged, both
//! ways, as soon as it is read; on the side each complete line is decoded with the typed models
//! (problems reported on stderr as they happen) and, with `--record`, written to a transcript.
//!
//! A chunk's complete lines are recorded before the chunk is forwarded, so the recording's order
//! is causal: a peer cannot answer a line before it is recorded (recorded after forwarding, an
//! editor's next prompt could be recorded before the `idle` it reacted to).
//!
//! The side channel never holds up the forwarding: a line longer than [`MAX_LINE`] is forwarded
//! and reported, not buffered. The decoder and the recorder are shared by the two directions
//! behind one mutex, taken per complete line (never across an await), which also orders the
//! recording as the lines were read.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use acp_rpc::process::STOP_GRACE;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::classify::{Decoder, Side, Surface};
use crate::transcript::Recorder;
use crate::CliError;

/// The longest line the side channel decodes and records.
pub const MAX_LINE: usize = 64 << 20;

struct SideChannel {
    decoder: Decoder,
    recorder: Option<Recorder>,
    problems: u64,
}

impl SideChannel {
    fn line(&mut self, from: Side, line: &[u8]) {
        if let Some(recorder) = &mut self.recorder {
            if let Err(err) = recorder.record(from, line) {
                note!("acp proxy: cannot record: {err}; recording stops");
                self.recorder = None;
            }
        }
        for decoded in self.decoder.line(Some(from), line) {
            if let Some(error) = decoded.error {
                self.problems += 1;
                let method = decoded.method.as_deref().unwrap_or("-");
                note!("acp proxy: {} {method}: {error}", from.arrow());
            }
        }
    }
}

/// Splits a byte stream into lines for the side channel.
struct Lines {
    buffer: Vec<u8>,
    overlong: bool,
}

impl Lines {
    fn feed(&mut self, chunk: &[u8], mut each: impl FnMut(&[u8], bool)) {
        for piece in chunk.split_inclusive(|b| *b == b'\n') {
            let complete = piece.last() == Some(&b'\n');
            let body = if complete {
                &piece[..piece.len() - 1]
            } else {
                piece
            };
            if !self.overlong {
                if self.buffer.len() + body.len() > MAX_LINE {
                    self.overlong = true;
                    self.buffer = Vec::new();
                } else {
                    self.buffer.extend_from_slice(body);
                }
            }
            if complete {
                let mut line = std::mem::take(&mut self.buffer);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                each(&line, self.overlong);
                self.overlong = false;
            }
        }
    }
}

async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    side: Side,
    channel: Arc<Mutex<SideChannel>>,
) -> std::io::Result<()> {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut lines = Lines {
        buffer: Vec::new(),
        overlong: false,
    };
    loop {
        let read = from.read(&mut buffer).await?;
        if read == 0 {
            break;
        }
        lines.feed(&buffer[..read], |line, overlong| {
            let mut channel = channel.lock().unwrap_or_else(|p| p.into_inner());
            if overlong {
                note!(
                    "acp proxy: {}: a line over {MAX_LINE} bytes was forwarded, not decoded",
                    side.arrow()
                );
            } else if !line.iter().all(u8::is_ascii_whitespace) {
                channel.line(side, line);
            }
        });
        // Then forwarded, as it came.
        to.write_all(&buffer[..read]).await?;
        to.flush().await?;
    }
    to.shutdown().await
}

/// Runs `agent` behind this process's stdin and stdout until both ends are done; returns the
/// agent's exit code.
pub async fn run(
    agent: &[String],
    record: Option<&Path>,
    version: Option<u16>,
    surface: Surface,
) -> Result<i32, CliError> {
    let Some((program, args)) = agent.split_first() else {
        return Err(CliError::Usage("give the agent to run after `--`".into()));
    };
    let recorder = record
        .map(Recorder::create)
        .transpose()
        .map_err(|err| CliError::Io(format!("cannot create the recording: {err}")))?;
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut group = acp_rpc::process::GroupChild::spawn(&mut command)
        .map_err(|err| CliError::Spawn(format!("`{program}`: {err}")))?;
    let child = group.child();
    let (Some(agent_in), Some(agent_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(CliError::Spawn("the agent's stdio was not piped".into()));
    };
    let signals = acp_rpc::process::termination()
        .map_err(|err| CliError::Io(format!("listening for signals: {err}")))?;
    let channel = Arc::new(Mutex::new(SideChannel {
        decoder: Decoder::new(version, surface),
        recorder,
        problems: 0,
    }));
    let mut upstream = tokio::spawn(pump(
        tokio::io::stdin(),
        agent_in,
        Side::Client,
        channel.clone(),
    ));
    let mut downstream = tokio::spawn(pump(
        agent_out,
        tokio::io::stdout(),
        Side::Agent,
        channel.clone(),
    ));
    // Who ends it: the agent (its stdout closes: its exit code), the editor (its stdin closes:
    // the agent's is closed in turn, it gets a grace period to finish, then it is stopped; exit
    // 0), or a signal (the agent is stopped; 128 + the signal).
    let ended_by = tokio::select! {
        done = &mut downstream => {
            report("agent→client", done);
            Ended::Agent
        }
        done = &mut upstream => {
            report("client→agent", done);
            if let Ok(done) = tokio::time::timeout(STOP_GRACE, &mut downstream).await {
                report("agent→client", done);
            }
            Ended::Editor
        }
        signal = signals => Ended::Signal(signal),
    };
    upstream.abort();
    downstream.abort();
    let status = group.stop(STOP_GRACE).await;
    let problems = channel.lock().map(|c| c.problems).unwrap_or_default();
    if problems > 0 {
        note!("acp proxy: {problems} messages did not decode");
    }
    Ok(match ended_by {
        Ended::Agent => status
            .map_err(|err| CliError::Io(format!("waiting for the agent: {err}")))?
            .code()
            .unwrap_or(1),
        Ended::Editor => 0,
        Ended::Signal(signal) => signal.exit_code(),
    })
}

/// What ended a proxy run.
enum Ended {
    Agent,
    Editor,
    Signal(acp_rpc::process::Termination),
}

/// Reports a direction's failure, unless it is the other end going away (a broken pipe or a
/// reset on shutdown is how a peer leaves).
fn report(direction: &str, done: Result<std::io::Result<()>, tokio::task::JoinError>) {
    use std::io::ErrorKind::{BrokenPipe, ConnectionReset};
    match done {
        Ok(Err(err)) if !matches!(err.kind(), BrokenPipe | ConnectionReset) => {
            note!("acp proxy: {direction}: {err}");
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_and_crlf() {
        let mut lines = Lines {
            buffer: Vec::new(),
            overlong: false,
        };
        let mut seen = Vec::new();
        for chunk in [&b"{\"a\""[..], b":1}\r\n{\"b\":2}\n{\"c\""] {
            lines.feed(chunk, |line, _| seen.push(line.to_vec()));
        }
        assert_eq!(seen, [b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec()]);
    }
}
