//! Agent-owned display terminals: patched fields, output snapshots and appended chunks.

use acp_support::Meta;
use acp_v2::{
    AbsolutePath, TerminalCapabilities, TerminalExitStatus, TerminalId, TerminalOutput,
    TerminalSize, TerminalUpdate,
};
use base64::Engine;
use serde::{Serialize, Serializer};

use crate::meta::patch_meta;
use crate::terminal_text::TerminalText;

/// The folded state of one terminal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Terminal {
    /// Its id.
    pub terminal_id: TerminalId,
    /// The command shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its absolute working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<AbsolutePath>,
    /// Every output byte, in order: kept whole (a replay sends them), and only once.
    #[serde(serialize_with = "as_base64")]
    pub output: Vec<u8>,
    /// The output as safe, display-only text, derived from the bytes as they come; complete
    /// lines only as far back as the state's
    /// [`Limits::terminal_scrollback`](crate::limits::Limits::terminal_scrollback).
    #[serde(rename = "text", serialize_with = "as_text")]
    pub transcript: TerminalText,
    /// Exit information; present once the command has exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<TerminalExitStatus>,
    /// The display size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<TerminalSize>,
    /// What the agent lets the client do with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<TerminalCapabilities>,
    /// Stored `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A terminal chunk or snapshot whose `data` is not valid base64.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("terminal `{terminal_id}`: output is not valid base64: {reason}")]
pub struct BadOutput {
    /// The terminal.
    pub terminal_id: String,
    /// What the decoder reported.
    pub reason: String,
}

impl Terminal {
    pub(crate) fn new(terminal_id: TerminalId, scrollback: usize) -> Self {
        Self {
            terminal_id,
            command: None,
            cwd: None,
            output: Vec::new(),
            transcript: TerminalText::new(false).with_scrollback(scrollback),
            exit_status: None,
            size: None,
            capabilities: None,
            meta: None,
        }
    }

    /// The bytes the terminal's output buffers hold on the heap (raw bytes plus the bounded
    /// safe text), by capacity: what a client pays in memory for this terminal's output.
    pub fn output_heap_bytes(&self) -> usize {
        self.output.capacity() + self.transcript.heap_bytes()
    }

    /// `true` once an exit status has been reported.
    pub fn has_exited(&self) -> bool {
        self.exit_status.is_some()
    }

    /// Applies a `terminal_update`; an `output` snapshot replaces every byte.
    /// Folds one `terminal_update` in. A snapshot that is not base64 leaves the output as it was
    /// and comes back with the error, so that what was rejected (and only that) can be kept.
    pub(crate) fn apply(
        &mut self,
        update: TerminalUpdate,
    ) -> Result<(), (BadOutput, TerminalOutput)> {
        update.command.apply_to(&mut self.command);
        update.cwd.apply_to(&mut self.cwd);
        update.exit_status.apply_to(&mut self.exit_status);
        update.size.apply_to(&mut self.size);
        update.capabilities.apply_to(&mut self.capabilities);
        patch_meta(&mut self.meta, update.meta);
        let result = match update.output {
            acp_support::Patch::Absent => Ok(()),
            acp_support::Patch::Null => {
                self.replace_output(Vec::new());
                Ok(())
            }
            acp_support::Patch::Value(snapshot) => match self.decode(&snapshot.data) {
                Ok(bytes) => {
                    self.replace_output(bytes);
                    Ok(())
                }
                Err(err) => Err((err, snapshot)),
            },
        };
        if self.has_exited() {
            // No more bytes will come: an unfinished code point at the end is U+FFFD.
            self.transcript.finish();
        }
        result
    }

    /// Appends one `terminal_output_chunk`, decoded on its own. After the exit status, the
    /// end of the output is the end of the stream (an unfinished code point shows as U+FFFD), as
    /// it is when the status comes after the output.
    pub(crate) fn append(&mut self, data: &str) -> Result<(), BadOutput> {
        // Decoded straight onto the end of the bytes, then read from there: one copy.
        let start = self.output.len();
        // Grown by a sixty-fourth at a time, not doubled: the bytes are most of a terminal's
        // memory, and a doubled buffer would hold up to twice them.
        let incoming = base64::decoded_len_estimate(data.len());
        if self.output.capacity() - start < incoming {
            self.output.reserve_exact(incoming.max(start / 64));
        }
        if let Err(err) = decode_onto(&self.terminal_id, data, &mut self.output) {
            self.output.truncate(start);
            return Err(err);
        }
        self.transcript.push(&self.output[start..]);
        if self.has_exited() {
            self.transcript.finish();
        }
        Ok(())
    }

    fn replace_output(&mut self, bytes: Vec<u8>) {
        self.transcript.reset();
        self.transcript.push(&bytes);
        self.output = bytes;
    }

    fn decode(&self, data: &str) -> Result<Vec<u8>, BadOutput> {
        let mut bytes = Vec::new();
        decode_onto(&self.terminal_id, data, &mut bytes)?;
        Ok(bytes)
    }
}

/// Decodes the base64 `data` of a terminal's output onto the end of `out` (which may hold part
/// of it on error).
fn decode_onto(terminal_id: &TerminalId, data: &str, out: &mut Vec<u8>) -> Result<(), BadOutput> {
    base64::engine::general_purpose::STANDARD
        .decode_vec(data, out)
        .map_err(|err| BadOutput {
            terminal_id: terminal_id.to_string(),
            reason: err.to_string(),
        })
}

fn as_base64<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn as_text<S: Serializer>(text: &TerminalText, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(text.text())
}
