//! quire-core on its own: open a workspace file, write as the user, search, and watch the guards refuse an agent.
//!
//! `cargo run -p quire-core --example workspace`
#![expect(clippy::print_stdout, reason = "an example shows its results on the terminal")]

use quire_core::{Actor, NewNote, NewNotebook, Page, SearchOptions, Workspace};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let ws = Workspace::open(dir.path().join("example.quire"))?;

    // Every write is one transaction on behalf of an actor; the user may do anything.
    let journal = ws.write(&Actor::User, |w| {
        let journal = w.create_notebook(NewNotebook {
            title: "Journal".into(),
            ..Default::default()
        })?;
        w.create_note(NewNote {
            notebook_id: Some(journal.id.clone()),
            ..NewNote::new("Monday", "Walked along the river; the herons were back.")
        })?;
        w.create_note(NewNote::new("Groceries", "- oat milk\n- lentils\n- lemons"))?;
        w.set_notebook_protected(&journal.id, true)
    })?;

    // Search speaks quire's query language (here: any word). The journal is protected now, so its note is found
    // by title only: "herons" finds nothing there.
    let options = SearchOptions {
        page: Page::first(10),
        include_trashed: false,
    };
    let hits = ws.read(&Actor::User, |r| r.search("any:1 lemons herons", options))?;
    for hit in &hits.items {
        println!("found {:?} ({})", hit.note.title, hit.snippet);
    }

    // An agent is refused inside the protected notebook, with a fixed message, and nothing is written.
    let agent = Actor::Agent {
        chat: "example".into(),
        turn: 1,
    };
    let refused = ws.write(&agent, |w| {
        w.create_note(NewNote {
            notebook_id: Some(journal.id.clone()),
            ..NewNote::new("Planted", "The agent tried to write here.")
        })
    });
    println!(
        "agent in the journal: {}",
        refused.map_or_else(|e| e.to_string(), |_| "written?!".into())
    );
    Ok(())
}
