-- quire workspace schema, version 13: sync across devices (see crates/sync). Nothing here is read or written while
-- sync is not set up: `sync_config` is empty and the triggers below do nothing.
--
-- sync_config: this device's id, loro peer id, name, the target, the sync key (derived from the workspace key; it
--   opens no sealed note, see ARCHITECTURE "Sync"), the next batch number, the last sync and its outcome.
-- sync_docs: one loro document per note (id = the note's id) and one for the notebook tree (id = ''): `doc` its
--   saved bytes, `exported` the version already written into a batch, `generation` bumped when a note is sealed
--   (the sealed note's document starts again, so no plain text of it stays in its history).
-- sync_dirty: the documents whose rows changed since they were last folded into their document. The triggers
--   mark them in the same transaction as the write, whichever actor or path wrote it.
-- sync_devices: every other device seen on the target: the last of its batches applied here, in order, and the last
--   of this device's batches it had applied, as its own files say (compaction removes no batch it has not).
-- sync_outbox: batches made here and not yet known to be on the target (sealed bytes, as they will be stored).
CREATE TABLE sync_config (
    name  TEXT PRIMARY KEY NOT NULL,
    value BLOB NOT NULL
) STRICT;

CREATE TABLE sync_docs (
    id         TEXT PRIMARY KEY NOT NULL,
    generation INTEGER NOT NULL,
    doc        BLOB NOT NULL,
    exported   BLOB NOT NULL
) STRICT;

CREATE TABLE sync_dirty (
    id TEXT PRIMARY KEY NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE sync_devices (
    device    TEXT PRIMARY KEY NOT NULL,
    name      TEXT NOT NULL,
    applied   INTEGER NOT NULL,
    acked     INTEGER NOT NULL DEFAULT 0,
    seen      INTEGER NOT NULL,
    forgotten INTEGER
) STRICT;

CREATE TABLE sync_outbox (
    seq   INTEGER PRIMARY KEY,
    bytes BLOB NOT NULL
) STRICT;

CREATE TRIGGER sync_note_inserted AFTER INSERT ON notes
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (NEW.id); END;

CREATE TRIGGER sync_note_updated AFTER UPDATE ON notes
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (NEW.id); END;

CREATE TRIGGER sync_note_deleted AFTER DELETE ON notes
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (OLD.id); END;

CREATE TRIGGER sync_note_tag_inserted AFTER INSERT ON note_tags
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (NEW.note_id); END;

CREATE TRIGGER sync_note_tag_deleted AFTER DELETE ON note_tags
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (OLD.note_id); END;

-- A renamed tag changes the tags of every note that carries it.
CREATE TRIGGER sync_tag_renamed AFTER UPDATE OF name ON tags
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) SELECT note_id FROM note_tags WHERE tag_id = NEW.id; END;

CREATE TRIGGER sync_attribute_inserted AFTER INSERT ON attributes
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (NEW.note_id); END;

CREATE TRIGGER sync_attribute_updated AFTER UPDATE ON attributes
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN
    INSERT OR IGNORE INTO sync_dirty (id) VALUES (OLD.note_id);
    INSERT OR IGNORE INTO sync_dirty (id) VALUES (NEW.note_id);
END;

CREATE TRIGGER sync_attribute_deleted AFTER DELETE ON attributes
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (OLD.note_id); END;

CREATE TRIGGER sync_notebook_inserted AFTER INSERT ON notebooks
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (''); END;

CREATE TRIGGER sync_notebook_updated AFTER UPDATE ON notebooks
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (''); END;

CREATE TRIGGER sync_notebook_deleted AFTER DELETE ON notebooks
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES (''); END;

-- An attachment travels as a document of its own, id 'a:' || its id.
CREATE TRIGGER sync_attachment_inserted AFTER INSERT ON attachments
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES ('a:' || NEW.id); END;

CREATE TRIGGER sync_attachment_updated AFTER UPDATE ON attachments
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES ('a:' || NEW.id); END;

CREATE TRIGGER sync_attachment_deleted AFTER DELETE ON attachments
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES ('a:' || OLD.id); END;
