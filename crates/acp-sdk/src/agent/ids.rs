//! Session ids: 122 random bits from the operating system's generator (a UUID v4), never
//! sequential, never reused, so an id says nothing about any other session.

use acp_rpc::RpcError;

/// A new session id: a UUID v4 in its lowercase hyphenated form.
pub(crate) fn random_session_id() -> Result<String, RpcError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|err| {
        RpcError::internal_error(format!(
            "no session id: the system's random source failed: {err}"
        ))
    })?;
    Ok(uuid_v4(bytes))
}

/// `bytes` as a UUID v4: the version and variant bits set, the other 122 kept.
fn uuid_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_version_4_uuids() {
        assert_eq!(uuid_v4([0; 16]), "00000000-0000-4000-8000-000000000000");
        assert_eq!(uuid_v4([0xff; 16]), "ffffffff-ffff-4fff-bfff-ffffffffffff");
    }

    #[test]
    fn ten_thousand_ids_are_distinct_and_share_no_structure() {
        let ids: Vec<String> = (0..10_000)
            .map(|_| random_session_id().expect("an id"))
            .collect();
        let distinct: HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        // Consecutive ids share no more leading hex digits than chance gives (1 in 16 for one
        // digit, 1 in 256 for two): a counter would share most of them.
        let shared_prefix =
            |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        let long_prefixes = ids
            .windows(2)
            .filter(|pair| shared_prefix(&pair[0], &pair[1]) >= 3)
            .count();
        assert!(
            long_prefixes < 20,
            "{long_prefixes} consecutive pairs share 3+ digits"
        );
        // Every random digit position takes many values.
        for position in (0..36).filter(|&i| ![8, 13, 14, 18, 23].contains(&i)) {
            let values: HashSet<u8> = ids.iter().map(|id| id.as_bytes()[position]).collect();
            assert!(values.len() >= 4, "position {position} takes {values:?}");
        }
    }
}
