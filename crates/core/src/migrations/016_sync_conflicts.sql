-- quire workspace schema, version 16: places where another device changed the same lines of a note as this one,
-- at the same time (issue 46). Sync keeps both versions in the note, whole; a row here says which they are until the
-- person keeps one (or both), or the note no longer holds them. Rows hold note text in plain: sealing a note deletes
-- its rows, and they go with the note.
--
-- device: the other device's sync id; base: the lines both started from; ours: what this device (or an earlier
-- arrival here) made of them; theirs: what the other device made of them; found: when sync found it (ms). Once the
-- person chose one version, kept holds it and resolved when: a change from another device that removes it (the
-- other device chose the other version at the same time) puts both back instead of losing both.
CREATE TABLE sync_conflicts (
    id      INTEGER PRIMARY KEY,
    note_id TEXT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    device  TEXT NOT NULL,
    base    TEXT NOT NULL,
    ours    TEXT NOT NULL,
    theirs  TEXT NOT NULL,
    found   INTEGER NOT NULL,
    kept    TEXT,
    resolved INTEGER
) STRICT;

CREATE INDEX sync_conflicts_by_note ON sync_conflicts (note_id);

-- A note's merge document also keeps, beside its bytes, the version it was last stored at and a hash of the body it
-- held then (base_version, base_hash: sync writes them). When the note is sealed and its document starts again,
-- sealed_from keeps that version if the body sealed is the one it held (the hash matches), and the hash goes: the
-- other devices then know which of their plain edits the sealed text already has, and keep the ones it lacks.
ALTER TABLE sync_docs ADD COLUMN base_version BLOB;
ALTER TABLE sync_docs ADD COLUMN base_hash BLOB;
ALTER TABLE sync_docs ADD COLUMN sealed_from BLOB;
