-- quire workspace schema, version 15: news of review sets (issue 44). Each staged write, decision and removal of a
-- review set appends a row here, so that one read (`Reader::news_after`) tells every watcher what happened since its
-- cursor, as the change log does for applied writes. Local to this device, like the review tables.
CREATE TABLE review_news (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    set_id  INTEGER NOT NULL,
    kind    TEXT NOT NULL CHECK (kind IN ('staged', 'decided', 'dropped'))
) STRICT;
