-- The read ledger (issue 49): what each actor other than the user read of which note or attachment, which part,
-- when, and how often within a moment (reads of the same thing by the same actor are counted on one row while the
-- ledger's batch is open, a fifth of a second). Local to this file: never synced. Rows older than the retention
-- (90 days unless configured) are removed.
CREATE TABLE read_ledger (
    seq INTEGER PRIMARY KEY,
    first_at INTEGER NOT NULL,
    last_at INTEGER NOT NULL,
    reads INTEGER NOT NULL DEFAULT 1,
    actor TEXT NOT NULL,
    client TEXT NOT NULL,
    chat TEXT,
    note_id TEXT NOT NULL,
    attachment_id TEXT,
    title TEXT NOT NULL,
    part TEXT NOT NULL
) STRICT;
CREATE INDEX read_ledger_note ON read_ledger(note_id);
CREATE INDEX read_ledger_client ON read_ledger(client);
