-- quire workspace schema, version 3: what lets each process keep an in-memory copy of the vectors and bring it up to
-- date by reading only what changed. Chunk ids only ever grow (AUTOINCREMENT), so new chunks are those above the
-- copy's highest id; every write to the index bumps a generation and logs the notes whose chunks it dropped. The
-- index is derived data, so the old table is simply dropped and rebuilt from the notes.

DROP TABLE semantic_chunks;
DELETE FROM semantic_state;

CREATE TABLE semantic_chunks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    embedder    TEXT NOT NULL,
    note_id     TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    text        TEXT NOT NULL,
    vector      BLOB NOT NULL,
    indexed     INTEGER NOT NULL
) STRICT;
CREATE INDEX semantic_chunks_note ON semantic_chunks(embedder, note_id);

-- generation: bumped in the same transaction as every change to the embedder's chunks.
-- horizon: a copy older than this generation cannot catch up from semantic_dropped and reloads everything.
ALTER TABLE semantic_state ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE semantic_state ADD COLUMN horizon INTEGER NOT NULL DEFAULT 0;

-- The notes whose chunks a generation deleted (kept for the last 1,000 generations).
CREATE TABLE semantic_dropped (
    embedder   TEXT NOT NULL,
    generation INTEGER NOT NULL,
    note_id    TEXT NOT NULL
) STRICT;
CREATE INDEX semantic_dropped_generation ON semantic_dropped(embedder, generation);
