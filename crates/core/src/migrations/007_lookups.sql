-- Wikilinks and embeds find an attachment by its name, ignoring case: without this index every unresolved link
-- read every attachment (an import of 10,000 notes spent most of its time there).
CREATE INDEX attachments_title ON attachments(title COLLATE NOCASE);
-- A note or attachment created with an id chosen beforehand (an import) resolves the links already written to it.
CREATE INDEX note_links_target_text ON note_links(target);
-- Whether a note sits in a protected notebook is asked on every write: the protected ones are found by index.
CREATE INDEX notebooks_protected ON notebooks(id) WHERE is_protected = 1;
