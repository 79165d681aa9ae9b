-- quire workspace schema, version 11: the tokens each turn of a chat used, as the model's provider counted them, and
-- what they cost when the model had prices, so that a chat's totals survive restarts and show when it is reopened.
-- A row per turn that reached the model (a stopped turn's tokens were spent too); never part of the change log.
-- `cost` is in the currency units the prices were given in, NULL when the model had none.
CREATE TABLE chat_usage (
    chat_id             TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    turn                INTEGER NOT NULL,
    model               TEXT NOT NULL,
    input_tokens        INTEGER NOT NULL,
    cached_input_tokens INTEGER NOT NULL,
    cache_write_tokens  INTEGER NOT NULL,
    output_tokens       INTEGER NOT NULL,
    cost                REAL
) STRICT;

CREATE INDEX chat_usage_by_chat ON chat_usage (chat_id, turn);
