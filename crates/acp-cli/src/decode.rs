//! `acp decode`: each line classified (request, notification, response, batch entry, invalid),
//! with its sender and method, and decoded with the typed models; errors name the field.

use std::io::Write;

use crate::classify::{Decoded, Decoder, Surface};
use crate::transcript::Line;

/// Decodes `lines`, writing one report line per message (or one JSON object with `json`).
/// Returns how many did not decode.
pub fn run(
    lines: &[Line],
    version: Option<u16>,
    surface: Surface,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<usize> {
    let mut decoder = Decoder::new(version, surface);
    let mut failures = 0;
    for line in lines {
        for decoded in decoder.line(line.from, &line.bytes) {
            if decoded.error.is_some() {
                failures += 1;
            }
            if json {
                let mut value = serde_json::to_value(&decoded).unwrap_or_default();
                if let Some(object) = value.as_object_mut() {
                    object.insert("line".into(), line.number.into());
                    object.insert("protocol".into(), decoder.version().into());
                    object.insert("unstable".into(), (surface == Surface::Unstable).into());
                }
                writeln!(out, "{value}")?;
            } else {
                writeln!(out, "{}", describe(line.number, &decoded))?;
            }
        }
    }
    Ok(failures)
}

/// `12  agent→client  notification  session/update  ok`.
fn describe(number: usize, decoded: &Decoded) -> String {
    let from = decoded.from.map_or("?", |side| side.arrow());
    let kind = decoded.kind.name();
    let batch = if decoded.batch { " (in a batch)" } else { "" };
    let method = decoded.method.as_deref().unwrap_or("-");
    let id = decoded
        .id
        .as_deref()
        .map(|id| format!(" #{id}"))
        .unwrap_or_default();
    let verdict = match (&decoded.error, &decoded.answered_error) {
        (Some(error), _) => format!("ERROR: {error}"),
        (None, Some((code, message))) if decoded.id.is_none() => {
            format!("error answer {code} ({message}) with id null: answers no request")
        }
        (None, Some((code, message))) => format!("error answer {code} ({message})"),
        (None, None) => "ok".to_owned(),
    };
    format!("{number:>5}  {from:<12}  {kind}{batch}  {method}{id}  {verdict}")
}
