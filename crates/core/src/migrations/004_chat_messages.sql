-- quire workspace schema, version 4: a chat's messages are rows of their own, appended one by one, and chats leave
-- the change log. Before, every turn rewrote the whole message array and the change log kept the old array in
-- full, so a chat's history grew with the square of its length; and chats showed as workspace changes.

CREATE TABLE chat_messages (
    chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    role    TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (chat_id, seq)
) STRICT, WITHOUT ROWID;

INSERT INTO chat_messages (chat_id, seq, role, content)
SELECT chats.id, m.key, coalesce(m.value ->> '$.role', 'user'), coalesce(m.value -> '$.content', 'null')
FROM chats, json_each(chats.messages) AS m;

ALTER TABLE chats DROP COLUMN messages;

DELETE FROM changes WHERE entity = 'chat';
DELETE FROM change_sets
WHERE NOT EXISTS (SELECT 1 FROM changes WHERE changes.change_set_id = change_sets.id)
  AND NOT EXISTS (SELECT 1 FROM revisions WHERE revisions.change_set_id = change_sets.id);
