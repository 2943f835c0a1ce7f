//! The stable view: decoding as a build without the protocol's drafts would, at run time.
//!
//! The model crates put every draft addition of `schema.unstable.json` behind their `unstable`
//! feature, so whether drafts are known is fixed when a program is built. A tool that reads what
//! others send (a decoder, a linter, a proxy) may want both views from one build: with
//! [`stable_only`], decoding on this thread reads every draft surface exactly as a build without
//! the feature reads it:
//!
//! - a draft member of a tagged union is an unknown variant (kept whole), or an error for a
//!   closed union;
//! - a draft property of a stable type is an unknown property (kept in the struct's `extra`);
//! - a draft value of an open enum is its catch-all;
//! - a draft method is an unknown method (`-32601`).
//!
//! A union decided by shape (untagged) cannot hide a draft member; the pinned schemas have none,
//! and the generator's tests fail on a schema that adds one.
//! Encoding is not affected, and nothing changes in a build without drafts (there is nothing to
//! hide). The generated decoders ask [`hidden`] only after they matched a draft name, so the
//! stable names cost nothing more.

use std::cell::Cell;

thread_local! {
    /// Whether decoding on this thread hides the drafts; set only inside [`stable_only`].
    static HIDDEN: Cell<bool> = const { Cell::new(false) };
}

/// `true` while decoding on this thread reads drafts as a stable build would (inside
/// [`stable_only`]). Called by generated decoders when they meet a draft name.
#[inline]
pub fn hidden() -> bool {
    HIDDEN.with(Cell::get)
}

/// Runs `decode` with the drafts hidden on this thread, then restores the previous view (also
/// when `decode` panics). Nests: an inner call leaves the drafts hidden after it returns.
///
/// ```
/// use acp_support::drafts;
///
/// assert!(!drafts::hidden());
/// let inside = drafts::stable_only(drafts::hidden);
/// assert!(inside);
/// assert!(!drafts::hidden());
/// ```
pub fn stable_only<R>(decode: impl FnOnce() -> R) -> R {
    /// Puts the previous view back when dropped.
    struct Restore(bool);

    impl Drop for Restore {
        fn drop(&mut self) {
            HIDDEN.with(|hidden| hidden.set(self.0));
        }
    }

    let _restore = Restore(HIDDEN.with(|hidden| hidden.replace(true)));
    decode()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_is_restored_after_a_panic_and_nests() {
        let caught = std::panic::catch_unwind(|| stable_only(|| panic!("inside")));
        assert!(caught.is_err());
        assert!(!hidden());
        stable_only(|| {
            stable_only(|| assert!(hidden()));
            assert!(hidden(), "the outer view stays after an inner one");
        });
        assert!(!hidden());
    }

    #[test]
    fn the_view_belongs_to_its_thread() {
        stable_only(|| {
            let other = std::thread::spawn(hidden).join();
            assert_eq!(other.ok(), Some(false));
        });
    }
}
