-- quire workspace schema, version 25 (issue 50): the text of attachments is read out of them in the background
-- (quire-capture), and `extraction` says what became of each one:
--   NULL      not tried yet (every attachment of an older workspace too);
--   'read'    its text is set, the pages joined by form feeds (see crates/core/src/pages.rs);
--   'none'    a kind of file quire reads no text out of, or one without words;
--   'ocr'     an image or scan waiting for Tesseract: tried again once it is installed;
--   'failed: ...'  why it could not be read.
-- Local to this device: the text itself travels with the attachment, and a device that receives it has nothing to do.
ALTER TABLE attachments ADD COLUMN extraction TEXT;
CREATE INDEX attachments_unread ON attachments(created) WHERE text IS NULL AND sealed IS NULL;

-- An attachment's sync document is its file and its text: a change of `extraction` alone sends nothing.
DROP TRIGGER sync_attachment_updated;
CREATE TRIGGER sync_attachment_updated AFTER UPDATE OF note_id, title, mime, size, data, text, sealed ON attachments
WHEN EXISTS (SELECT 1 FROM sync_config WHERE name = 'device')
BEGIN INSERT OR IGNORE INTO sync_dirty (id) VALUES ('a:' || NEW.id); END;
