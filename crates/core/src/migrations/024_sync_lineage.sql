-- quire workspace schema, version 24 (issue 46): which version of each earlier document of a note the device that
-- started the next one had seen (an encoding of quire-sync's, version vectors only, no text). A device that was
-- behind by two generations or more (it caught up from a snapshot that holds only the newest document) learns from
-- it which of its own edits no sealing saw, and keeps them beside the note instead of losing them. Kept here as well
-- as in the document: sealing empties the document, and the next one starts from this.
ALTER TABLE sync_docs ADD COLUMN lineage BLOB;
