//! Content blocks across versions: the SDK speaks v2's [`ContentBlock`] to its users and
//! converts v1's on the way in and out.

use acp_v2::ContentBlock;

/// The text of a prompt or message: its text blocks, joined.
pub fn text_of(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

/// A v1 content block as the SDK's (v2) block. The two versions' blocks have the same wire shape
/// (`text`, `image`, `audio`, `resource_link`, `resource`), so the conversion goes through JSON
/// and keeps every unknown field; a block v2 cannot read stays whole as an unknown variant.
pub(crate) fn v1_to_v2(block: &acp_v1::ContentBlock) -> Result<ContentBlock, serde_json::Error> {
    serde_json::to_value(block).and_then(serde_json::from_value)
}

/// The SDK's (v2) content block as v1's, when v1 can carry it.
pub(crate) fn v2_to_v1(block: &ContentBlock) -> Result<acp_v1::ContentBlock, serde_json::Error> {
    serde_json::to_value(block).and_then(serde_json::from_value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_convert_both_ways_keeping_unknown_fields() {
        let wire = serde_json::json!({"type": "image", "mimeType": "image/png", "data": "AA==",
                                      "x-vendor": {"keep": true}});
        let v1: acp_v1::ContentBlock = serde_json::from_value(wire.clone()).expect("v1 block");
        let v2 = v1_to_v2(&v1).expect("v2 block");
        assert_eq!(serde_json::to_value(&v2).expect("encodes"), wire);
        let back = v2_to_v1(&v2).expect("v1 block");
        assert_eq!(back, v1);
    }

    #[test]
    fn text_of_joins_text_blocks_only() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "a"},
            {"type": "resource_link", "uri": "file:///x", "name": "x"},
            {"type": "text", "text": "b"}
        ]))
        .expect("blocks");
        assert_eq!(text_of(&blocks), "ab");
    }
}
