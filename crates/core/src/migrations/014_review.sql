-- quire workspace schema, version 14: changes staged for review. An MCP client whose writes are staged has them
-- recorded here instead of applied: per entity, the row as it was when the client first changed it (`base`) and as
-- the client left it (`proposed`), both as change-log snapshots (NULL: it did not exist / it is removed). The user
-- accepts or rejects each change of a row (`decisions`: change index -> "accepted" or "rejected"); a row is
-- `settled` once every change is decided. Local to this device: never synced, never in the change log.
CREATE TABLE review_sets (
    id          INTEGER PRIMARY KEY,
    client      TEXT NOT NULL,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    -- The user acted on it: the client's later writes start another set.
    closed      INTEGER NOT NULL DEFAULT 0,
    -- When the user last decided on it: a number above every other set's, so a watcher sees each decision.
    decided     INTEGER,
    -- The change sets accepting it wrote, a JSON array of ids.
    change_sets TEXT NOT NULL DEFAULT '[]'
) STRICT;
CREATE INDEX review_sets_client ON review_sets(client, id);

CREATE TABLE review_rows (
    id        INTEGER PRIMARY KEY,
    set_id    INTEGER NOT NULL REFERENCES review_sets(id),
    entity    TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    base      TEXT,
    proposed  TEXT,
    decisions TEXT NOT NULL DEFAULT '{}',
    settled   INTEGER NOT NULL DEFAULT 0,
    UNIQUE (set_id, entity, entity_id)
) STRICT;
CREATE INDEX review_rows_pending ON review_rows(settled, set_id);
