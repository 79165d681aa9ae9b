-- The notes whose full-text entry changed, in the order of the writes that changed them. The tantivy index beside the
-- file (search/engine.rs) is derived from notes_fts: before a search it re-reads the entries logged since the last
-- one it took in, so a write is visible to the next search. Ids only grow (AUTOINCREMENT); writers forget the oldest
-- rows and move `horizon` past them, and an index older than the horizon is built again from notes_fts.
CREATE TABLE search_log (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    note_seq INTEGER NOT NULL
) STRICT;

-- One row. `key` names this workspace file, so an index left beside a file that was replaced is not trusted.
CREATE TABLE search_state (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    key     TEXT NOT NULL,
    horizon INTEGER NOT NULL
) STRICT;
INSERT INTO search_state (id, key, horizon) VALUES (1, lower(hex(randomblob(16))), 0);
