-- Indexes for queries over tasks at 100k notes (issue 47's 30 ms target for `TASK WHERE !completed AND due <= ...`).
--
-- Dataview counts an undated task as due before any day, so "due by Friday" is `ifnull(due, '') <= ?`: one range
-- of an index instead of two (and the planner took neither without statistics).
DROP INDEX note_tasks_due;
CREATE INDEX note_tasks_due ON note_tasks(done, ifnull(due, ''));

-- The open tasks, whole, in that order: what most task queries ask for (`!completed`) is read from this index alone
-- (named with INDEXED BY), never from the table. Open tasks are the few: done ones pile up, open ones get done.
CREATE INDEX note_tasks_open ON note_tasks(
    ifnull(due, ''), note_id, line, status, text, due, scheduled, start, done_on, created_on, cancelled_on,
    priority, recurrence, heading
) WHERE done = 0;

-- What a query row needs of its note but the body: a task query finds each task's note here (named with INDEXED BY)
-- without reading the note's row, whose body makes it large.
CREATE INDEX notes_meta ON notes(id, title, notebook_id, is_protected, created, updated, deleted);
