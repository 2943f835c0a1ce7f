//! [`SqliteStore`]: sessions in one SQLite file (WAL), surviving restarts and crashes.
//!
//! Every method is one transaction. In WAL mode with `synchronous = NORMAL` a committed
//! transaction survives the process being killed at any moment (the WAL is in the operating
//! system's hands once `COMMIT` returns); a power cut may lose the last ones, never corrupt the
//! file. The schema is versioned (`PRAGMA user_version`) and migrated forward on open; a file
//! written by a newer schema is refused untouched ([`StoreError::NewerSchema`]).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use acp_rpc::Principal;
use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};

use super::{
    decode_cursor, encode_cursor, normalise_dir, HistoryEntry, ListPage, ListQuery, SessionRecord,
    SessionStore, StoreError,
};

/// The schema version this build writes; migrations bring older files up to it.
const SCHEMA_VERSION: i64 = 1;

/// Each migration takes the schema from its index to the next version.
const MIGRATIONS: [&str; 1] = ["
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        protocol_version INTEGER NOT NULL,
        cwd TEXT NOT NULL,
        cwd_key TEXT NOT NULL,
        additional_directories TEXT NOT NULL,
        title TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        config TEXT NOT NULL,
        archived INTEGER NOT NULL,
        extra TEXT NOT NULL
    );
    CREATE INDEX sessions_by_owner ON sessions (owner, protocol_version, created_at, id);
    CREATE INDEX sessions_by_update ON sessions (updated_at);
    CREATE TABLE history (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        turn INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
"];

/// How long a writer waits for another connection's lock on the file before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Sessions in a SQLite file.
pub struct SqliteStore {
    connection: Mutex<Connection>,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn storage(err: impl std::fmt::Display) -> StoreError {
    StoreError::Storage(err.to_string())
}

impl SqliteStore {
    /// Opens (or creates) the store at `path`, migrating an older schema forward.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let connection =
            Connection::open(&path).map_err(|err| storage(format!("{}: {err}", path.display())))?;
        Self::prepare(connection, path)
    }

    /// A store in memory (for tests): the same SQL, nothing on disk.
    pub fn in_memory() -> Result<Self, StoreError> {
        let connection = Connection::open_in_memory().map_err(storage)?;
        Self::prepare(connection, PathBuf::from(":memory:"))
    }

    fn prepare(mut connection: Connection, path: PathBuf) -> Result<Self, StoreError> {
        connection.busy_timeout(BUSY_TIMEOUT).map_err(storage)?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(storage)?;
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(storage)?;
        connection
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(storage)?;
        let found: i64 = connection
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(storage)?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: path.display().to_string(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let tx = connection.transaction().map_err(storage)?;
        let start = usize::try_from(found).unwrap_or(0);
        for (version, migration) in MIGRATIONS.iter().enumerate().skip(start) {
            tx.execute_batch(migration).map_err(storage)?;
            tx.pragma_update(None, "user_version", version as i64 + 1)
                .map_err(storage)?;
        }
        tx.commit().map_err(storage)?;
        Ok(Self {
            connection: Mutex::new(connection),
            path,
        })
    }

    /// Where the store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` in one write transaction.
    fn write<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut connection = self.lock();
        let tx = connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(storage)?;
        let value = f(&tx)?;
        tx.commit().map_err(storage)?;
        Ok(value)
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(storage)
}

fn record_from(row: &Row<'_>) -> rusqlite::Result<(SessionRecord, [String; 3])> {
    let version: i64 = row.get("protocol_version")?;
    let created_at: i64 = row.get("created_at")?;
    let updated_at: i64 = row.get("updated_at")?;
    let record = SessionRecord {
        id: row.get("id")?,
        owner: Principal::new(row.get::<_, String>("owner")?),
        protocol_version: u16::try_from(version).unwrap_or(0),
        cwd: row.get("cwd")?,
        additional_directories: Vec::new(),
        title: row.get("title")?,
        created_at: u64::try_from(created_at).unwrap_or(0),
        updated_at: u64::try_from(updated_at).unwrap_or(0),
        config: Vec::new(),
        archived: row.get::<_, i64>("archived")? != 0,
        extra: serde_json::Map::new(),
    };
    let encoded = [
        row.get("additional_directories")?,
        row.get("config")?,
        row.get("extra")?,
    ];
    Ok((record, encoded))
}

/// Completes a record with its JSON columns (directories, config, bookkeeping).
fn decoded(
    (mut record, [directories, config, extra]): (SessionRecord, [String; 3]),
) -> Result<SessionRecord, StoreError> {
    let bad = |what: &str, err: serde_json::Error| {
        StoreError::Storage(format!(
            "session `{}`: its {what} do not decode: {err}",
            record.id
        ))
    };
    record.additional_directories =
        serde_json::from_str(&directories).map_err(|err| bad("directories", err))?;
    record.config = serde_json::from_str(&config).map_err(|err| bad("config options", err))?;
    record.extra = serde_json::from_str(&extra).map_err(|err| bad("bookkeeping fields", err))?;
    Ok(record)
}

const COLUMNS: &str = "id, owner, protocol_version, cwd, additional_directories, title, \
                       created_at, updated_at, config, archived, extra";

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Replaces the record's mutable columns (owner, version and creation time never change).
fn update_record(tx: &Transaction<'_>, record: &SessionRecord) -> Result<bool, StoreError> {
    let changed = tx
        .execute(
            "UPDATE sessions SET cwd = ?2, cwd_key = ?3, additional_directories = ?4, title = ?5, \
             updated_at = ?6, config = ?7, archived = ?8, extra = ?9 WHERE id = ?1",
            params![
                record.id,
                record.cwd,
                normalise_dir(&record.cwd),
                json(&record.additional_directories)?,
                record.title,
                to_i64(record.updated_at),
                json(&record.config)?,
                i64::from(record.archived),
                json(&record.extra)?,
            ],
        )
        .map_err(storage)?;
    Ok(changed > 0)
}

fn append_entries(
    tx: &Transaction<'_>,
    id: &str,
    entries: &[HistoryEntry],
) -> Result<(), StoreError> {
    let next: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM history WHERE session_id = ?1",
            params![id],
            |row| row.get(0),
        )
        .map_err(storage)?;
    let mut insert = tx
        .prepare_cached("INSERT INTO history (session_id, seq, turn, body) VALUES (?1, ?2, ?3, ?4)")
        .map_err(storage)?;
    for (offset, entry) in entries.iter().enumerate() {
        let seq = next + i64::try_from(offset).unwrap_or(i64::MAX - next);
        insert
            .execute(params![id, seq, to_i64(entry.turn), entry.update])
            .map_err(storage)?;
    }
    Ok(())
}

impl SessionStore for SqliteStore {
    fn keeps_history(&self) -> bool {
        true
    }

    fn create(&self, record: &SessionRecord) -> Result<(), StoreError> {
        self.write(|tx| {
            let inserted = tx
                .execute(
                    &format!(
                        "INSERT OR IGNORE INTO sessions ({COLUMNS}, cwd_key) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
                    ),
                    params![
                        record.id,
                        record.owner.as_str(),
                        i64::from(record.protocol_version),
                        record.cwd,
                        json(&record.additional_directories)?,
                        record.title,
                        to_i64(record.created_at),
                        to_i64(record.updated_at),
                        json(&record.config)?,
                        i64::from(record.archived),
                        json(&record.extra)?,
                        normalise_dir(&record.cwd),
                    ],
                )
                .map_err(storage)?;
            if inserted == 0 {
                return Err(StoreError::Exists(record.id.clone()));
            }
            Ok(())
        })
    }

    fn update(&self, record: &SessionRecord) -> Result<(), StoreError> {
        self.write(|tx| update_record(tx, record).map(drop))
    }

    fn append(&self, record: &SessionRecord, entries: &[HistoryEntry]) -> Result<(), StoreError> {
        self.write(|tx| {
            if update_record(tx, record)? {
                append_entries(tx, &record.id, entries)?;
            }
            Ok(())
        })
    }

    fn compact(&self, record: &SessionRecord, entries: &[HistoryEntry]) -> Result<(), StoreError> {
        self.write(|tx| {
            if update_record(tx, record)? {
                tx.execute(
                    "DELETE FROM history WHERE session_id = ?1",
                    params![record.id],
                )
                .map_err(storage)?;
                append_entries(tx, &record.id, entries)?;
            }
            Ok(())
        })
    }

    fn get(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let connection = self.lock();
        let found = connection
            .query_row(
                &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
                params![id],
                record_from,
            )
            .optional()
            .map_err(storage)?;
        found.map(decoded).transpose()
    }

    fn history(&self, id: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        let connection = self.lock();
        let mut select = connection
            .prepare_cached("SELECT turn, body FROM history WHERE session_id = ?1 ORDER BY seq")
            .map_err(storage)?;
        let rows = select
            .query_map(params![id], |row| {
                let turn: i64 = row.get(0)?;
                Ok(HistoryEntry::new(
                    u64::try_from(turn).unwrap_or(0),
                    row.get::<_, String>(1)?,
                ))
            })
            .map_err(storage)?;
        rows.collect::<Result<_, _>>().map_err(storage)
    }

    fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let (after_at, after_id) = match query.cursor.as_deref() {
            Some(cursor) => {
                let (at, id) = decode_cursor(cursor)?;
                (to_i64(at), id.to_owned())
            }
            None => (-1, String::new()),
        };
        let (archived_min, archived_max) = match query.archived {
            super::ArchiveFilter::Exclude => (0, 0),
            super::ArchiveFilter::Include => (0, 1),
            super::ArchiveFilter::Only => (1, 1),
        };
        let limit = query.limit.max(1);
        let connection = self.lock();
        let mut select = connection
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM sessions \
                 WHERE owner = ?1 AND protocol_version = ?2 AND (created_at, id) > (?3, ?4) \
                 AND archived BETWEEN ?5 AND ?6 AND (?7 IS NULL OR cwd_key = ?7) \
                 ORDER BY created_at, id LIMIT ?8"
            ))
            .map_err(storage)?;
        let cwd = query.cwd.as_deref().map(normalise_dir);
        let rows = select
            .query_map(
                params![
                    query.owner.as_str(),
                    i64::from(query.protocol_version),
                    after_at,
                    after_id,
                    archived_min,
                    archived_max,
                    cwd,
                    i64::try_from(limit + 1).unwrap_or(i64::MAX),
                ],
                record_from,
            )
            .map_err(storage)?;
        let mut sessions = rows
            .map(|row| row.map_err(storage).and_then(decoded))
            .collect::<Result<Vec<_>, _>>()?;
        let next = if sessions.len() > limit {
            sessions.truncate(limit);
            sessions.last().map(encode_cursor)
        } else {
            None
        };
        Ok(ListPage { sessions, next })
    }

    fn count(&self, owner: &Principal) -> Result<usize, StoreError> {
        let connection = self.lock();
        let count: i64 = connection
            .query_row(
                "SELECT COUNT(*) FROM sessions WHERE owner = ?1",
                params![owner.as_str()],
                |row| row.get(0),
            )
            .map_err(storage)?;
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            let deleted = tx
                .execute("DELETE FROM sessions WHERE id = ?1", params![id])
                .map_err(storage)?;
            Ok(deleted > 0)
        })
    }

    fn delete_idle(&self, before: u64) -> Result<Vec<String>, StoreError> {
        self.write(|tx| {
            let ids = {
                let mut select = tx
                    .prepare("SELECT id FROM sessions WHERE updated_at < ?1")
                    .map_err(storage)?;
                let rows = select
                    .query_map(params![to_i64(before)], |row| row.get::<_, String>(0))
                    .map_err(storage)?;
                rows.collect::<Result<Vec<_>, _>>().map_err(storage)?
            };
            tx.execute(
                "DELETE FROM sessions WHERE updated_at < ?1",
                params![to_i64(before)],
            )
            .map_err(storage)?;
            Ok(ids)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sqlite_store_keeps_the_contract() {
        super::super::contract::check(&SqliteStore::in_memory().expect("opens"));
    }

    #[test]
    fn a_store_survives_reopening_and_a_newer_schema_is_refused_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sessions.db");
        {
            let store = SqliteStore::open(&path).expect("created");
            let record = SessionRecord::new("s1", Principal::new("alice"), 2, "/w");
            store.create(&record).expect("created");
            store
                .append(&record, &[HistoryEntry::new(1, "{}")])
                .expect("appended");
        }
        let store = SqliteStore::open(&path).expect("reopened");
        assert_eq!(store.history("s1").expect("history").len(), 1);
        drop(store);

        let connection = Connection::open(&path).expect("opens");
        connection
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .expect("set");
        drop(connection);
        let err = SqliteStore::open(&path).expect_err("a newer schema is refused");
        assert!(
            matches!(
                err,
                StoreError::NewerSchema {
                    found: 2,
                    supported: 1,
                    ..
                }
            ),
            "{err}"
        );
        // Untouched: this build's own session is still there for the newer build.
        let connection = Connection::open(&path).expect("opens");
        let count: i64 = connection
            .query_row("SELECT COUNT(*) FROM history", [], |row| row.get(0))
            .expect("counted");
        assert_eq!(count, 1);
    }
}
