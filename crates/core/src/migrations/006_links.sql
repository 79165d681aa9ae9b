-- Links in note bodies (derived from the bodies on every write, like notes_fts; see links.rs).
CREATE TABLE note_links (
    source_id            TEXT NOT NULL,
    ordinal              INTEGER NOT NULL,
    kind                 TEXT NOT NULL CHECK (kind IN ('wikilink', 'embed', 'note', 'attachment')),
    target               TEXT NOT NULL, -- as written: a title or Notebook/Title path, or an id
    heading              TEXT,
    target_key           TEXT,          -- the lower-case last segment of a wikilink's target
    byte                 INTEGER NOT NULL,
    len                  INTEGER NOT NULL,
    target_note_id       TEXT,
    target_attachment_id TEXT,
    PRIMARY KEY (source_id, ordinal)
) STRICT, WITHOUT ROWID;
CREATE INDEX note_links_target ON note_links(target_note_id);
CREATE INDEX note_links_key ON note_links(target_key);

-- Each note's lower-case title and aliases, which wikilinks resolve by.
CREATE TABLE note_keys (
    note_id TEXT NOT NULL,
    key     TEXT NOT NULL,
    PRIMARY KEY (note_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX note_keys_key ON note_keys(key);

-- Where imported notes came from (quire import): importing the same source again updates them.
CREATE TABLE import_sources (
    source      TEXT NOT NULL,
    item        TEXT NOT NULL,
    note_id     TEXT NOT NULL,
    source_hash TEXT NOT NULL,
    note_hash   TEXT NOT NULL,
    imported    INTEGER NOT NULL,
    PRIMARY KEY (source, item)
) STRICT, WITHOUT ROWID;
