//! `cargo xtask bench capture` (issue 50): a 100-page text PDF read and indexed (target under 5 s), a word of its
//! page 80 found by search beside a word of a note (target: the same time), OCR of a 10-page scan against Tesseract's
//! own command line on the same pages (target within 1.2x), and OCR's character error rate on the fixtures' known text.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use quire_core::{Actor, NewAttachment, NewNote, SearchOptions, Workspace};

use crate::measure::{Options, show, stats};
use crate::textgen::TextGen;

pub(crate) fn run(options: &Options) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let ws = Workspace::open(dir.path().join("bench.quire"))?;
    let mut text = TextGen::new(50);
    let filler: Vec<NewNote> = (0..options.notes)
        .map(|_| text.note(&[quire_core::ROOT_NOTEBOOK_ID.to_owned()]))
        .collect();
    ws.write(&Actor::User, |w| {
        for note in filler {
            w.create_note(note)?;
        }
        w.create_note(NewNote::new("Marker note", "The word zanzibarnote is here."))?;
        Ok::<_, quire_core::Error>(())
    })?;
    println!(
        "capture bench: {} filler notes, {} samples",
        options.notes, options.samples
    );

    // A 100-page PDF, each page 40 lines of text, page 80 with a word of its own.
    let pdf = text_pdf(&mut text, 100, 80, "zanzibarpage");
    let mut read = Vec::new();
    for _ in 0..5 {
        let note = ws
            .write(&Actor::User, |w| w.create_note(NewNote::new("Report", "")))?
            .summary
            .id;
        let attachment = ws
            .write(&Actor::User, |w| {
                w.add_attachment(
                    &note,
                    NewAttachment {
                        title: "report.pdf".into(),
                        mime: "application/pdf".into(),
                        data: pdf.clone(),
                        text: None,
                    },
                )
            })?
            .id;
        let start = Instant::now();
        let found = quire_capture::extract("application/pdf", &pdf, None)?;
        anyhow::ensure!(found.pages.len() == 100, "{} pages read", found.pages.len());
        ws.write(&Actor::User, |w| {
            w.set_attachment_text(&attachment, Some(&found.text()), "read")
        })?;
        read.push(start.elapsed());
    }
    let (median, _) = stats(read);
    println!(
        "| 100-page text PDF read and indexed | {} | target under 5 s |",
        show(median)
    );

    let search = |word: &str| -> anyhow::Result<Duration> {
        let mut samples = Vec::new();
        for _ in 0..options.samples.min(500) {
            let start = Instant::now();
            let hits = ws.read(&Actor::User, |r| r.search(word, SearchOptions::default()))?;
            samples.push(start.elapsed());
            anyhow::ensure!(!hits.items.is_empty(), "{word} not found");
        }
        Ok(stats(samples).0)
    };
    let in_note = search("zanzibarnote")?;
    let in_page = search("zanzibarpage")?;
    let hit = ws.read(&Actor::User, |r| r.search("zanzibarpage", SearchOptions::default()))?;
    let page = hit.items[0].found_in.as_ref().map(|c| c.page);
    anyhow::ensure!(page == Some(80), "cited page {page:?}");
    println!(
        "| a word of page 80 found (cited: page 80) | {} | a word of a note: {} ({:.2}x) |",
        show(in_page),
        show(in_note),
        in_page.as_secs_f64() / in_note.as_secs_f64()
    );

    ocr()?;
    Ok(())
}

/// OCR of a 10-page scan (the fixture scan, five times) against `tesseract IMAGE stdout` on the same page images,
/// alternating, and the character error rate of what quire read.
fn ocr() -> anyhow::Result<()> {
    let Some(ocr) = quire_capture::Ocr::find("eng") else {
        println!("| OCR | not measured: Tesseract is not installed (apt-get install tesseract-ocr) | |");
        return Ok(());
    };
    let fixtures = crate::project_root().join("crates/capture/tests/fixtures");
    let scan = std::fs::read(fixtures.join("scan.pdf"))?;
    let pages = [fixtures.join("scan1.jpg"), fixtures.join("scan2.png")];
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    let mut last = String::new();
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..5 {
            let found = quire_capture::extract("application/pdf", &scan, Some(&ocr))?;
            anyhow::ensure!(found.pages.iter().all(|p| p.ocr), "a page not read by OCR");
            last = found.text();
        }
        ours.push(start.elapsed());
        let start = Instant::now();
        for _ in 0..5 {
            for page in &pages {
                tesseract(page)?;
            }
        }
        floor.push(start.elapsed());
    }
    let (ours, floor) = (stats(ours).0, stats(floor).0);
    let per_second = |d: Duration| 10.0 / d.as_secs_f64();
    println!(
        "| OCR of a 10-page scan | {:.2} pages/s | tesseract's CLI on the same pages: {:.2} pages/s ({:.2}x the time; target within 1.2x) |",
        per_second(ours),
        per_second(floor),
        ours.as_secs_f64() / floor.as_secs_f64()
    );
    let expected = "Dear tenant, the rent rises in March.\nKind regards, Harbourside Lettings\u{c}Page two: the boiler is \
                    serviced yearly.\nReference number 48213";
    println!(
        "| OCR character error rate on the scan's known text | {:.1}% | |",
        100.0 * cer(&last, expected)
    );
    let receipt = std::fs::read(fixtures.join("receipt.png"))?;
    let read = ocr.read(&receipt)?;
    println!(
        "| OCR character error rate on the receipt | {:.1}% | |",
        100.0 * cer(&read, "Receipt: espresso 3.20\nTotal paid 12.80 EUR")
    );
    Ok(())
}

fn tesseract(image: &Path) -> anyhow::Result<String> {
    let out = std::process::Command::new("tesseract")
        .arg(image)
        .args(["stdout", "-l", "eng"])
        .env("OMP_THREAD_LIMIT", "1")
        .output()
        .context("cannot run tesseract")?;
    if !out.status.success() {
        bail!("tesseract failed on {}", image.display());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The character error rate: the edit distance over the expected text's length, whitespace runs as one space.
fn cer(read: &str, expected: &str) -> f64 {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect::<Vec<char>>()
    };
    let (a, b) = (norm(read), norm(expected));
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()] as f64 / b.len().max(1) as f64
}

/// A PDF of `pages` pages of generated text (Helvetica, 40 lines each), `word` on page `marked`.
fn text_pdf(text: &mut TextGen, pages: usize, marked: usize, word: &str) -> Vec<u8> {
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        String::new(), // the page tree, once the pages are known
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into(),
    ];
    let mut kids = Vec::new();
    for page in 1..=pages {
        let mut content = String::from("BT /F1 10 Tf 12 TL 50 780 Td\n");
        for line in 0..40 {
            let mut words = text.words(12);
            if page == marked && line == 20 {
                words = format!("{words} {word}");
            }
            let clean: String = words
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == ' ' || *c == '.')
                .collect();
            content.push_str(&format!("({clean}) Tj T*\n"));
        }
        content.push_str("ET");
        objects.push(format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()));
        let content_id = objects.len();
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>"
        ));
        kids.push(format!("{} 0 R", objects.len()));
    }
    objects[1] = format!("<< /Type /Pages /Kids [{}] /Count {pages} >>", kids.join(" "));
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}
