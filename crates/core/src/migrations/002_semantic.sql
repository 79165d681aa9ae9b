-- quire workspace schema, version 2: the semantic index. Vectors are little-endian f32 BLOBs, one per chunk,
-- tagged with the embedder that made them, so a different embedder re-indexes instead of mixing spaces.

CREATE TABLE semantic_chunks (
    id          INTEGER PRIMARY KEY,
    embedder    TEXT NOT NULL,
    note_id     TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    text        TEXT NOT NULL,
    vector      BLOB NOT NULL,
    indexed     INTEGER NOT NULL
) STRICT;
CREATE INDEX semantic_chunks_note ON semantic_chunks(embedder, note_id);

-- How far each embedder has followed the change log.
CREATE TABLE semantic_state (
    embedder        TEXT PRIMARY KEY NOT NULL,
    last_change_seq INTEGER NOT NULL
) STRICT;
