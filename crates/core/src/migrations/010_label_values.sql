-- A label's value is text (what every label held before) or JSON (a structured value: true, 42, 1.5, ["a","b"],
-- {"k":"v"}, null), so that what an import read as a list, a number or a boolean stays one. A relation's value is
-- a note id: always text. A JSON value is valid JSON, checked here.
ALTER TABLE attributes ADD COLUMN value_type TEXT NOT NULL DEFAULT 'text'
    CHECK (value_type = 'text' OR (value_type = 'json' AND kind = 'label' AND json_valid(value)));

-- Links in a note's label values (`related: [[Note]]`) are links of the note: the label's name, NULL for a link in
-- the body. A label link's byte and len are within the text it was found in, not the body.
ALTER TABLE note_links ADD COLUMN label TEXT;
