//! Evaluating expressions against a row, with Dataview's rules: null stays null through arithmetic, a field of a
//! list is the list of the elements' fields, names match as written or in their plain form (`Due Date` as
//! `due-date`).

use std::cmp::Ordering;

use jiff::civil::DateTime;

use super::parse::{BinOp, Expr, Lambda};
use super::value::{Value, date_minus, date_plus};

/// What an expression is evaluated against.
pub(crate) struct Env<'a> {
    /// The time the query runs at, local.
    pub now: DateTime,
    /// The row: a note's object (`file` and its fields), a task, a group.
    pub row: &'a Value,
    /// The note a query inside a note belongs to (`this`).
    pub this: Option<&'a Value>,
    /// Lambda parameters in force, innermost last.
    pub locals: Vec<(String, Value)>,
}

/// What went wrong evaluating a row, as the result's warnings (or the query's error) say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EvalError(pub(crate) String);

impl From<String> for EvalError {
    fn from(message: String) -> EvalError {
        EvalError(message)
    }
}

impl From<&str> for EvalError {
    fn from(message: &str) -> EvalError {
        EvalError(message.to_owned())
    }
}

/// A value, or why a row has none.
pub(crate) type Fallible = Result<Value, EvalError>;

impl Env<'_> {
    pub(crate) fn eval(&mut self, e: &Expr) -> Fallible {
        Ok(match e {
            Expr::Lit(v) => v.clone(),
            Expr::Field(name) => self.field(name),
            Expr::Dot(of, name) => {
                let of = self.eval(of)?;
                member(&of, name)
            }
            Expr::Index(of, index) => {
                let of = self.eval(of)?;
                let index = self.eval(index)?;
                match (&of, &index) {
                    (Value::List(l), Value::Number(n)) => element(l, *n),
                    (Value::Text(s), Value::Number(n)) => s
                        .chars()
                        .nth(*n as usize)
                        .map_or(Value::Null, |c| Value::Text(c.to_string())),
                    (_, Value::Text(key)) => member(&of, key),
                    _ => Value::Null,
                }
            }
            Expr::Call(name, args) => super::func::call(self, name, args)?,
            Expr::Not(a) => Value::Bool(!self.eval(a)?.is_truthy()),
            Expr::Neg(a) => match self.eval(a)? {
                Value::Number(n) => Value::Number(-n),
                Value::Duration(d) => Value::Duration(d.neg()),
                Value::Null => Value::Null,
                other => return Err(format!("a {} cannot be negated", other.kind()).into()),
            },
            Expr::Bin(BinOp::And, a, b) => Value::Bool(self.eval(a)?.is_truthy() && self.eval(b)?.is_truthy()),
            Expr::Bin(BinOp::Or, a, b) => Value::Bool(self.eval(a)?.is_truthy() || self.eval(b)?.is_truthy()),
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                binary(*op, &a, &b)?
            }
            Expr::List(items) => Value::List(items.iter().map(|i| self.eval(i)).collect::<Result<_, _>>()?),
            Expr::Object(fields) => Value::object(
                fields
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.eval(v)?)))
                    .collect::<Result<_, EvalError>>()?,
            ),
            Expr::Lambda(l) => Value::Lambda(l.clone()),
        })
    }

    fn field(&self, name: &str) -> Value {
        if let Some((_, v)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            return v.clone();
        }
        if name == "this" {
            return self.this.cloned().unwrap_or(Value::Null);
        }
        member(self.row, name)
    }

    /// Calls a lambda with these arguments.
    pub(crate) fn apply(&mut self, f: &Lambda, args: Vec<Value>) -> Fallible {
        let depth = self.locals.len();
        for (p, a) in f.params.iter().zip(args) {
            self.locals.push((p.clone(), a));
        }
        let out = self.eval(&f.body);
        self.locals.truncate(depth);
        out
    }
}

fn element(l: &[Value], n: f64) -> Value {
    let i = if n < 0.0 { l.len() as f64 + n } else { n };
    if i < 0.0 {
        return Value::Null;
    }
    l.get(i as usize).cloned().unwrap_or(Value::Null)
}

/// `of.name`: an object's field (as written, else by its plain form), the list of a list's elements' fields, a
/// date's or a duration's part.
pub(crate) fn member(of: &Value, name: &str) -> Value {
    match of {
        Value::Object(o) => o.get(name).cloned().unwrap_or_else(|| {
            let key = crate::structure::field_key(name);
            match o
                .iter()
                .find(|(k, _)| !k.starts_with(super::value::HIDDEN) && crate::structure::field_key(k) == key)
            {
                Some((_, v)) => v.clone(),
                // A task's name it does not have is its note's.
                None => o
                    .get(super::value::PAGE_KEY)
                    .map_or(Value::Null, |page| member(page, name)),
            }
        }),
        Value::List(l) => {
            let mut out = Vec::with_capacity(l.len());
            for v in l {
                match member(v, name) {
                    Value::List(inner) => out.extend(inner),
                    other => out.push(other),
                }
            }
            Value::List(out)
        }
        Value::Date(d) => match name {
            "year" => Value::Number(f64::from(d.year())),
            "month" => Value::Number(f64::from(d.month())),
            "day" => Value::Number(f64::from(d.day())),
            "hour" => Value::Number(f64::from(d.hour())),
            "minute" => Value::Number(f64::from(d.minute())),
            "second" => Value::Number(f64::from(d.second())),
            "millisecond" => Value::Number(f64::from(d.millisecond())),
            "weekday" => Value::Number(f64::from(d.weekday().to_monday_one_offset())),
            "week" | "weeknumber" => Value::Number(f64::from(d.date().iso_week_date().week())),
            "weekyear" => Value::Number(f64::from(d.date().iso_week_date().year())),
            _ => Value::Null,
        },
        Value::Duration(d) => {
            let ms = d.approx_millis() as f64;
            let n = match name {
                "years" => d.months as f64 / 12.0 + d.millis as f64 / (365.0 * 86_400_000.0),
                "months" => d.months as f64 + d.millis as f64 / (30.0 * 86_400_000.0),
                "weeks" => ms / (7.0 * 86_400_000.0),
                "days" => ms / 86_400_000.0,
                "hours" => ms / 3_600_000.0,
                "minutes" => ms / 60_000.0,
                "seconds" => ms / 1000.0,
                "milliseconds" => ms,
                _ => return Value::Null,
            };
            Value::Number(n)
        }
        _ => Value::Null,
    }
}

/// `a op b` for the operators that are not `and`/`or`.
pub(crate) fn binary(op: BinOp, a: &Value, b: &Value) -> Fallible {
    use Value::{Date, Duration as Dur, List, Null, Number, Text};
    let ord = || a.compare(b);
    Ok(match op {
        BinOp::Eq => Value::Bool(ord() == Ordering::Equal),
        BinOp::Ne => Value::Bool(ord() != Ordering::Equal),
        BinOp::Lt => Value::Bool(ord() == Ordering::Less),
        BinOp::Le => Value::Bool(ord() != Ordering::Greater),
        BinOp::Gt => Value::Bool(ord() == Ordering::Greater),
        BinOp::Ge => Value::Bool(ord() != Ordering::Less),
        BinOp::And | BinOp::Or => unreachable!("evaluated lazily"),
        _ if matches!(a, Null) || matches!(b, Null) => Null,
        BinOp::Add => match (a, b) {
            (Number(x), Number(y)) => Number(x + y),
            (Text(x), y) => Text(format!("{x}{}", y.display())),
            (x, Text(y)) => Text(format!("{}{y}", x.display())),
            (Date(d), Dur(u)) | (Dur(u), Date(d)) => date_plus(*d, *u).map_or(Null, Date),
            (Dur(x), Dur(y)) => Dur(x.add(*y)),
            (List(x), List(y)) => List(x.iter().chain(y).cloned().collect()),
            _ => return Err(unsupported("+", a, b).into()),
        },
        BinOp::Sub => match (a, b) {
            (Number(x), Number(y)) => Number(x - y),
            (Date(d), Dur(u)) => date_plus(*d, u.neg()).map_or(Null, Date),
            (Date(x), Date(y)) => Dur(date_minus(*x, *y)),
            (Dur(x), Dur(y)) => Dur(x.add(y.neg())),
            _ => return Err(unsupported("-", a, b).into()),
        },
        BinOp::Mul => match (a, b) {
            (Number(x), Number(y)) => Number(x * y),
            (Dur(d), Number(n)) | (Number(n), Dur(d)) => Dur(d.scale(*n)),
            // At most a megabyte of text: `"x" * 10000 * 10000` is refused, not a machine's memory.
            (Text(s), Number(n)) if *n >= 0.0 && s.len() as f64 * n.floor() <= 1_048_576.0 => {
                Text(s.repeat(*n as usize))
            }
            _ => return Err(unsupported("*", a, b).into()),
        },
        BinOp::Div => match (a, b) {
            (Number(_), Number(y)) if *y == 0.0 => Null,
            (Number(x), Number(y)) => Number(x / y),
            (Dur(d), Number(n)) if *n != 0.0 => Dur(d.scale(1.0 / n)),
            (Dur(x), Dur(y)) if y.approx_millis() != 0 => Number(x.approx_millis() as f64 / y.approx_millis() as f64),
            _ => return Err(unsupported("/", a, b).into()),
        },
        BinOp::Rem => match (a, b) {
            (Number(_), Number(y)) if *y == 0.0 => Null,
            (Number(x), Number(y)) => Number(x % y),
            _ => return Err(unsupported("%", a, b).into()),
        },
    })
}

fn unsupported(op: &str, a: &Value, b: &Value) -> String {
    format!("`{op}` does not apply to a {} and a {}", a.kind(), b.kind())
}
