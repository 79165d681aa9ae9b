-- quire workspace schema, version 16: places where another device changed the same lines of a note as this one,
-- at the same time (issue 46). Sync keeps both versions in the note, whole; a row here says which they are until the
-- person keeps one (or both), or the note no longer holds them. Rows hold note text in plain: sealing a note deletes
-- its rows, and they go with the note.
--
-- device: the other device's sync id; base: the lines both started from; ours: what this device (or an earlier
-- arrival here) made of them; theirs: what the other device made of them; found: when sync found it (ms).
CREATE TABLE sync_conflicts (
    id      INTEGER PRIMARY KEY,
    note_id TEXT NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    device  TEXT NOT NULL,
    base    TEXT NOT NULL,
    ours    TEXT NOT NULL,
    theirs  TEXT NOT NULL,
    found   INTEGER NOT NULL
) STRICT;

CREATE INDEX sync_conflicts_by_note ON sync_conflicts (note_id);
