-- quire workspace schema, version 22: the run log of automations (issue 49). One row per run: which automation, what
-- it ran for (slot: a schedule's time, a trigger's news, or a run by hand; a slot runs once), why in words, when it
-- started and ended, the process that runs it (pid and its start, so that a run whose process is gone stops counting
-- as running), how it ended (running, done, failed, abandoned), what it said or why it failed, its steps (JSON), the
-- review set its staged writes joined or the change set of its applied ones, its tokens and estimated cost. Local to
-- this file: never synced. At most one running row per automation: a run never overlaps itself, whichever process
-- starts it.
CREATE TABLE automation_runs (
    id            INTEGER PRIMARY KEY,
    automation    TEXT NOT NULL,
    slot          TEXT NOT NULL,
    reason        TEXT NOT NULL,
    runner        TEXT NOT NULL,
    pid           INTEGER NOT NULL,
    pid_start     INTEGER,
    started_at    INTEGER NOT NULL,
    ended_at      INTEGER,
    status        TEXT NOT NULL,
    summary       TEXT,
    steps         TEXT,
    review_set    INTEGER,
    change_set    TEXT,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    cost          REAL
) STRICT;
CREATE INDEX automation_runs_by_name ON automation_runs(automation, id);
CREATE UNIQUE INDEX automation_runs_running ON automation_runs(automation) WHERE status = 'running';
