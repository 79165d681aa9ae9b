//! The fixture workspace core's tests share (the sample of `quire_core::testing`), the actors they write as, and a
//! dump of the rows to compare before and after.

use quire_core::{Actor, Error, Workspace};

/// The sample workspace of `quire_core::testing`, shared with the tool tests.
pub(crate) type Fixture = quire_core::testing::Sample;

pub(crate) fn agent() -> Actor {
    Actor::Agent {
        chat: "c1".into(),
        turn: 1,
    }
}

pub(crate) fn mcp() -> Actor {
    Actor::Mcp {
        client: "test-client".into(),
    }
}

/// A stable text dump of every row that matters, to compare before and after.
pub(crate) fn dump(ws: &Workspace) -> String {
    ws.read(&Actor::User, |r| {
        let mut out = String::new();
        for nb in r.notebooks()? {
            out.push_str(&format!("{nb:?}\n"));
            let page = r.notes_in_notebook(&nb.id, quire_core::Page::first(200))?;
            for n in page.items {
                let note = r.note(&n.id)?;
                out.push_str(&format!(
                    "  {note:?}\n  {:?}\n  {:?}\n",
                    r.attributes(&n.id)?,
                    r.attachments(&n.id)?
                ));
            }
        }
        for n in r.trashed_notes(quire_core::Page::first(200))?.items {
            out.push_str(&format!("trash {:?}\n", r.note(&n.id)?));
        }
        out.push_str(&format!("{:?}\n", r.tags()?));
        Ok::<_, Error>(out)
    })
    .expect("dump")
}
