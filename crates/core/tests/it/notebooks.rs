//! Notebooks by path and by title, notes by name, and a notebook's effective protection: one rule each, in core.

use quire_core::{Actor, Error, ROOT_NOTEBOOK_ID, Workspace, testing};

use crate::fixture::mcp;

/// Work/Projects, a second Projects under Home, a protected Vault with Vault/Inner.
fn tree() -> Workspace {
    let ws = Workspace::open_in_memory().unwrap();
    ws.write(&Actor::User, |w| {
        w.create_notebook_path(None, "Work/Projects")?;
        w.create_notebook_path(None, "Home/Projects")?;
        let vault = w.create_notebook_path(None, "Vault/Inner")?.created[0].id.clone();
        w.set_notebook_protected(&vault, true)?;
        Ok::<_, Error>(())
    })
    .unwrap();
    ws
}

#[test]
fn a_path_is_walked_from_the_top_ignoring_case_and_empty_parts() {
    let ws = tree();
    ws.read(&Actor::User, |r| {
        let projects = r.notebook_at_path("work/PROJECTS/").unwrap().unwrap();
        assert_eq!(r.notebook_path_text(&projects.id).unwrap(), "Work/Projects");
        assert_eq!(
            r.notebook_at_path(" Work // Projects ").unwrap().unwrap().id,
            projects.id
        );
        assert_eq!(r.notebook_at_path("").unwrap().unwrap().id, ROOT_NOTEBOOK_ID);
        assert!(
            r.notebook_at_path("Projects").unwrap().is_none(),
            "a path starts at the top"
        );
        assert!(r.notebook_at_path("Work/Nope").unwrap().is_none());
        Ok::<_, Error>(())
    })
    .unwrap();
}

#[test]
fn a_lone_title_names_the_one_notebook_with_it_or_the_top_level_one() {
    let ws = tree();
    ws.write(&Actor::User, |w| {
        w.create_notebook_path(None, "Archive/Home")?;
        Ok::<_, Error>(())
    })
    .unwrap();
    ws.read(&Actor::User, |r| {
        let home = r.find_notebook("home").unwrap().unwrap();
        assert_eq!(
            home.parent_id.as_deref(),
            Some(ROOT_NOTEBOOK_ID),
            "of two, the top-level one"
        );
        let inner = r.find_notebook("Inner").unwrap().unwrap();
        assert_eq!(r.notebook_path_text(&inner.id).unwrap(), "Vault/Inner");
        let ambiguous = r.find_notebook("Projects").unwrap_err();
        assert!(matches!(ambiguous, Error::Invalid(_)), "{ambiguous:?}");
        assert!(ambiguous.to_string().contains("give its path instead"), "{ambiguous}");
        assert!(r.find_notebook("Missing").unwrap().is_none());
        assert!(r.find_notebook("Home/Projects").unwrap().is_some());
        Ok::<_, Error>(())
    })
    .unwrap();
}

#[test]
fn every_read_of_a_notebook_says_whether_it_is_protected_through_a_parent() {
    let ws = tree();
    for actor in [Actor::User, mcp()] {
        ws.read(&actor, |r| {
            let inner = r.notebook_at_path("Vault/Inner").unwrap().unwrap();
            assert!(!inner.is_protected, "its own flag is off");
            assert!(inner.effectively_protected, "its parent protects it");
            let vault = r.find_notebook("Vault").unwrap().unwrap();
            assert!(vault.is_protected && vault.effectively_protected);
            let work = r.notebook(&r.find_notebook("Work").unwrap().unwrap().id).unwrap();
            assert!(!work.effectively_protected);
            let tree = r.notebook_tree().unwrap();
            for nb in r.notebooks().unwrap() {
                assert_eq!(nb.effectively_protected, tree.is_protected(&nb.id), "{}", nb.title);
            }
            Ok::<_, Error>(())
        })
        .unwrap();
    }
}

#[test]
fn a_note_by_name_is_what_a_link_with_that_text_means() {
    let ws = tree();
    let (older, newer, aliased) = ws
        .write(&Actor::User, |w| {
            let work = w.find_notebook("Work")?.unwrap().id;
            let home = w.find_notebook("Home")?.unwrap().id;
            let older = testing::note("Ideas", "work ideas").notebook(&work).create(w)?;
            let newer = testing::note("ideas", "home ideas").notebook(&home).create(w)?;
            let aliased = testing::note("Reading list", "books")
                .label("aliases", "Books, Novels")
                .create(w)?;
            Ok::<_, Error>((older, newer, aliased))
        })
        .unwrap();
    ws.read(&Actor::User, |r| {
        let both: Vec<String> = r.notes_named("IDEAS").unwrap().into_iter().map(|n| n.id).collect();
        assert_eq!(both.len(), 2);
        assert!(both.contains(&older) && both.contains(&newer));
        let work: Vec<String> = r.notes_named("Work/Ideas").unwrap().into_iter().map(|n| n.id).collect();
        assert_eq!(work, vec![older.clone()], "a path before the title narrows it");
        let by_alias: Vec<String> = r.notes_named("books").unwrap().into_iter().map(|n| n.id).collect();
        assert_eq!(by_alias, vec![aliased.clone()]);
        assert!(r.notes_named("nothing like it").unwrap().is_empty());
        Ok::<_, Error>(())
    })
    .unwrap();
}

#[test]
fn no_rename_or_move_puts_two_notebooks_of_one_title_in_a_parent() {
    let ws = tree();
    let (work_projects, home_projects, home) = ws
        .read(&Actor::User, |r| {
            Ok::<_, Error>((
                r.notebook_at_path("Work/Projects")?.unwrap().id,
                r.notebook_at_path("Home/Projects")?.unwrap().id,
                r.notebook_at_path("Home")?.unwrap().id,
            ))
        })
        .unwrap();
    for actor in [Actor::User, mcp()] {
        let moved = ws
            .write(&actor, |w| w.move_notebook(&work_projects, &home))
            .unwrap_err();
        let Error::NotebookTitleTaken(taken) = &moved else {
            panic!("{moved:?}")
        };
        assert_eq!(
            (taken.path.as_str(), taken.parent_path.as_str()),
            ("Home/Projects", "Home")
        );
        ws.write(&actor, |w| w.create_notebook_path(Some(&home), "Drafts"))
            .unwrap();
        let renamed = ws
            .write(&actor, |w| w.rename_notebook(&home_projects, "DRAFTS"))
            .unwrap_err();
        assert!(matches!(renamed, Error::NotebookTitleTaken(_)), "{renamed:?}");
    }
    // Renaming a notebook to its own title in other case is not a clash.
    ws.write(&Actor::User, |w| w.rename_notebook(&home_projects, "projects"))
        .unwrap();
    let full = ws.write(&Actor::User, |w| w.delete_notebook(&home)).unwrap_err();
    assert!(
        matches!(full, Error::NotebookNotEmpty { notes: 0, notebooks: 2 }),
        "{full:?}"
    );
}
