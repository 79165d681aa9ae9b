-- The live, unprotected notes by id, with their notebook: what a semantic search checks each candidate against
-- (semantic/search.rs). Read through this index alone, the check stays within a few megabytes that the page cache
-- keeps; read from the notes table, each candidate was a row of its own in a file of gigabytes (at a million chunks,
-- 1,700 candidates took 110-260 ms from disk against 4 ms here). Protection inherited from a notebook is checked
-- beside it.
CREATE INDEX notes_visible ON notes(id, notebook_id) WHERE deleted IS NULL AND is_protected = 0;
