-- quire workspace schema, version 12: sealed notes. `lock` holds the workspace key, wrapped by the passphrase (Argon2id
-- with the parameters in `kdf`) and by the recovery key, and the public key every sealing uses; no row means no
-- passphrase was set and protection keeps AI actors away without encrypting. A sealed note's body, revisions and
-- attachments hold ciphertext in `sealed` and nothing in the plain columns (see crates/core/src/seal).
CREATE TABLE lock (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    public_key    BLOB NOT NULL,
    kdf           TEXT NOT NULL,
    salt          BLOB NOT NULL,
    by_passphrase BLOB NOT NULL,
    by_recovery   BLOB NOT NULL,
    created       INTEGER NOT NULL,
    updated       INTEGER NOT NULL
) STRICT;

ALTER TABLE notes ADD COLUMN sealed BLOB;
ALTER TABLE notes ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN sealed BLOB;
ALTER TABLE attachments ADD COLUMN sealed BLOB;
