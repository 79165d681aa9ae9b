-- quire workspace schema, version 17: calls of a plugin in flight (issue 53), so that what the plugin writes back
-- through its own MCP grant while a call runs (quire's MCP server, perhaps in another process) joins that call: one
-- change set in the plugin's name, the calling agent turn's change set, or staged for review with the caller's.
-- Not workspace content: a row lives while its call runs; a row of a process that is gone (or older than a day) is
-- ignored, and removed when the next call starts.
--
-- plugin: the plugin's name; pid, pid_start: the process that called it and when it started (so that a number the
-- system gave to another process later does not count); turn_chat, turn: the agent turn that called it, if one did;
-- staged: whether the caller's writes are staged; change_set: the change set of the call's writes so far.
CREATE TABLE plugin_calls (
    id         INTEGER PRIMARY KEY,
    plugin     TEXT NOT NULL,
    pid        INTEGER NOT NULL,
    pid_start  INTEGER,
    started    INTEGER NOT NULL,
    turn_chat  TEXT,
    turn       INTEGER,
    staged     INTEGER NOT NULL,
    change_set TEXT
) STRICT;

CREATE INDEX plugin_calls_by_plugin ON plugin_calls (plugin, started);
