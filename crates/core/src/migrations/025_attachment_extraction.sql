-- quire workspace schema, version 25 (issue 50): the text of attachments is read out of them in the background
-- (quire-capture), and `extraction` says what became of each one:
--   NULL      not tried yet (every attachment of an older workspace too);
--   'reading:MILLIS'  being read since then (a claim: another process does not read it too, and one found old was
--             left by a process that died reading it: a file that kills its reader is not tried again);
--   'read'    its text is set, the pages joined by form feeds (see crates/core/src/pages.rs);
--   'none'    a kind of file quire reads no text out of, or one without words;
--   'ocr'     an image or scan waiting for Tesseract: tried again once it is installed;
--   'failed: ...'  why it could not be read.
-- Local to this device: the text itself travels with the attachment, and a device that receives it has nothing to do.
ALTER TABLE attachments ADD COLUMN extraction TEXT;
-- The job's and the status's queries read these indexes only: a row's other columns come after its file's bytes, and
-- reading them walks the file.
CREATE INDEX attachments_unread ON attachments(created) WHERE extraction IS NULL AND text IS NULL AND sealed IS NULL;
CREATE INDEX attachments_extraction ON attachments(extraction, created) WHERE extraction IS NOT NULL;

-- An attachment's sync document is its file and its text: a change of `extraction` alone sends nothing.
DROP TRIGGER sync_attachment_updated;
CREATE TRIGGER sync_attachment_updated AFTER UPDATE OF note_id, title, mime, size, data, text, sealed ON attachments
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES ('a:' || NEW.id); END;
