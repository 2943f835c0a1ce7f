//! Sizes of the types on the decode hot path: a decoded value is moved through several `Result`
//! layers, so every byte of a large enum is copied on every message. These bounds hold the line
//! reached on 2026-12-01: `SessionUpdate` was 576 bytes before lossless structs (as issue 8
//! measured it), 1,008 with them, 384 once `Meta` and the unknown properties went behind a
//! pointer, 96 with large union members boxed, and 72 once an unknown member became one pointer
//! (so the message chunks, 60% of a turn's traffic, are no longer boxed).

use std::mem::size_of;

#[test]
fn meta_and_unknown_properties_cost_a_pointer() {
    assert_eq!(
        size_of::<acp_v2::Patch<acp_v2::Meta>>(),
        2 * size_of::<usize>()
    );
    assert_eq!(size_of::<acp_support::Extra>(), size_of::<usize>());
}

/// Bounds for both builds. Union members estimated above 64 bytes are boxed by the generator
/// (`xtask/src/codegen/emit/sizes.rs`); an unknown member is a pointer, so `SessionUpdate` is 72
/// bytes (a `ContentChunk`, held inline).
#[test]
fn hot_path_types_stay_small() {
    let sizes = [
        (
            "UpdateSessionNotification",
            size_of::<acp_v2::UpdateSessionNotification>(),
            120,
        ),
        ("SessionUpdate", size_of::<acp_v2::SessionUpdate>(), 72),
        ("ContentChunk", size_of::<acp_v2::ContentChunk>(), 64),
        ("ContentBlock", size_of::<acp_v2::ContentBlock>(), 16),
        ("TextContent", size_of::<acp_v2::TextContent>(), 144),
        ("UnknownVariant", size_of::<acp_v2::UnknownVariant>(), 8),
    ];
    for (name, size, bound) in sizes {
        assert!(size <= bound, "{name} is {size} bytes, more than {bound}");
    }
}
