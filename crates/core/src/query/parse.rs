//! Reading a query: Dataview's query language (DQL) — `TABLE`, `LIST`, `TASK` and `CALENDAR` queries with `FROM`,
//! `WHERE`, `SORT`, `GROUP BY`, `FLATTEN` and `LIMIT` in any order and number — and its expressions.

use std::rc::Rc;

use super::lex::{Tok, Token, lex};
use super::value::{Link, Value};
use super::{QueryError, literal};

/// A parsed query.
#[derive(Debug, Clone)]
pub struct Query {
    /// What it shows.
    pub kind: Kind,
    /// Where its notes come from (every note without a `FROM`).
    pub source: Option<Source>,
    /// The data commands, in order.
    pub commands: Vec<Command>,
}

/// What a query shows.
#[derive(Debug, Clone)]
pub enum Kind {
    /// `TABLE [WITHOUT ID] a AS "A", b`: a row per note (or group), a column per expression.
    Table {
        /// Whether the note (or group) column is left out.
        without_id: bool,
        /// The columns.
        columns: Vec<Column>,
    },
    /// `LIST [WITHOUT ID] [expr]`: a note (or group) per item, with the expression's value.
    List {
        /// Whether the note (or group) is left out.
        without_id: bool,
        /// The value shown beside it.
        expr: Option<Expr>,
    },
    /// `TASK`: the tasks, each a row.
    Task,
    /// `CALENDAR expr`: each note on the date the expression gives.
    Calendar {
        /// Where on the calendar.
        expr: Expr,
    },
}

/// A table's column.
#[derive(Debug, Clone)]
pub struct Column {
    /// What it shows.
    pub expr: Expr,
    /// Its heading: the `AS` name, or the expression as written.
    pub name: String,
}

/// A data command.
#[derive(Debug, Clone)]
pub enum Command {
    /// Keeps the rows for which it is true.
    Where(Expr),
    /// Orders by these keys; `true` for descending.
    Sort(Vec<(Expr, bool)>),
    /// Groups the rows by the value; the group's key is named so (`key` without `AS`).
    GroupBy(Expr, String),
    /// A row per element of the list the expression gives, the element under the name.
    Flatten(Expr, String),
    /// At most so many rows.
    Limit(usize),
}

/// Where a query's notes come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// `#tag`: notes with the tag or a tag below it (`#a` holds `#a/b`).
    Tag(String),
    /// `"Folder/Sub"`: notes in the notebook at that path or below it; a note's own path names that note.
    Folder(String),
    /// `[[Note]]`: notes that link to it (`[[]]`: to the note the query is in).
    LinkedTo(String),
    /// `outgoing([[Note]])`: notes it links to.
    Outgoing(String),
    /// `search("words")`: quire's search syntax (a quire addition).
    Search(String),
    /// Both.
    And(Box<Source>, Box<Source>),
    /// Either.
    Or(Box<Source>, Box<Source>),
    /// Not (`-` or `!`).
    Not(Box<Source>),
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal.
    Lit(Value),
    /// A field by name (`rating`, `file`, `this`).
    Field(String),
    /// `a.b`.
    Dot(Box<Expr>, String),
    /// `a[b]`.
    Index(Box<Expr>, Box<Expr>),
    /// `f(a, b)`.
    Call(String, Vec<Expr>),
    /// `!a`.
    Not(Box<Expr>),
    /// `-a`.
    Neg(Box<Expr>),
    /// `a op b`.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{ a: 1 }`.
    Object(Vec<(String, Expr)>),
    /// `(x) => x + 1`.
    Lambda(Rc<Lambda>),
}

/// A function written in a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Lambda {
    /// Its parameters.
    pub params: Vec<String>,
    /// Its body.
    pub body: Expr,
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `and`, `&`
    And,
    /// `or`, `|`
    Or,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

/// Parses a whole query.
pub fn parse_query(src: &str) -> Result<Query, QueryError> {
    parse_query_bytes(src).map_err(|e| e.in_characters(src))
}

fn parse_query_bytes(src: &str) -> Result<Query, QueryError> {
    let mut p = Parser::new(src)?;
    let kind = p.kind()?;
    let mut source = None;
    let mut commands = Vec::new();
    while p.at < p.toks.len() {
        if p.keyword("from") {
            if source.is_some() {
                return Err(p.error("a query has one FROM"));
            }
            source = Some(p.source_or()?);
        } else if p.keyword("where") {
            commands.push(Command::Where(p.expr()?));
        } else if p.keyword("sort") {
            let mut keys = Vec::new();
            loop {
                let e = p.expr()?;
                let desc = if p.keyword("desc") || p.keyword("descending") {
                    true
                } else {
                    let _ = p.keyword("asc") || p.keyword("ascending");
                    false
                };
                keys.push((e, desc));
                if !p.sym(",") {
                    break;
                }
            }
            commands.push(Command::Sort(keys));
        } else if p.keyword("group") {
            p.expect_keyword("by")?;
            let e = p.expr()?;
            let name = if p.keyword("as") { p.name()? } else { "key".to_owned() };
            commands.push(Command::GroupBy(e, name));
        } else if p.keyword("flatten") {
            let (e, text) = p.expr_with_text()?;
            let name = if p.keyword("as") { p.name()? } else { text };
            commands.push(Command::Flatten(e, name));
        } else if p.keyword("limit") {
            match p.next() {
                Some(Tok::Number(n)) if n >= 0.0 && n.fract() == 0.0 => commands.push(Command::Limit(n as usize)),
                _ => return Err(p.error_before("LIMIT takes a whole number")),
            }
        } else {
            return Err(p.error("expected FROM, WHERE, SORT, GROUP BY, FLATTEN or LIMIT"));
        }
    }
    Ok(Query { kind, source, commands })
}

/// Parses one expression (a view's column, a `dv` field).
pub fn parse_expr(src: &str) -> Result<Expr, QueryError> {
    parse_expr_bytes(src).map_err(|e| e.in_characters(src))
}

fn parse_expr_bytes(src: &str) -> Result<Expr, QueryError> {
    let mut p = Parser::new(src)?;
    let e = p.expr()?;
    if p.at < p.toks.len() {
        return Err(p.error("the expression ends before this"));
    }
    Ok(e)
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    at: usize,
    /// How deep the expression being read is nested, against [`MAX_DEPTH`].
    depth: usize,
}

/// The longest query read, in bytes: far beyond any written by hand, short of one that costs the reader.
const MAX_QUERY_BYTES: usize = 20_000;

/// The deepest nesting of an expression (brackets, `!`, `-`): far beyond any written by hand, far short of the
/// stack's end.
const MAX_DEPTH: usize = 100;

const STOP_WORDS: &[&str] = &["from", "where", "sort", "group", "flatten", "limit"];

impl Parser<'_> {
    fn new(src: &str) -> Result<Parser<'_>, QueryError> {
        if src.len() > MAX_QUERY_BYTES {
            return Err(QueryError::at(
                MAX_QUERY_BYTES,
                &format!(
                    "a query is at most {MAX_QUERY_BYTES} bytes long; this one is {}",
                    src.len()
                ),
            ));
        }
        Ok(Parser {
            src,
            toks: lex(src)?,
            at: 0,
            depth: 0,
        })
    }

    fn deeper(&mut self) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(&format!("the expression is nested more than {MAX_DEPTH} deep")));
        }
        Ok(())
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.tok)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).map(|t| t.tok.clone());
        self.at += 1;
        t
    }

    fn offset(&self) -> usize {
        self.toks.get(self.at).map_or(self.src.len(), |t| t.start)
    }

    fn error(&self, what: &str) -> QueryError {
        let found = self.toks.get(self.at).map(|t| &self.src[t.start..t.end]);
        match found {
            Some(found) => QueryError::at(self.offset(), &format!("{what} (found `{found}`)")),
            None => QueryError::at(self.offset(), &format!("{what} (the query ends)")),
        }
    }

    fn error_before(&self, what: &str) -> QueryError {
        QueryError::at(self.toks.get(self.at.saturating_sub(1)).map_or(0, |t| t.start), what)
    }

    fn is_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(w)) if w.eq_ignore_ascii_case(word))
    }

    fn keyword(&mut self, word: &str) -> bool {
        let yes = self.is_keyword(word);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn expect_keyword(&mut self, word: &str) -> Result<(), QueryError> {
        if self.keyword(word) {
            Ok(())
        } else {
            Err(self.error(&format!("expected {}", word.to_uppercase())))
        }
    }

    fn sym(&mut self, s: &str) -> bool {
        let yes = matches!(self.peek(), Some(Tok::Sym(x)) if *x == s);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn expect(&mut self, s: &str) -> Result<(), QueryError> {
        if self.sym(s) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{s}`")))
        }
    }

    fn at_stop(&self) -> bool {
        self.at >= self.toks.len() || STOP_WORDS.iter().any(|w| self.is_keyword(w))
    }

    fn name(&mut self) -> Result<String, QueryError> {
        match self.next() {
            Some(Tok::Ident(s) | Tok::Str(s)) => Ok(s),
            _ => Err(self.error_before("expected a name")),
        }
    }

    fn kind(&mut self) -> Result<Kind, QueryError> {
        if self.keyword("table") {
            let without_id = self.without_id()?;
            let mut columns = Vec::new();
            if !self.at_stop() {
                loop {
                    let (expr, text) = self.expr_with_text()?;
                    let name = if self.keyword("as") { self.name()? } else { text };
                    columns.push(Column { expr, name });
                    if !self.sym(",") {
                        break;
                    }
                }
            }
            Ok(Kind::Table { without_id, columns })
        } else if self.keyword("list") {
            let without_id = self.without_id()?;
            let expr = if self.at_stop() { None } else { Some(self.expr()?) };
            Ok(Kind::List { without_id, expr })
        } else if self.keyword("task") {
            Ok(Kind::Task)
        } else if self.keyword("calendar") {
            Ok(Kind::Calendar { expr: self.expr()? })
        } else {
            Err(self.error("a query starts with TABLE, LIST, TASK or CALENDAR"))
        }
    }

    fn without_id(&mut self) -> Result<bool, QueryError> {
        if self.keyword("without") {
            self.expect_keyword("id")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn source_or(&mut self) -> Result<Source, QueryError> {
        let mut left = self.source_and()?;
        while self.keyword("or") || self.sym("|") {
            left = Source::Or(Box::new(left), Box::new(self.source_and()?));
        }
        Ok(left)
    }

    fn source_and(&mut self) -> Result<Source, QueryError> {
        let mut left = self.source_atom()?;
        while self.keyword("and") || self.sym("&") {
            left = Source::And(Box::new(left), Box::new(self.source_atom()?));
        }
        Ok(left)
    }

    fn source_atom(&mut self) -> Result<Source, QueryError> {
        if self.sym("-") || self.sym("!") {
            self.deeper()?;
            let s = self.source_atom();
            self.depth -= 1;
            return Ok(Source::Not(Box::new(s?)));
        }
        if self.sym("(") {
            self.deeper()?;
            let s = self.source_or();
            self.depth -= 1;
            let s = s?;
            self.expect(")")?;
            return Ok(s);
        }
        match self.next() {
            Some(Tok::Tag(t)) => Ok(Source::Tag(t)),
            Some(Tok::Str(s)) => Ok(Source::Folder(s)),
            Some(Tok::Link(l)) => Ok(Source::LinkedTo(link_target(&l))),
            Some(Tok::Ident(f)) if f.eq_ignore_ascii_case("outgoing") => {
                self.expect("(")?;
                let Some(Tok::Link(l)) = self.next() else {
                    return Err(self.error_before("outgoing() takes a link: outgoing([[Note]])"));
                };
                self.expect(")")?;
                Ok(Source::Outgoing(link_target(&l)))
            }
            Some(Tok::Ident(f)) if f.eq_ignore_ascii_case("search") => {
                self.expect("(")?;
                let Some(Tok::Str(q)) = self.next() else {
                    return Err(self.error_before("search() takes quire's search words in quotes"));
                };
                self.expect(")")?;
                Ok(Source::Search(q))
            }
            _ => Err(self.error_before(
                "FROM takes #tags, \"folders\", [[links]], outgoing([[links]]) or search(\"words\"), joined by and/or",
            )),
        }
    }

    fn expr_with_text(&mut self) -> Result<(Expr, String), QueryError> {
        let start = self.offset();
        let e = self.expr()?;
        let end = self.toks.get(self.at - 1).map_or(self.src.len(), |t| t.end);
        Ok((e, self.src[start..end].trim().to_owned()))
    }

    fn expr(&mut self) -> Result<Expr, QueryError> {
        self.deeper()?;
        let e = self.or();
        self.depth -= 1;
        e
    }

    fn or(&mut self) -> Result<Expr, QueryError> {
        let mut left = self.and()?;
        while self.keyword("or") || self.sym("|") {
            left = Expr::Bin(BinOp::Or, Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, QueryError> {
        let mut left = self.compare()?;
        while self.keyword("and") || self.sym("&") {
            left = Expr::Bin(BinOp::And, Box::new(left), Box::new(self.compare()?));
        }
        Ok(left)
    }

    fn compare(&mut self) -> Result<Expr, QueryError> {
        let mut left = self.additive()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Sym("=")) => BinOp::Eq,
                Some(Tok::Sym("!=")) => BinOp::Ne,
                Some(Tok::Sym("<")) => BinOp::Lt,
                Some(Tok::Sym("<=")) => BinOp::Le,
                Some(Tok::Sym(">")) => BinOp::Gt,
                Some(Tok::Sym(">=")) => BinOp::Ge,
                _ => return Ok(left),
            };
            self.at += 1;
            left = Expr::Bin(op, Box::new(left), Box::new(self.additive()?));
        }
    }

    fn additive(&mut self) -> Result<Expr, QueryError> {
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Sym("+")) => BinOp::Add,
                Some(Tok::Sym("-")) => BinOp::Sub,
                _ => return Ok(left),
            };
            self.at += 1;
            left = Expr::Bin(op, Box::new(left), Box::new(self.multiplicative()?));
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, QueryError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Sym("*")) => BinOp::Mul,
                Some(Tok::Sym("/")) => BinOp::Div,
                Some(Tok::Sym("%")) => BinOp::Rem,
                _ => return Ok(left),
            };
            self.at += 1;
            left = Expr::Bin(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, QueryError> {
        self.deeper()?;
        let e = if self.sym("!") {
            self.unary().map(|e| Expr::Not(Box::new(e)))
        } else if self.sym("-") {
            self.unary().map(|e| Expr::Neg(Box::new(e)))
        } else {
            self.postfix()
        };
        self.depth -= 1;
        e
    }

    fn postfix(&mut self) -> Result<Expr, QueryError> {
        let mut e = self.atom()?;
        loop {
            if self.sym(".") {
                match self.next() {
                    Some(Tok::Ident(name)) => e = Expr::Dot(Box::new(e), name),
                    _ => return Err(self.error_before("expected a field name after `.`")),
                }
            } else if self.sym("[") {
                let index = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(index));
            } else {
                return Ok(e);
            }
        }
    }

    fn atom(&mut self) -> Result<Expr, QueryError> {
        let start = self.at;
        match self.next() {
            Some(Tok::Number(n)) => Ok(Expr::Lit(Value::Number(n))),
            Some(Tok::Str(s)) => Ok(Expr::Lit(Value::Text(s))),
            Some(Tok::Link(l)) => Ok(Expr::Lit(Value::Link(Link {
                target: link_target(&l),
                note_id: None,
                display: l.split_once('|').map(|(_, d)| d.to_owned()),
            }))),
            Some(Tok::Ident(name)) => {
                if name.eq_ignore_ascii_case("true") {
                    return Ok(Expr::Lit(Value::Bool(true)));
                }
                if name.eq_ignore_ascii_case("false") {
                    return Ok(Expr::Lit(Value::Bool(false)));
                }
                if name.eq_ignore_ascii_case("null") {
                    return Ok(Expr::Lit(Value::Null));
                }
                if matches!(self.peek(), Some(Tok::Sym("("))) {
                    if let Some(lit) = self.literal_call(&name)? {
                        return Ok(lit);
                    }
                    self.at += 1;
                    let args = self.args(")")?;
                    return Ok(Expr::Call(name.to_lowercase(), args));
                }
                if matches!(self.peek(), Some(Tok::Sym("=>"))) {
                    self.at += 1;
                    let body = self.expr()?;
                    return Ok(Expr::Lambda(Rc::new(Lambda {
                        params: vec![name],
                        body,
                    })));
                }
                Ok(Expr::Field(name))
            }
            Some(Tok::Sym("(")) => {
                if let Some(params) = self.lambda_params() {
                    let body = self.expr()?;
                    return Ok(Expr::Lambda(Rc::new(Lambda { params, body })));
                }
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Some(Tok::Sym("[")) => Ok(Expr::List(self.args("]")?)),
            Some(Tok::Sym("{")) => {
                let mut fields = Vec::new();
                if !self.sym("}") {
                    loop {
                        let key = self.name()?;
                        self.expect(":")?;
                        fields.push((key, self.expr()?));
                        if self.sym("}") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Expr::Object(fields))
            }
            Some(Tok::Tag(t)) => Ok(Expr::Lit(Value::Text(format!("#{t}")))),
            _ => {
                self.at = start;
                Err(self.error("expected a value, a field or a function"))
            }
        }
    }

    fn args(&mut self, close: &str) -> Result<Vec<Expr>, QueryError> {
        let mut args = Vec::new();
        if self.sym(close) {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.sym(close) {
                return Ok(args);
            }
            self.expect(",")?;
        }
    }

    /// After `(`: `a, b) =>` makes a lambda's parameters (and is consumed); anything else is left.
    fn lambda_params(&mut self) -> Option<Vec<String>> {
        let save = self.at;
        let mut params = Vec::new();
        loop {
            match self.next() {
                Some(Tok::Ident(p)) => params.push(p),
                Some(Tok::Sym(")")) if params.is_empty() => break,
                _ => {
                    self.at = save;
                    return None;
                }
            }
            match self.next() {
                Some(Tok::Sym(",")) => continue,
                Some(Tok::Sym(")")) => break,
                _ => {
                    self.at = save;
                    return None;
                }
            }
        }
        if self.sym("=>") {
            Some(params)
        } else {
            self.at = save;
            None
        }
    }

    /// `date(today)`, `date(2026-12-06)` and `dur(7 days)` hold words, not an expression: read as written.
    fn literal_call(&mut self, name: &str) -> Result<Option<Expr>, QueryError> {
        let is_date = name.eq_ignore_ascii_case("date");
        if !is_date && !name.eq_ignore_ascii_case("dur") {
            return Ok(None);
        }
        let open = self.toks[self.at].end;
        let mut depth = 0usize;
        let mut close = None;
        for (k, t) in self.toks.iter().enumerate().skip(self.at) {
            match t.tok {
                Tok::Sym("(") => depth += 1,
                Tok::Sym(")") => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            return Err(self.error("`(` is not closed"));
        };
        let inner = self.src[open..self.toks[close].start].trim();
        let value = if is_date {
            literal::date_words(inner).map(|d| Expr::Call("date".to_owned(), vec![Expr::Lit(d)]))
        } else {
            literal::duration(inner).map(|d| Expr::Lit(Value::Duration(d)))
        };
        Ok(value.inspect(|_| self.at = close + 1))
    }
}

/// A link's target without its `|display` and `#heading`.
fn link_target(inner: &str) -> String {
    let target = inner.split('|').next().unwrap_or("");
    let target = target.split('#').next().unwrap_or("");
    target.trim().to_owned()
}
