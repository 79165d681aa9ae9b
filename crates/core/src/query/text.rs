//! A query's result as plain text, for a terminal: a table with aligned columns, a list, tasks with their boxes, a
//! calendar's dates; groups under their keys.

use super::{QueryResult, ResultRow, Value};

/// The widest a table's cell is shown (longer text is cut with `…`).
const CELL_CHARS: usize = 48;

impl QueryResult {
    /// The result as text, one row a line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        match self.kind.as_str() {
            "table" => table(self, &mut out),
            "task" => {
                for row in &self.rows {
                    if let Some(g) = &row.group {
                        out.push_str(&format!("{}\n", g.display()));
                        for child in &row.children {
                            task_line(child, "  ", &mut out);
                        }
                    } else {
                        task_line(row, "", &mut out);
                    }
                }
            }
            _ => {
                for row in &self.rows {
                    let head = label(row);
                    let value = row.cells.first().map(Value::display);
                    match value {
                        Some(v) if head.is_empty() => out.push_str(&format!("- {v}\n")),
                        Some(v) => out.push_str(&format!("- {head}: {v}\n")),
                        None => out.push_str(&format!("- {head}\n")),
                    }
                    for child in &row.children {
                        out.push_str(&format!("  - {}\n", label(child)));
                    }
                }
            }
        }
        let n = self.rows.len();
        out.push_str(&format!("({n} {})\n", if n == 1 { "result" } else { "results" }));
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        out
    }
}

/// The row's note (title) or group key.
fn label(row: &ResultRow) -> String {
    match (&row.note, &row.group) {
        (Some(n), _) => n.title.clone(),
        (None, Some(g)) => g.display(),
        _ => String::new(),
    }
}

fn task_line(row: &ResultRow, indent: &str, out: &mut String) {
    let Some(t) = &row.task else { return };
    let title = row.note.as_ref().map(|n| n.title.as_str()).unwrap_or("");
    out.push_str(&format!(
        "{indent}- [{}] {}   ({title}, line {})\n",
        t.status, t.text, t.line
    ));
}

fn cut(text: &str) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= CELL_CHARS {
        one_line
    } else {
        format!("{}…", one_line.chars().take(CELL_CHARS - 1).collect::<String>())
    }
}

fn table(result: &QueryResult, out: &mut String) {
    let with_id = result.headers.len() > result.rows.first().map_or(result.headers.len(), |r| r.cells.len());
    let rows: Vec<Vec<String>> = result
        .rows
        .iter()
        .map(|r| {
            let mut cells = Vec::new();
            if with_id {
                cells.push(cut(&label(r)));
            }
            cells.extend(r.cells.iter().map(|c| cut(&c.display())));
            cells
        })
        .collect();
    let mut widths: Vec<usize> = result
        .headers
        .iter()
        .map(|h| h.chars().count().min(CELL_CHARS))
        .collect();
    for row in &rows {
        for (i, c) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = |cells: &[String], out: &mut String| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let w = widths.get(i).copied().unwrap_or(0);
                format!("{c}{}", " ".repeat(w.saturating_sub(c.chars().count())))
            })
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    let headers: Vec<String> = result.headers.iter().map(|h| cut(h)).collect();
    line(&headers, out);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&rule, out);
    for row in &rows {
        line(row, out);
    }
}
