-- quire workspace schema, version 23 (issue 46): a protected note's sync conflicts are kept, sealed, instead of
-- deleted when it is sealed; and the version of another device's text that could not be merged into a note sealed
-- meanwhile is kept beside it ("aside"), sealed, until the person opens the note with the passphrase and it is merged.
--
-- sealed: when set, base, ours and theirs are '' and this holds them (one piece sealed to the note, kind "conflict",
-- version the row's id); a chosen conflict of a sealed note is not kept (its row goes with the choice).
-- aside: 1 (or 2, below) when ours is this device's whole text of the note, made from base, which the note (sealed on
-- another device) lacks; theirs is '' (the note's own text is the other version).
-- aside 2: the note was sealed here too, and this device's edit of it lost to another's made at the same time;
-- sealed then holds this device's sealed body and the one it was made from, as they were (versions and pieces).
ALTER TABLE sync_conflicts ADD COLUMN sealed BLOB;
ALTER TABLE sync_conflicts ADD COLUMN aside INTEGER NOT NULL DEFAULT 0;

-- The version of a note's document when it was sealed (base_version then), whether or not its text was the one
-- sealed: another device's edits beyond it are edits the sealing device never saw.
ALTER TABLE sync_docs ADD COLUMN sealed_seen BLOB;
