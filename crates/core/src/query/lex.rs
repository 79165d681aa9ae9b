//! The query language's words: names, numbers, quoted text, `[[links]]`, `#tags` and symbols, each with where it
//! stands in the query (for errors that say where).

use super::QueryError;

/// A word of a query.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Number(f64),
    Str(String),
    Link(String),
    Tag(String),
    Sym(&'static str),
}

pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) start: usize,
    pub(super) end: usize,
}

const SYMBOLS: &[&str] = &[
    "=>", "!=", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "!", "(", ")", "[", "]", "{", "}", ",",
    ".", ":",
];

fn ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || (!c.is_ascii() && !c.is_whitespace() && !"“”‘’".contains(c))
}

fn ident_char(c: char) -> bool {
    ident_start(c) || c.is_numeric() || c == '-'
}

pub(super) fn lex(src: &str) -> Result<Vec<Token>, QueryError> {
    let mut out = Vec::new();
    let mut chars = src.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let rest = &src[i..];
        let (tok, len) = if rest.starts_with("[[") {
            let end = rest
                .find("]]")
                .ok_or_else(|| QueryError::at(i, "a link `[[` is not closed by `]]`"))?;
            (Tok::Link(rest[2..end].to_owned()), end + 2)
        } else if c == '"' || c == '\'' {
            let (text, len) =
                string_literal(rest, c).ok_or_else(|| QueryError::at(i, "text in quotes is not closed"))?;
            (Tok::Str(text), len)
        } else if c.is_ascii_digit() {
            let len = rest
                .char_indices()
                .find(|&(j, ch)| {
                    !(ch.is_ascii_digit()
                        || (ch == '.' && j > 0 && rest[j + 1..].starts_with(|d: char| d.is_ascii_digit())))
                })
                .map_or(rest.len(), |(j, _)| j);
            let n: f64 = rest[..len].parse().map_err(|_| QueryError::at(i, "not a number"))?;
            (Tok::Number(n), len)
        } else if c == '#' && rest[1..].starts_with(|d: char| ident_char(d) || d == '/') {
            let len = 1 + rest[1..]
                .find(|d: char| !(ident_char(d) || d == '/'))
                .unwrap_or(rest.len() - 1);
            (Tok::Tag(rest[1..len].to_owned()), len)
        } else if ident_start(c) {
            let mut len = rest.find(|d: char| !ident_char(d)).unwrap_or(rest.len());
            // A trailing dash belongs to what follows (`a- b`).
            while rest[..len].ends_with('-') {
                len -= 1;
            }
            (Tok::Ident(rest[..len].to_owned()), len)
        } else if let Some(sym) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            (Tok::Sym(sym), sym.len())
        } else {
            return Err(QueryError::at(i, &format!("`{c}` has no meaning here")));
        };
        out.push(Token {
            tok,
            start: i,
            end: i + len,
        });
        while chars.peek().is_some_and(|&(j, _)| j < i + len) {
            chars.next();
        }
    }
    Ok(out)
}

fn string_literal(rest: &str, quote: char) -> Option<(String, usize)> {
    let mut text = String::new();
    let mut escaped = false;
    for (j, ch) in rest.char_indices().skip(1) {
        if escaped {
            text.push(match ch {
                'n' => '\n',
                't' => '\t',
                other => other,
            });
            escaped = false;
        } else if ch == '\\' {
            escaped = true;
        } else if ch == quote {
            return Some((text, j + 1));
        } else {
            text.push(ch);
        }
    }
    None
}
