//! The functions a query can call, as Dataview names them.

use std::cmp::Ordering;

use super::eval::{Env, EvalError, Fallible};
use super::literal;
use super::parse::Expr;
use super::value::{Link, Value};

/// Calls `name` with these (unevaluated) arguments.
pub(crate) fn call(env: &mut Env<'_>, name: &str, args: &[Expr]) -> Fallible {
    // `default` and `choice` look only at what they need.
    if name == "choice" {
        let [c, a, b] = args else {
            return Err(arity(name, "3").into());
        };
        let pick = if env.eval(c)?.is_truthy() { a } else { b };
        return env.eval(pick);
    }
    let v: Vec<Value> = args.iter().map(|a| env.eval(a)).collect::<Result<_, _>>()?;
    use Value::{Bool, Date, List, Null, Number, Text};
    Ok(match (name, v.as_slice()) {
        ("date", [Text(s)]) => literal::named(s, env.now)
            .or_else(|| literal::iso(s))
            .map_or(Null, Date),
        ("date", [Date(d)]) => Date(*d),
        ("date", [Value::Link(l)]) => literal::iso(&l.target).map_or(Null, Date),
        ("date", [Text(s), Text(_)]) => literal::iso(s).map_or(Null, Date),
        ("date", [_]) => Null,
        ("dur", [Text(s)]) => literal::duration(s).map_or(Null, Value::Duration),
        ("dur", [d @ Value::Duration(_)]) => d.clone(),
        ("dur", [_]) => Null,
        ("number", [Number(n)]) => Number(*n),
        ("number", [Text(s)]) => first_number(s).map_or(Null, Number),
        ("number", [_]) => Null,
        ("string", [x]) => Text(x.display()),
        ("display", [x]) => Text(x.display()),
        ("typeof", [x]) => Text(x.kind().to_owned()),
        ("link", [Text(t)]) => link(t, None),
        ("link", [Text(t), Text(d)]) => link(t, Some(d.clone())),
        ("link", [l @ Value::Link(_)]) => l.clone(),
        ("list" | "array", items) => List(items.to_vec()),
        ("object", kv) if kv.len().is_multiple_of(2) => {
            let mut o = std::collections::BTreeMap::new();
            for pair in kv.chunks(2) {
                let Text(k) = &pair[0] else {
                    return Err("object() takes names as text".into());
                };
                o.insert(k.clone(), pair[1].clone());
            }
            Value::object(o)
        }
        ("round", [Number(n)]) => Number(n.round()),
        ("round", [Number(n), Number(d)]) => {
            let f = 10f64.powi(*d as i32);
            Number((n * f).round() / f)
        }
        ("trunc", [Number(n)]) => Number(n.trunc()),
        ("floor", [Number(n)]) => Number(n.floor()),
        ("ceil", [Number(n)]) => Number(n.ceil()),
        ("abs", [Number(n)]) => Number(n.abs()),
        ("round" | "trunc" | "floor" | "ceil" | "abs", [Null, ..]) => Null,
        ("min", [List(l)]) => l.iter().min_by(|a, b| a.compare(b)).cloned().unwrap_or(Null),
        ("max", [List(l)]) => l.iter().max_by(|a, b| a.compare(b)).cloned().unwrap_or(Null),
        ("min", l) => l.iter().min_by(|a, b| a.compare(b)).cloned().unwrap_or(Null),
        ("max", l) => l.iter().max_by(|a, b| a.compare(b)).cloned().unwrap_or(Null),
        ("sum", [List(l)]) => fold(l, |a, b| super::eval::binary(super::parse::BinOp::Add, &a, b))?,
        ("product", [List(l)]) => fold(l, |a, b| super::eval::binary(super::parse::BinOp::Mul, &a, b))?,
        ("average", [List(l)]) => {
            let nums: Vec<f64> = l
                .iter()
                .filter_map(|v| if let Number(n) = v { Some(*n) } else { None })
                .collect();
            if nums.is_empty() {
                Null
            } else {
                Number(nums.iter().sum::<f64>() / nums.len() as f64)
            }
        }
        ("sum" | "product" | "average", _) => Null,
        ("minby" | "maxby", [List(l), Value::Lambda(f)]) => {
            let mut best: Option<(Value, Value)> = None;
            for item in l {
                let key = env.apply(f, vec![item.clone()])?;
                let better = best.as_ref().is_none_or(|(k, _)| {
                    let o = key.compare(k);
                    if name == "minby" {
                        o == Ordering::Less
                    } else {
                        o == Ordering::Greater
                    }
                });
                if better {
                    best = Some((key, item.clone()));
                }
            }
            best.map_or(Null, |(_, v)| v)
        }
        ("contains", [a, b]) => Bool(contains(a, b, false, false)),
        ("icontains", [a, b]) => Bool(contains(a, b, true, false)),
        ("econtains", [a, b]) => Bool(contains(a, b, false, true)),
        ("containsword", [a, Text(w)]) => Bool(containsword(a, w)),
        ("length", [List(l)]) => Number(l.len() as f64),
        ("length", [Text(s)]) => Number(s.chars().count() as f64),
        ("length", [Value::Object(o)]) => Number(o.len() as f64),
        ("length", [_]) => Number(0.0),
        ("default", [List(l), d]) => List(
            l.iter()
                .map(|x| if matches!(x, Null) { d.clone() } else { x.clone() })
                .collect(),
        ),
        ("default" | "ldefault", [Null, d]) => d.clone(),
        ("default" | "ldefault", [x, _]) => x.clone(),
        ("nonnull", [List(l)]) => List(l.iter().filter(|x| !matches!(x, Null)).cloned().collect()),
        ("nonnull", items) => List(items.iter().filter(|x| !matches!(x, Null)).cloned().collect()),
        ("firstvalue", [List(l)]) => l.iter().find(|x| !matches!(x, Null)).cloned().unwrap_or(Null),
        ("filter" | "map" | "reduce" | "all" | "any" | "none" | "minby" | "maxby", [Null, _]) => Null,
        ("all" | "any" | "none", [List(l), Value::Lambda(f)]) => {
            let mut hits = 0;
            for item in l {
                if env.apply(f, vec![item.clone()])?.is_truthy() {
                    hits += 1;
                }
            }
            Bool(match name {
                "all" => hits == l.len(),
                "any" => hits > 0,
                _ => hits == 0,
            })
        }
        ("all", [List(l)]) => Bool(l.iter().all(Value::is_truthy)),
        ("any", [List(l)]) => Bool(l.iter().any(Value::is_truthy)),
        ("none", [List(l)]) => Bool(!l.iter().any(Value::is_truthy)),
        ("all", items) => Bool(items.iter().all(Value::is_truthy)),
        ("any", items) => Bool(items.iter().any(Value::is_truthy)),
        ("filter", [List(l), Value::Lambda(f)]) => {
            let mut out = Vec::new();
            for item in l {
                if env.apply(f, vec![item.clone()])?.is_truthy() {
                    out.push(item.clone());
                }
            }
            List(out)
        }
        ("map", [List(l), Value::Lambda(f)]) => List(
            l.iter()
                .map(|item| env.apply(f, vec![item.clone()]))
                .collect::<Result<_, _>>()?,
        ),
        ("reduce", [List(l), Value::Lambda(f)]) => {
            let mut it = l.iter().cloned();
            let Some(mut acc) = it.next() else { return Ok(Null) };
            for item in it {
                acc = env.apply(f, vec![acc, item])?;
            }
            acc
        }
        ("sort", [List(l)]) => {
            let mut l = l.clone();
            l.sort_by(Value::compare);
            List(l)
        }
        ("sort", [List(l), Value::Lambda(f)]) => {
            let mut keyed: Vec<(Value, Value)> = l
                .iter()
                .map(|x| Ok((env.apply(f, vec![x.clone()])?, x.clone())))
                .collect::<Result<_, EvalError>>()?;
            keyed.sort_by(|a, b| a.0.compare(&b.0));
            List(keyed.into_iter().map(|(_, v)| v).collect())
        }
        ("reverse", [List(l)]) => List(l.iter().rev().cloned().collect()),
        ("reverse", [Text(s)]) => Text(s.chars().rev().collect()),
        ("unique", [List(l)]) => {
            let mut out: Vec<Value> = Vec::new();
            for x in l {
                if !out.iter().any(|y| y.compare(x) == Ordering::Equal) {
                    out.push(x.clone());
                }
            }
            List(out)
        }
        ("flat", [List(l)]) => List(flat(l, 1)),
        ("flat", [List(l), Number(d)]) => List(flat(l, *d as usize)),
        ("slice", [List(l), rest @ ..]) => {
            let n = l.len() as i64;
            let at = |v: Option<&Value>, dflt: i64| match v {
                Some(Number(x)) => {
                    let x = *x as i64;
                    (if x < 0 { n + x } else { x }).clamp(0, n)
                }
                _ => dflt,
            };
            let (s, e) = (at(rest.first(), 0), at(rest.get(1), n));
            List(if s < e {
                l[s as usize..e as usize].to_vec()
            } else {
                Vec::new()
            })
        }
        ("join", [List(l)]) => Text(l.iter().map(Value::display).collect::<Vec<_>>().join(", ")),
        ("join", [List(l), Text(sep)]) => Text(l.iter().map(Value::display).collect::<Vec<_>>().join(sep)),
        ("join", [x, ..]) => Text(x.display()),
        ("extract", [Value::Object(o), keys @ ..]) => Value::object(
            keys.iter()
                .filter_map(|k| {
                    if let Text(k) = k {
                        o.get(k).map(|v| (k.clone(), v.clone()))
                    } else {
                        None
                    }
                })
                .collect(),
        ),
        ("lower", [Text(s)]) => Text(s.to_lowercase()),
        ("upper", [Text(s)]) => Text(s.to_uppercase()),
        ("replace", [Text(s), Text(a), Text(b)]) => Text(s.replace(a.as_str(), b)),
        ("startswith", [Text(s), Text(p)]) => Bool(s.starts_with(p.as_str())),
        ("endswith", [Text(s), Text(p)]) => Bool(s.ends_with(p.as_str())),
        ("padleft" | "padright", [Text(s), Number(n), rest @ ..]) => {
            let pad = match rest.first() {
                Some(Text(p)) if !p.is_empty() => p.clone(),
                _ => " ".to_owned(),
            };
            let missing = (*n as usize).min(10_000).saturating_sub(s.chars().count());
            let fill: String = pad.chars().cycle().take(missing).collect();
            Text(if name == "padleft" {
                format!("{fill}{s}")
            } else {
                format!("{s}{fill}")
            })
        }
        ("substring", [Text(s), Number(a), rest @ ..]) => {
            let chars: Vec<char> = s.chars().collect();
            let end = match rest.first() {
                Some(Number(e)) => (*e as usize).min(chars.len()),
                _ => chars.len(),
            };
            let start = (*a as usize).min(end);
            Text(chars[start..end].iter().collect())
        }
        ("truncate", [Text(s), Number(n), rest @ ..]) => {
            let suffix = match rest.first() {
                Some(Text(x)) => x.clone(),
                _ => "...".to_owned(),
            };
            let n = *n as usize;
            if s.chars().count() <= n {
                Text(s.clone())
            } else {
                let keep = n.saturating_sub(suffix.chars().count());
                Text(format!("{}{suffix}", s.chars().take(keep).collect::<String>()))
            }
        }
        ("split", [Text(s), Text(sep), rest @ ..]) => {
            let re = regex(sep)?;
            let limit = match rest.first() {
                Some(Number(n)) => *n as usize,
                _ => usize::MAX,
            };
            List(re.split(s).take(limit).map(|p| Text(p.to_owned())).collect())
        }
        ("regextest", [Text(p), Text(s)]) => Bool(regex(p)?.is_match(s)),
        ("regexmatch", [Text(p), Text(s)]) => Bool(regex(&format!("^(?:{p})$"))?.is_match(s)),
        ("regexreplace", [Text(s), Text(p), Text(r)]) => Text(regex(p)?.replace_all(s, r.as_str()).into_owned()),
        ("striptime", [Date(d)]) => Value::date(d.date()),
        ("dateformat", [Date(d), Text(f)]) => Text(dateformat(*d, f)),
        ("durationformat", [Value::Duration(d), Text(_)]) => Text(d.describe()),
        (
            "lower" | "upper" | "replace" | "startswith" | "endswith" | "padleft" | "padright" | "substring"
            | "truncate" | "split" | "regextest" | "regexmatch" | "regexreplace" | "striptime" | "dateformat"
            | "durationformat" | "containsword" | "reverse" | "sort" | "unique" | "flat" | "slice" | "extract",
            _,
        ) => Null,
        _ if known(name) => return Err(format!("{name}() does not take {}", kinds(&v)).into()),
        _ => return Err(format!("no function is called {name}()").into()),
    })
}

fn arity(name: &str, n: &str) -> String {
    format!("{name}() takes {n} arguments")
}

fn kinds(v: &[Value]) -> String {
    if v.is_empty() {
        return "no arguments".to_owned();
    }
    v.iter().map(Value::kind).collect::<Vec<_>>().join(", ")
}

/// Every function's name, for telling a wrong argument from a wrong name.
const KNOWN: &[&str] = &[
    "date",
    "dur",
    "number",
    "string",
    "display",
    "typeof",
    "link",
    "list",
    "array",
    "object",
    "round",
    "trunc",
    "floor",
    "ceil",
    "abs",
    "min",
    "max",
    "sum",
    "product",
    "average",
    "minby",
    "maxby",
    "contains",
    "icontains",
    "econtains",
    "containsword",
    "length",
    "default",
    "ldefault",
    "nonnull",
    "firstvalue",
    "all",
    "any",
    "none",
    "filter",
    "map",
    "reduce",
    "sort",
    "reverse",
    "unique",
    "flat",
    "slice",
    "join",
    "extract",
    "lower",
    "upper",
    "replace",
    "startswith",
    "endswith",
    "padleft",
    "padright",
    "substring",
    "truncate",
    "split",
    "regextest",
    "regexmatch",
    "regexreplace",
    "striptime",
    "dateformat",
    "durationformat",
    "choice",
];

/// Whether the engine has a function of this name (as a query writes it, lower case).
pub fn known(name: &str) -> bool {
    KNOWN.contains(&name)
}

fn link(target: &str, display: Option<String>) -> Value {
    Value::Link(Link {
        target: target.trim_end_matches(".md").to_owned(),
        note_id: None,
        display,
    })
}

fn first_number(s: &str) -> Option<f64> {
    let start = s.find(|c: char| c.is_ascii_digit() || c == '-')?;
    let rest = &s[start..];
    let end = rest
        .char_indices()
        .skip(1)
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

fn fold(l: &[Value], f: impl Fn(Value, &Value) -> Fallible) -> Fallible {
    let mut it = l.iter().filter(|v| !matches!(v, Value::Null));
    let Some(first) = it.next() else { return Ok(Value::Null) };
    it.try_fold(first.clone(), f)
}

fn flat(l: &[Value], depth: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for v in l {
        match v {
            Value::List(inner) if depth > 0 => out.extend(flat(inner, depth - 1)),
            other => out.push(other.clone()),
        }
    }
    out
}

/// Dataview's `contains`: text in text, an element (or, unless `exact`, text inside an element) of a list, a key
/// of an object, a link's target.
fn contains(hay: &Value, needle: &Value, fold_case: bool, exact: bool) -> bool {
    match (hay, needle) {
        (Value::Text(h), Value::Text(n)) => {
            if fold_case {
                h.to_lowercase().contains(&n.to_lowercase())
            } else {
                h.contains(n.as_str())
            }
        }
        (Value::List(l), n) => l.iter().any(|e| {
            if exact {
                e.compare(n) == Ordering::Equal
            } else {
                e.compare(n) == Ordering::Equal || contains(e, n, fold_case, false)
            }
        }),
        (Value::Object(o), Value::Text(k)) => o.contains_key(k),
        (Value::Link(a), Value::Link(b)) => {
            a.target.eq_ignore_ascii_case(&b.target) || (a.note_id.is_some() && a.note_id == b.note_id)
        }
        (Value::Link(a), Value::Text(t)) => contains(
            &Value::Text(a.target.clone()),
            &Value::Text(t.clone()),
            fold_case,
            exact,
        ),
        (a, b) => a.compare(b) == Ordering::Equal && !matches!(a, Value::Null),
    }
}

fn containsword(hay: &Value, word: &str) -> bool {
    match hay {
        Value::Text(s) => {
            let w = word.to_lowercase();
            s.to_lowercase().split(|c: char| !c.is_alphanumeric()).any(|x| x == w)
        }
        Value::List(l) => l.iter().any(|e| containsword(e, word)),
        _ => false,
    }
}

fn regex(pattern: &str) -> Result<regex::Regex, EvalError> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| EvalError(format!("the pattern `{pattern}` is not one: {e}")))
}

/// Luxon's common date tokens: `yyyy`, `yy`, `MMMM`, `MMM`, `MM`, `M`, `dd`, `d`, `EEEE`, `EEE`, `HH`, `H`, `mm`,
/// `ss`, `WW`, text in single quotes kept as written.
fn dateformat(d: jiff::civil::DateTime, f: &str) -> String {
    const TOKENS: &[&str] = &[
        "yyyy", "yy", "MMMM", "MMM", "MM", "M", "dd", "d", "EEEE", "EEE", "HH", "H", "mm", "ss", "WW",
    ];
    let mut out = String::new();
    let mut rest = f;
    while !rest.is_empty() {
        if let Some(q) = rest.strip_prefix('\'') {
            let end = q.find('\'').unwrap_or(q.len());
            out.push_str(&q[..end]);
            rest = q.get(end + 1..).unwrap_or("");
            continue;
        }
        if let Some(t) = TOKENS.iter().find(|t| rest.starts_with(**t)) {
            out.push_str(&match *t {
                "yyyy" => format!("{:04}", d.year()),
                "yy" => format!("{:02}", d.year() % 100),
                "MMMM" => d.strftime("%B").to_string(),
                "MMM" => d.strftime("%b").to_string(),
                "MM" => format!("{:02}", d.month()),
                "M" => d.month().to_string(),
                "dd" => format!("{:02}", d.day()),
                "d" => d.day().to_string(),
                "EEEE" => d.strftime("%A").to_string(),
                "EEE" => d.strftime("%a").to_string(),
                "HH" => format!("{:02}", d.hour()),
                "H" => d.hour().to_string(),
                "mm" => format!("{:02}", d.minute()),
                "ss" => format!("{:02}", d.second()),
                _ => format!("{:02}", d.date().iso_week_date().week()),
            });
            rest = &rest[t.len()..];
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}
