//! The [`SessionStore`] contract, as one check every implementation's tests run.

use acp_rpc::Principal;

use super::{ArchiveFilter, HistoryEntry, ListQuery, SessionRecord, SessionStore, StoreError};

fn record(id: &str, owner: &str, version: u16, created_at: u64) -> SessionRecord {
    let mut record = SessionRecord::new(id, Principal::new(owner), version, "/work");
    record.created_at = created_at;
    record.updated_at = created_at;
    record
}

fn ids(store: &dyn SessionStore, query: &ListQuery) -> (Vec<String>, Option<String>) {
    let page = store.list(query).expect("lists");
    (page.sessions.into_iter().map(|r| r.id).collect(), page.next)
}

/// Checks `store` against the contract (it must be empty).
pub(crate) fn check(store: &dyn SessionStore) {
    // Create, and a taken id.
    for (id, owner, version, at) in [
        ("a1", "alice", 2, 10),
        ("a2", "alice", 2, 20),
        ("a3", "alice", 2, 20),
        ("a4", "alice", 1, 30),
        ("b1", "bob", 2, 15),
    ] {
        store
            .create(&record(id, owner, version, at))
            .expect("created");
    }
    assert!(matches!(
        store.create(&record("a1", "bob", 2, 99)),
        Err(StoreError::Exists(_))
    ));
    assert_eq!(
        store.get("a1").expect("get").expect("a1").owner.as_str(),
        "alice"
    );
    assert_eq!(store.get("nope").expect("get"), None);

    // Listing: the owner's sessions of one version, oldest first (the id breaks ties), paged.
    let alice = Principal::new("alice");
    let mut query = ListQuery::new(alice.clone(), 2, 2);
    let (first, next) = ids(store, &query);
    assert_eq!(first, ["a1", "a2"]);
    query.cursor = next;
    let (second, next) = ids(store, &query);
    assert_eq!((second, next), (vec!["a3".to_owned()], None));
    assert_eq!(ids(store, &ListQuery::new(alice.clone(), 1, 10)).0, ["a4"]);
    assert_eq!(
        ids(store, &ListQuery::new(Principal::new("bob"), 2, 10)).0,
        ["b1"]
    );
    assert_eq!(
        ids(store, &ListQuery::new(Principal::new("eve"), 2, 10))
            .0
            .len(),
        0
    );
    let mut bad = ListQuery::new(alice.clone(), 2, 2);
    bad.cursor = Some("not a cursor".into());
    assert!(matches!(
        store.list(&bad),
        Err(StoreError::UnknownCursor(_))
    ));
    assert_eq!(store.count(&alice).expect("count"), 4);

    // Filters: working directory (without a trailing separator) and archive state.
    let mut moved = store.get("a2").expect("get").expect("a2");
    moved.cwd = "/elsewhere/".into();
    moved.title = Some("renamed".into());
    store.update(&moved).expect("updated");
    let mut by_cwd = ListQuery::new(alice.clone(), 2, 10);
    by_cwd.cwd = Some("/elsewhere".into());
    assert_eq!(ids(store, &by_cwd).0, ["a2"]);
    let mut archived = store.get("a3").expect("get").expect("a3");
    archived.archived = true;
    store.update(&archived).expect("updated");
    assert_eq!(
        ids(store, &ListQuery::new(alice.clone(), 2, 10)).0,
        ["a1", "a2"]
    );
    let mut only = ListQuery::new(alice.clone(), 2, 10);
    only.archived = ArchiveFilter::Only;
    assert_eq!(ids(store, &only).0, ["a3"]);
    assert_eq!(
        store.get("a2").expect("get").expect("a2").title.as_deref(),
        Some("renamed")
    );

    // History: appended in order with the record, compacted, deleted with the session.
    if store.keeps_history() {
        let mut a1 = store.get("a1").expect("get").expect("a1");
        a1.updated_at = 40;
        a1.extra.insert("next".into(), 7.into());
        let turn1 = [
            HistoryEntry::new(1, "{\"n\":1}"),
            HistoryEntry::new(1, "{\"n\":2}"),
        ];
        store.append(&a1, &turn1).expect("appended");
        store
            .append(&a1, &[HistoryEntry::new(2, "{\"n\":3}")])
            .expect("appended");
        let history = store.history("a1").expect("history");
        assert_eq!(
            history
                .iter()
                .map(|e| e.update.as_str())
                .collect::<Vec<_>>(),
            ["{\"n\":1}", "{\"n\":2}", "{\"n\":3}"]
        );
        assert_eq!(history[2].turn, 2);
        let stored = store.get("a1").expect("get").expect("a1");
        assert_eq!(
            (stored.updated_at, stored.extra.get("next")),
            (40, Some(&7.into()))
        );
        store
            .compact(&stored, &[HistoryEntry::new(2, "{\"all\":true}")])
            .expect("compacted");
        assert_eq!(store.history("a1").expect("history").len(), 1);
    } else {
        let mut a1 = store.get("a1").expect("get").expect("a1");
        a1.updated_at = 40;
        store
            .append(&a1, &[HistoryEntry::new(1, "{}")])
            .expect("appended");
        assert!(store.history("a1").expect("history").is_empty());
    }

    // Delete, then the retention sweep (a1 was updated at 40, the others at creation).
    assert!(store.delete("a4").expect("deleted"));
    assert!(!store.delete("a4").expect("gone already"));
    assert!(store.history("a4").expect("history").is_empty());
    let mut swept = store.delete_idle(20).expect("swept");
    swept.sort();
    assert_eq!(swept, ["b1"]);
    assert_eq!(store.count(&alice).expect("count"), 3);
    assert_eq!(store.count(&Principal::new("bob")).expect("count"), 0);
}
