-- quire workspace schema, version 18: what queries read from note bodies (issue 47), derived like note_links on every
-- write of a note (never in the change log; rebuilt from the bodies): its tasks, its inline fields and its hashtags.
-- A sealed note's body is not plain text here, so none of it is derived; a protected note's rows are kept for the
-- user, and the query engine (crates/core/src/query) shows them to nobody else.
--
-- note_tasks: every `- [ ]` / `- [x]` list line outside code. line: 0-based line number in the body; status: the
-- character between the brackets; done: status is x or X; text: the line after the box, as written; due, scheduled,
-- start, done_on, created_on, cancelled_on: the Tasks plugin's dates (or Dataview's `[due:: ...]`), as YYYY-MM-DD;
-- priority: 1 lowest, 2 low, 3 none, 4 medium, 5 high, 6 highest; recurrence: the text after the repeat sign;
-- heading: the heading above the task.
CREATE TABLE note_tasks (
    note_id      TEXT NOT NULL,
    line         INTEGER NOT NULL,
    status       TEXT NOT NULL,
    done         INTEGER NOT NULL,
    text         TEXT NOT NULL,
    due          TEXT,
    scheduled    TEXT,
    start        TEXT,
    done_on      TEXT,
    created_on   TEXT,
    cancelled_on TEXT,
    priority     INTEGER NOT NULL,
    recurrence   TEXT,
    heading      TEXT,
    PRIMARY KEY (note_id, line)
) STRICT, WITHOUT ROWID;
CREATE INDEX note_tasks_due ON note_tasks(done, due);
CREATE INDEX note_tasks_scheduled ON note_tasks(done, scheduled) WHERE scheduled IS NOT NULL;

-- note_fields: Dataview's inline fields, `key:: value` on a line of its own (or a list item) and `[key:: value]` /
-- `(key:: value)` inside a line. key: the name as queries match it (lower case, spaces as dashes, formatting left
-- out); name: as written; line: where it is; ordinal: its place among the note's fields.
CREATE TABLE note_fields (
    note_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    key     TEXT NOT NULL,
    name    TEXT NOT NULL,
    value   TEXT NOT NULL,
    line    INTEGER NOT NULL,
    PRIMARY KEY (note_id, ordinal)
) STRICT, WITHOUT ROWID;
CREATE INDEX note_fields_key ON note_fields(key, value);

-- note_hashtags: the #tags written in a note's body (outside code), which queries count as its tags beside the
-- note's own tags, as Obsidian does.
CREATE TABLE note_hashtags (
    note_id TEXT NOT NULL,
    tag     TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (note_id, tag)
) STRICT, WITHOUT ROWID;
CREATE INDEX note_hashtags_tag ON note_hashtags(tag);

-- Labels by name, for a query's `WHERE rating = 5` over every note.
CREATE INDEX attributes_label_name ON attributes(name COLLATE NOCASE, note_id) WHERE kind = 'label';
