//! Daily and weekly notes and notes made from templates: one note per period, found again and never made twice,
//! its notebooks made on the way, its template filled in; a failure leaves nothing behind.

use jiff::civil::{DateTime, date};
use quire_core::query::QueryOptions;
use quire_core::{Actor, Error, FromTemplate, Period, PeriodicNote, PeriodicSettings, Workspace, testing};

use crate::fixture::agent;

fn now() -> DateTime {
    date(2026, 12, 6).at(8, 15, 0, 0)
}

fn daily(template: Option<&str>) -> PeriodicNote {
    PeriodicNote {
        period: Period::Day,
        day: now().date(),
        now: now(),
        settings: PeriodicSettings {
            template: template.map(str::to_owned),
            ..PeriodicSettings::default_for(Period::Day)
        },
        templates_notebook: "Templates".into(),
    }
}

fn template(ws: &Workspace, title: &str, notebook: &str, body: &str) -> String {
    ws.write(&Actor::User, |w| {
        let nb = w.create_notebook_path(None, notebook)?.notebook.id;
        let note = w.create_note(quire_core::NewNote {
            notebook_id: Some(nb),
            ..quire_core::NewNote::new(title, body)
        })?;
        Ok::<_, Error>(note.summary.id)
    })
    .unwrap()
}

#[test]
fn todays_note_is_made_once_from_its_template_and_found_again() {
    let ws = Workspace::open_in_memory().unwrap();
    template(
        &ws,
        "Daily",
        "Templates",
        "# {{date:dddd, MMMM Do}}\n- [ ] plan the day 📅 {{date}}\n<< [[<% tp.date.yesterday() %>]] >>\n",
    );
    let first = ws
        .write(&Actor::User, |w| w.open_periodic_note(&daily(Some("Daily"))))
        .unwrap();
    assert!(first.created);
    assert_eq!(first.note.title, "2026-12-06");
    assert_eq!(first.notebook_path, "Daily");
    let body = ws.read(&Actor::User, |r| r.note(&first.note.id)).unwrap().body;
    assert_eq!(
        body,
        "# Sunday, December 6th\n- [ ] plan the day 📅 2026-12-06\n<< [[2026-12-05]] >>\n"
    );
    // The task it holds is a task like any other: due today.
    let due = ws
        .read(&Actor::User, |r| {
            r.query_text(
                "TASK WHERE due = date(today)",
                &QueryOptions {
                    now: Some(now()),
                    ..QueryOptions::default()
                },
            )
        })
        .unwrap();
    assert_eq!(due.rows.len(), 1);

    let again = ws
        .write(&Actor::User, |w| w.open_periodic_note(&daily(Some("Daily"))))
        .unwrap();
    assert!(!again.created);
    assert_eq!(again.note.id, first.note.id);
    let named = ws.read(&Actor::User, |r| r.notes_named("2026-12-06")).unwrap();
    assert_eq!(named.len(), 1, "one note for the day");
}

#[test]
fn a_format_with_slashes_files_the_note_in_notebooks_below() {
    let ws = Workspace::open_in_memory().unwrap();
    let mut p = daily(None);
    p.settings.notebook = "Journal".into();
    p.settings.format = "YYYY/MM-MMMM/YYYY-MM-DD ddd".into();
    let opened = ws.write(&Actor::User, |w| w.open_periodic_note(&p)).unwrap();
    assert_eq!(opened.notebook_path, "Journal/2026/12-December");
    assert_eq!(opened.note.title, "2026-12-06 Sun");
    assert_eq!(ws.read(&Actor::User, |r| r.note(&opened.note.id)).unwrap().body, "");
}

#[test]
fn every_day_of_a_week_opens_that_weeks_note() {
    let ws = Workspace::open_in_memory().unwrap();
    template(&ws, "Week", "Templates", "{{sunday:MMM D}} to {{saturday:MMM D}}\n");
    let open = |day, format: &str| {
        let p = PeriodicNote {
            period: Period::Week,
            day,
            now: now(),
            settings: PeriodicSettings {
                format: format.to_owned(),
                template: Some("Week".into()),
                ..PeriodicSettings::default_for(Period::Week)
            },
            templates_notebook: "Templates".into(),
        };
        ws.write(&Actor::User, |w| w.open_periodic_note(&p)).unwrap()
    };
    let sunday = open(date(2026, 12, 6), "gggg-[W]ww");
    let saturday = open(date(2026, 12, 12), "gggg-[W]ww");
    assert_eq!(sunday.note.id, saturday.note.id);
    assert_eq!(sunday.note.title, "2026-W50");
    assert_eq!(
        ws.read(&Actor::User, |r| r.note(&sunday.note.id)).unwrap().body,
        "Dec 6 to Dec 12\n"
    );
    // ISO weeks start on Monday: Sunday the 6th ends week 49.
    assert_eq!(open(date(2026, 12, 6), "GGGG-[W]WW").note.title, "2026-W49");
    assert_eq!(open(date(2026, 11, 30), "GGGG-[W]WW").note.title, "2026-W49");
    assert!(!open(date(2026, 12, 1), "GGGG-[W]WW").created);
}

#[test]
fn a_trashed_days_note_is_not_opened_again() {
    let ws = Workspace::open_in_memory().unwrap();
    let first = ws.write(&Actor::User, |w| w.open_periodic_note(&daily(None))).unwrap();
    ws.write(&Actor::User, |w| w.trash_note(&first.note.id)).unwrap();
    let second = ws.write(&Actor::User, |w| w.open_periodic_note(&daily(None))).unwrap();
    assert!(second.created);
    assert_ne!(second.note.id, first.note.id);
}

#[test]
fn a_missing_template_fails_and_leaves_nothing_behind() {
    let ws = Workspace::open_in_memory().unwrap();
    let err = ws
        .write(&Actor::User, |w| w.open_periodic_note(&daily(Some("Nope"))))
        .unwrap_err();
    assert!(err.to_string().contains("no note is named \"Nope\""), "{err}");
    let notebooks = ws.read(&Actor::User, |r| r.notebooks()).unwrap();
    assert!(
        notebooks.iter().all(|nb| nb.title != "Daily"),
        "the Daily notebook was not left behind"
    );
}

#[test]
fn a_title_many_notes_share_is_the_one_among_the_templates() {
    let ws = Workspace::open_in_memory().unwrap();
    testing::note("Meeting", "notes of a meeting").create_in(&ws).unwrap();
    let id = template(&ws, "Meeting", "Templates/Work", "## {{title}}\nAttendees:: \n");
    let made = ws
        .write(&Actor::User, |w| {
            w.create_from_template(&FromTemplate {
                template: "Meeting".into(),
                templates_notebook: "Templates".into(),
                note: quire_core::NewNote {
                    tags: vec!["meeting".into()],
                    ..quire_core::NewNote::new("Budget review", "")
                },
                now: now(),
            })
        })
        .unwrap();
    assert!(made.created);
    assert_eq!(
        ws.read(&Actor::User, |r| r.note(&made.note.id)).unwrap().body,
        "## Budget review\nAttendees:: \n"
    );
    // By id, and by its path.
    for name in [id.as_str(), "Templates/Work/Meeting"] {
        let found = ws.read(&Actor::User, |r| r.find_template(name, "Elsewhere")).unwrap();
        assert_eq!(found.id, id);
    }
    // Outside the templates notebook, two notes share the title: the error names both.
    let err = ws
        .read(&Actor::User, |r| r.find_template("Meeting", "Elsewhere"))
        .unwrap_err();
    assert!(err.to_string().contains("2 notes are named"), "{err}");
}

#[test]
fn an_agent_cannot_fill_a_protected_template() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = template(&ws, "Secret plan", "Templates", "the combination is 1234");
    ws.write(&Actor::User, |w| w.set_note_protected(&id, true)).unwrap();
    let err = ws
        .write(&agent(), |w| w.open_periodic_note(&daily(Some("Secret plan"))))
        .unwrap_err();
    assert!(err.to_string().contains("protected"), "{err}");
    let named = ws.read(&Actor::User, |r| r.notes_named("2026-12-06")).unwrap();
    assert!(named.is_empty());
}

#[test]
fn found_in_use_a_shared_template_name_a_dotted_path_and_the_neighbours_titles() {
    let ws = Workspace::open_in_memory().unwrap();
    // The daily template named "Day" in Templates, and another note titled "Day" at the top.
    template(
        &ws,
        "Day",
        "Templates",
        "<< [[{{yesterday}}]] | [[{{tomorrow}}]] >> <% tp.date.now(\"YYYY-MM-DD\", 1, tp.file.title, \"YYYY-MM-DD\") %>",
    );
    testing::note("Day", "not a template").create_in(&ws).unwrap();
    let mut p = daily(Some("Day"));
    p.settings.notebook = "Journal".into();
    p.settings.format = "YYYY-MM-DD dddd".into();
    let opened = ws.write(&Actor::User, |w| w.open_periodic_note(&p)).unwrap();
    assert_eq!(opened.note.title, "2026-12-06 Sunday");
    // The neighbours are linked by their own titles, and Templater reads the date at the start of the title.
    assert_eq!(
        ws.read(&Actor::User, |r| r.note(&opened.note.id)).unwrap().body,
        "<< [[2026-12-05 Saturday]] | [[2026-12-07 Monday]] >> 2026-12-07"
    );
    // Two templates of one name inside Templates: the error names both, it does not say there is none.
    template(&ws, "Day", "Templates", "another");
    p.day = date(2026, 12, 7);
    p.settings.template = Some("Templates/Day".into());
    let err = ws.write(&Actor::User, |w| w.open_periodic_note(&p)).unwrap_err();
    assert!(err.to_string().contains("notes are named"), "{err}");
    // A format that climbs out of its notebook is refused, and nothing is made.
    p.settings.template = None;
    p.settings.format = "../x/YYYY".into();
    let err = ws.write(&Actor::User, |w| w.open_periodic_note(&p)).unwrap_err();
    assert!(err.to_string().contains("\"..\""), "{err}");
    assert!(
        ws.read(&Actor::User, |r| r.notebooks())
            .unwrap()
            .iter()
            .all(|nb| nb.title != "..")
    );
}

#[test]
fn an_iso_weeks_days_run_monday_to_sunday() {
    let ws = Workspace::open_in_memory().unwrap();
    template(&ws, "Week", "Templates", "{{monday:ddd D MMM}} – {{sunday:ddd D MMM}}");
    let p = PeriodicNote {
        period: Period::Week,
        day: date(2026, 12, 23),
        now: now(),
        settings: PeriodicSettings {
            format: "GGGG-[W]WW".into(),
            template: Some("Week".into()),
            ..PeriodicSettings::default_for(Period::Week)
        },
        templates_notebook: "Templates".into(),
    };
    let opened = ws.write(&Actor::User, |w| w.open_periodic_note(&p)).unwrap();
    assert_eq!(opened.note.title, "2026-W52");
    assert_eq!(
        ws.read(&Actor::User, |r| r.note(&opened.note.id)).unwrap().body,
        "Mon 21 Dec – Sun 27 Dec"
    );
}
