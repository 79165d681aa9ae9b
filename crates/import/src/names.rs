//! File names that work on Linux, macOS and Windows: no reserved characters or names, no trailing dots or spaces,
//! bounded length, and no two names in one folder that differ only by case.

use std::collections::HashSet;

/// The most bytes of a name's stem (room is left for ` (12)` and an extension within common 255-byte limits).
const MAX_STEM_BYTES: usize = 120;

const RESERVED: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2",
    "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// `text` made safe as a file name stem.
pub(crate) fn safe_stem(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' | '#' | '^' | '[' | ']' => '-',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    while out.len() > MAX_STEM_BYTES {
        out.pop();
    }
    let trimmed = out
        .trim_end_matches(['.', ' '])
        .trim_start_matches('.')
        .trim()
        .to_owned();
    let mut out = if trimmed.is_empty() {
        "Untitled".to_owned()
    } else {
        trimmed
    };
    let base_len = out.find('.').unwrap_or(out.len());
    if RESERVED.contains(&out[..base_len].to_ascii_uppercase().as_str()) {
        // Right after the reserved part: `COM1_.txt`, since Windows reads `COM1.txt` as the device too.
        out.insert(base_len, '_');
    }
    out
}

/// Hands out names unique within one folder, ignoring case.
#[derive(Debug, Default)]
pub(crate) struct Folder {
    taken: HashSet<String>,
}

impl Folder {
    /// Keeps a name from being handed out.
    pub(crate) fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_lowercase());
    }

    /// A name for `stem` + `extension` (with its dot, or empty) not yet used here: `Name`, `Name (2)`, ...
    pub(crate) fn claim(&mut self, stem: &str, extension: &str) -> String {
        let stem = safe_stem(stem);
        let mut n = 1;
        loop {
            let name = if n == 1 {
                format!("{stem}{extension}")
            } else {
                format!("{stem} ({n}){extension}")
            };
            if self.taken.insert(name.to_lowercase()) {
                return name;
            }
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_everywhere_and_unique_ignoring_case() {
        assert_eq!(safe_stem("a/b\\c:d*e?f\"g<h>i|j"), "a-b-c-d-e-f-g-h-i-j");
        assert_eq!(safe_stem("CON"), "CON_");
        assert_eq!(safe_stem("com1.txt"), "com1_.txt");
        assert_eq!(safe_stem("CON.tar.gz"), "CON_.tar.gz");
        assert_eq!(safe_stem("trailing. . "), "trailing");
        assert_eq!(safe_stem("..hidden"), "hidden");
        assert_eq!(safe_stem("   "), "Untitled");
        assert_eq!(safe_stem("line\nbreak"), "line break");
        assert!(safe_stem(&"é".repeat(200)).len() <= MAX_STEM_BYTES);
        let mut folder = Folder::default();
        assert_eq!(folder.claim("Plan", ".md"), "Plan.md");
        assert_eq!(folder.claim("plan", ".md"), "plan (2).md");
        assert_eq!(folder.claim("PLAN", ".md"), "PLAN (3).md");
        assert_eq!(folder.claim("Plan", ".png"), "Plan.png");
    }
}
