//! Helpers the import tests share.

use std::path::Path;

use quire_core::{Actor, Page, Workspace};
use quire_import::{ImportOptions, ImportReport, import};

/// Imports `source`, failing the test if the import cannot run at all.
pub(crate) fn run(ws: &Workspace, source: &Path, options: &ImportOptions) -> ImportReport {
    import(ws, source, options, &|_, _| {}).unwrap()
}

/// The note titled `title` (the first of that title), failing the test when there is none.
pub(crate) fn note_by_title(ws: &Workspace, title: &str) -> quire_core::Note {
    ws.read(&Actor::User, |r| {
        let all = r.all_notes(Page { offset: 0, limit: 100 })?;
        let summary = all.items.into_iter().find(|n| n.title == title).expect(title);
        r.note(&summary.id)
    })
    .unwrap()
}
