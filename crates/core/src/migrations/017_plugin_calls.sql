-- quire workspace schema, version 17: calls of a plugin in flight (issue 53), so that what the plugin writes back
-- through its own MCP grant while a call runs (quire's MCP server, perhaps in another process) joins that call: one
-- change set in the plugin's name, the calling agent turn's change set, or staged for review with the caller's.
-- Not workspace content: a row lives while its call runs, and rows of a process that is gone are ignored, then
-- removed.
--
-- plugin: the plugin's name; pid: the process that called it; turn_chat, turn: the agent turn that called it, if one
-- did; staged: whether the caller's writes are staged; change_set: the change set of the call's writes so far.
CREATE TABLE plugin_calls (
    id         INTEGER PRIMARY KEY,
    plugin     TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    started    INTEGER NOT NULL,
    turn_chat  TEXT,
    turn       INTEGER,
    staged     INTEGER NOT NULL,
    change_set TEXT
) STRICT;

CREATE INDEX plugin_calls_by_plugin ON plugin_calls (plugin, started);
