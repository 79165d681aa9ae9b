-- quire workspace schema, version 5: a notebook's live notes in each order the note list offers (by title, last
-- changed, newest), read from partial indexes of the notes not in the trash, instead of sorting the notebook for
-- every page; counting a notebook's notes reads the index alone. On a notebook of 100,000 notes
-- (`cargo xtask bench web`) a page took about 60 ms (85 ms in the middle of the list) before.

CREATE INDEX notes_live_by_title ON notes(notebook_id, title COLLATE NOCASE, id) WHERE deleted IS NULL;
CREATE INDEX notes_live_by_updated ON notes(notebook_id, updated, id) WHERE deleted IS NULL;
CREATE INDEX notes_live_by_created ON notes(notebook_id, created, id) WHERE deleted IS NULL;
