//! Server-sent events: the encoding of one message as an event, and a decoder for the client.
//!
//! The format is the HTML standard's `text/event-stream`
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream>):
//! lines ended by CRLF, LF or CR; `field: value`; an event dispatched at a blank line; `:` lines
//! are comments (keep-alives).

#[cfg(feature = "server")]
use bytes::{BufMut, Bytes, BytesMut};

/// One event: a message and the id a reconnecting reader resumes after.
#[cfg(feature = "server")]
pub(crate) fn encode(id: u64, data: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(data.len() + 32);
    out.put_slice(b"id: ");
    out.put_slice(id.to_string().as_bytes());
    out.put_slice(b"\ndata: ");
    // A message is one line of JSON; a stray line break would end the field early.
    out.extend(
        data.iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
    );
    out.put_slice(b"\n\n");
    out.freeze()
}

/// A keep-alive: a comment, which readers skip.
#[cfg(feature = "server")]
pub(crate) fn keep_alive() -> Bytes {
    Bytes::from_static(b":\n\n")
}

/// One decoded event.
#[cfg(feature = "client")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `id` field, when the event set one.
    pub id: Option<String>,
    /// The `data` fields, joined by `\n`.
    pub data: String,
}

/// Why the stream cannot be decoded.
#[cfg(feature = "client")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DecodeError {
    /// An event longer than the limit.
    #[error("an SSE event is longer than {0} bytes")]
    TooLong(usize),
    /// Bytes that are not UTF-8.
    #[error("an SSE line is not UTF-8")]
    NotUtf8,
}

/// Decodes a byte stream into events, holding at most `max` bytes of one event.
#[cfg(feature = "client")]
#[derive(Debug)]
pub(crate) struct Decoder {
    max: usize,
    line: Vec<u8>,
    /// The previous byte was a CR, so an LF right after it ends nothing.
    after_cr: bool,
    id: Option<String>,
    data: String,
    has_data: bool,
}

#[cfg(feature = "client")]
impl Decoder {
    /// A decoder whose events hold at most `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max,
            line: Vec::new(),
            after_cr: false,
            id: None,
            data: String::new(),
            has_data: false,
        }
    }

    /// Feeds `chunk`, appending the events it completes to `out`.
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> Result<(), DecodeError> {
        for &b in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, b == b'\r');
            match b {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => self.end_line(out)?,
                _ => {
                    if self.line.len() + self.data.len() >= self.max {
                        return Err(DecodeError::TooLong(self.max));
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<Event>) -> Result<(), DecodeError> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.has_data {
                out.push(Event {
                    id: self.id.clone(),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.data.clear();
            self.has_data = false;
            return Ok(());
        }
        let line = String::from_utf8(line).map_err(|_| DecodeError::NotUtf8)?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // An id with a NUL is ignored, as the standard says.
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "server", feature = "client"))]
mod tests {
    use super::*;

    fn decode_in_chunks(bytes: &[u8], chunk: usize) -> Vec<Event> {
        let mut decoder = Decoder::new(1 << 20);
        let mut out = Vec::new();
        for part in bytes.chunks(chunk) {
            decoder.feed(part, &mut out).expect("decodes");
        }
        out
    }

    #[test]
    fn encoded_events_decode_back_whatever_the_chunking() {
        let mut stream = Vec::new();
        stream.extend_from_slice(&encode(1, br#"{"a":1}"#));
        stream.extend_from_slice(&keep_alive());
        stream.extend_from_slice(&encode(2, b"{\"b\":\r\n2}"));
        for chunk in [1, 2, 3, 7, 1000] {
            let events = decode_in_chunks(&stream, chunk);
            assert_eq!(
                events,
                vec![
                    Event {
                        id: Some("1".into()),
                        data: r#"{"a":1}"#.into()
                    },
                    Event {
                        id: Some("2".into()),
                        data: "{\"b\":  2}".into()
                    },
                ],
                "chunks of {chunk}"
            );
        }
    }

    #[test]
    fn every_line_ending_and_multi_line_data() {
        let events = decode_in_chunks(b"data: a\rdata:b\r\nid: 9\n\nevent: x\n\n", 1);
        assert_eq!(
            events,
            vec![Event {
                id: Some("9".into()),
                data: "a\nb".into()
            }]
        );
    }

    #[test]
    fn an_event_past_the_limit_is_an_error() {
        let mut decoder = Decoder::new(8);
        let mut out = Vec::new();
        assert_eq!(
            decoder.feed(b"data: 0123456789\n\n", &mut out),
            Err(DecodeError::TooLong(8))
        );
    }
}
