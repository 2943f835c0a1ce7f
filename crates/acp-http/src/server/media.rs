//! The request headers the endpoint reads by their grammar, not by substring: the media type
//! of a body, the media ranges (and their weights) a reader accepts, and the `Origin`s a
//! request carries.

use ::http::{header, HeaderMap};

/// Whether a `Content-Type` value is JSON: the media type `application/json` exactly (any case,
/// any parameters such as `charset`), so `application/jsonp` or `application/json-seq` are not.
pub(crate) fn is_json(content_type: &str) -> bool {
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    media_type.eq_ignore_ascii_case("application/json")
}

/// Whether an `Accept` value lets the reader take `type/subtype`: a range that matches it
/// (itself, `type/*` or `*/*`) with a weight above zero. The most specific matching range
/// decides (`text/event-stream;q=0, */*` refuses it).
pub(crate) fn accepts(accept: &str, wanted: &str) -> bool {
    let (wanted_type, _) = wanted.split_once('/').unwrap_or((wanted, ""));
    let mut best: Option<(u8, bool)> = None;
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim();
        let specificity = if media.eq_ignore_ascii_case(wanted) {
            3
        } else if media
            .split_once('/')
            .is_some_and(|(t, s)| t.eq_ignore_ascii_case(wanted_type) && s == "*")
        {
            2
        } else if media == "*/*" {
            1
        } else {
            continue;
        };
        let weight_positive = parts
            .filter_map(|param| param.split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .is_none_or(|(_, q)| q.trim().parse::<f32>().is_ok_and(|q| q > 0.0));
        if best.is_none_or(|(seen, _)| specificity > seen) {
            best = Some((specificity, weight_positive));
        }
    }
    best.is_some_and(|(_, positive)| positive)
}

/// The request's `Origin` values: `Ok(None)` when it has none; every one of them when it has
/// several (each must pass); `Err` with what was seen when one is not visible ASCII (it is an
/// origin nobody listed, never "no origin").
pub(crate) fn origins(headers: &HeaderMap) -> Result<Vec<&str>, String> {
    headers
        .get_all(header::ORIGIN)
        .iter()
        .map(|value| {
            value.to_str().map_err(|_| {
                String::from_utf8_lossy(value.as_bytes())
                    .escape_debug()
                    .to_string()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_the_media_type_not_a_prefix() {
        assert!(is_json("application/json"));
        assert!(is_json("Application/JSON; charset=utf-8"));
        assert!(is_json(" application/json ;charset=UTF-8"));
        assert!(!is_json("application/jsonp"));
        assert!(!is_json("application/json-seq"));
        assert!(!is_json("text/json"));
        assert!(!is_json(""));
    }

    #[test]
    fn accept_follows_ranges_and_weights() {
        let sse = "text/event-stream";
        assert!(accepts("text/event-stream", sse));
        assert!(accepts("*/*", sse));
        assert!(accepts("text/*", sse));
        assert!(accepts("application/json, text/event-stream;q=0.5", sse));
        assert!(!accepts("text/event-stream;q=0", sse));
        assert!(!accepts("text/event-stream; q=0.0, */*", sse));
        assert!(!accepts("application/json", sse));
        assert!(!accepts("text/event-streams", sse));
        assert!(!accepts("", sse));
    }

    #[test]
    fn every_origin_counts_and_none_hides() {
        let mut headers = HeaderMap::new();
        assert_eq!(origins(&headers), Ok(vec![]));
        headers.append(header::ORIGIN, "https://a.example".parse().expect("valid"));
        headers.append(header::ORIGIN, "https://b.example".parse().expect("valid"));
        assert_eq!(
            origins(&headers),
            Ok(vec!["https://a.example", "https://b.example"])
        );
        let mut odd = HeaderMap::new();
        odd.insert(
            header::ORIGIN,
            ::http::HeaderValue::from_bytes(b"https://\xe9.example").expect("obs-text"),
        );
        assert!(origins(&odd).is_err());
    }
}
