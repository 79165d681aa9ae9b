-- An undo is a change set of its own; `undoes` names the change set it undid (the one asked for when later ones went
-- with it), so that the history can say "undo of ..." beside its changes (ux-2 #13).
ALTER TABLE change_sets ADD COLUMN undoes TEXT;
