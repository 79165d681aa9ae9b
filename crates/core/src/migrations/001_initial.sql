-- quire workspace schema, version 1. Times are milliseconds since the Unix epoch (UTC).

CREATE TABLE notebooks (
    id           TEXT PRIMARY KEY NOT NULL,
    parent_id    TEXT REFERENCES notebooks(id),
    title        TEXT NOT NULL,
    icon         TEXT,
    is_protected INTEGER NOT NULL DEFAULT 0,
    created      INTEGER NOT NULL,
    updated      INTEGER NOT NULL,
    CHECK ((id = '_root') = (parent_id IS NULL))
) STRICT;
CREATE INDEX notebooks_parent ON notebooks(parent_id);

INSERT INTO notebooks (id, parent_id, title, icon, is_protected, created, updated)
VALUES ('_root', NULL, 'Notebooks', NULL, 0, 0, 0);

CREATE TABLE notes (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    notebook_id    TEXT NOT NULL REFERENCES notebooks(id),
    title          TEXT NOT NULL,
    body           TEXT NOT NULL,
    is_todo        INTEGER NOT NULL DEFAULT 0,
    todo_completed INTEGER,
    is_protected   INTEGER NOT NULL DEFAULT 0,
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL,
    deleted        INTEGER
) STRICT;
CREATE INDEX notes_notebook ON notes(notebook_id, title);
CREATE INDEX notes_updated ON notes(updated);
CREATE INDEX notes_created ON notes(created);

CREATE TABLE tags (
    id      TEXT PRIMARY KEY NOT NULL,
    name    TEXT NOT NULL UNIQUE COLLATE NOCASE,
    created INTEGER NOT NULL
) STRICT;

CREATE TABLE note_tags (
    note_id TEXT NOT NULL REFERENCES notes(id),
    tag_id  TEXT NOT NULL REFERENCES tags(id),
    created INTEGER NOT NULL,
    PRIMARY KEY (note_id, tag_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX note_tags_tag ON note_tags(tag_id);

CREATE TABLE attributes (
    id             TEXT PRIMARY KEY NOT NULL,
    note_id        TEXT NOT NULL REFERENCES notes(id),
    kind           TEXT NOT NULL CHECK (kind IN ('label', 'relation')),
    name           TEXT NOT NULL,
    value          TEXT NOT NULL,
    target_note_id TEXT REFERENCES notes(id),
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL,
    UNIQUE (note_id, kind, name),
    CHECK ((kind = 'relation') = (target_note_id IS NOT NULL))
) STRICT;
CREATE INDEX attributes_target ON attributes(target_note_id);

CREATE TABLE attachments (
    id      TEXT PRIMARY KEY NOT NULL,
    note_id TEXT NOT NULL REFERENCES notes(id),
    title   TEXT NOT NULL,
    mime    TEXT NOT NULL,
    size    INTEGER NOT NULL,
    data    BLOB NOT NULL,
    text    TEXT,
    created INTEGER NOT NULL
) STRICT;
CREATE INDEX attachments_note ON attachments(note_id);

CREATE TABLE change_sets (
    id         TEXT PRIMARY KEY NOT NULL,
    actor      TEXT NOT NULL,
    actor_key  TEXT,
    created    INTEGER NOT NULL,
    reverted   INTEGER
) STRICT;
CREATE INDEX change_sets_actor_key ON change_sets(actor_key);

CREATE TABLE changes (
    seq           INTEGER PRIMARY KEY,
    change_set_id TEXT NOT NULL REFERENCES change_sets(id),
    entity        TEXT NOT NULL,
    entity_id     TEXT NOT NULL,
    operation     TEXT NOT NULL CHECK (operation IN ('create', 'update', 'delete')),
    actor         TEXT NOT NULL,
    before        TEXT, -- the whole row before the change, as JSON; NULL for a create
    after_hash    TEXT, -- a hash of the row after it (see history.rs); NULL for a delete
    at            INTEGER NOT NULL
) STRICT;
CREATE INDEX changes_set ON changes(change_set_id);
CREATE INDEX changes_entity ON changes(entity, entity_id);
CREATE INDEX changes_at ON changes(at);

CREATE TABLE revisions (
    seq           INTEGER PRIMARY KEY,
    note_id       TEXT NOT NULL REFERENCES notes(id),
    title         TEXT NOT NULL,
    body          TEXT NOT NULL,
    actor         TEXT NOT NULL,
    change_set_id TEXT REFERENCES change_sets(id),
    created       INTEGER NOT NULL
) STRICT;
CREATE INDEX revisions_note ON revisions(note_id, seq);

CREATE TABLE chats (
    id       TEXT PRIMARY KEY NOT NULL,
    title    TEXT NOT NULL,
    note_id  TEXT,
    messages TEXT NOT NULL,
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
) STRICT;

-- Full-text index over what a note says. Rowids are notes.seq. The body, tags and attachment text of a protected
-- note are never indexed, so no search can reveal them; its title is.
CREATE VIRTUAL TABLE notes_fts USING fts5(
    title, body, tags, attachments,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
);
