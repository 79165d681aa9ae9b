//! Reading an export that is one JSON file (Simplenote's, Standard Notes', Roam's) an element at a time: the
//! elements of its top-level array, or of the arrays its top-level object names, each parsed, handed over and
//! dropped before the next, so reading holds one note's JSON, never the whole export's.

use std::fmt;
use std::io::BufReader;
use std::path::Path;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::source::Unread;

/// What the reader does after an element: go on, or stop (detection has seen what it needed).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    More,
    Stop,
}

/// Hands each element of the arrays named `keys` in the file's top-level object (or, with no keys, of its
/// top-level array) to `each`, with the key (empty for the top-level array) and its index in that array; returns how
/// many of `keys` the object has (1 for a top-level array). A key whose value is `null` has no elements; one whose
/// value is not an array is an error.
pub(crate) fn each_element(
    path: &Path,
    keys: &[&str],
    each: &mut dyn FnMut(&str, usize, Value) -> Next,
) -> Result<usize, Unread> {
    let file = crate::source::open_plain_file(path).map_err(|e| Unread(format!("cannot read it: {e}")))?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, file));
    let mut stopped = false;
    let mut found = 0;
    let top = Top {
        keys,
        each,
        stopped: &mut stopped,
        found: &mut found,
    };
    let wanted = if keys.is_empty() {
        "an array".to_owned()
    } else {
        format!("an object with {}", keys.join(" or "))
    };
    // Where the text stops being JSON, in a person's words (serde's "expected ident at line 1 column 2" was found
    // confusing in use).
    let broken = |e: serde_json::Error| match e.classify() {
        serde_json::error::Category::Io => Unread(format!("cannot read it: {e}")),
        serde_json::error::Category::Eof => Unread(format!("not JSON: it ends too soon (line {})", e.line())),
        _ => Unread(format!(
            "not JSON: it stops being JSON at line {}, column {}",
            e.line(),
            e.column()
        )),
    };
    match top.deserialize(&mut de) {
        Ok(()) => de.end().map(|()| found).map_err(broken),
        Err(_) if stopped => Ok(found),
        // JSON of another shape (an array where an object was wanted): said as that, not as broken JSON.
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            Err(Unread(format!("its JSON is not {wanted} ({e})")))
        }
        Err(e) => Err(broken(e)),
    }
}

/// Whether the file's top level is an object with an array under one of `keys` (or, with no keys, is an array) whose
/// first element `looks` accepts; when it has no element, `empty` (reads no further than that element).
pub(crate) fn first_element_is(path: &Path, keys: &[&str], empty: bool, looks: impl Fn(&Value) -> bool) -> bool {
    let mut first = None;
    let read = each_element(path, keys, &mut |_, _, value| {
        first = Some(looks(&value));
        Next::Stop
    });
    read.is_ok_and(|found| found > 0) && first.unwrap_or(empty)
}

struct Top<'a, 'f> {
    keys: &'a [&'a str],
    each: &'f mut dyn FnMut(&str, usize, Value) -> Next,
    stopped: &'f mut bool,
    found: &'f mut usize,
}

impl<'de> DeserializeSeed<'de> for Top<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.keys.is_empty() {
            f.write_str("an array")
        } else {
            write!(f, "an object with {}", self.keys.join(" or "))
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        if !self.keys.is_empty() {
            return Err(serde::de::Error::invalid_type(serde::de::Unexpected::Seq, &self));
        }
        *self.found = 1;
        elements(seq, "", self.each, self.stopped)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.keys.is_empty() {
            return Err(serde::de::Error::invalid_type(serde::de::Unexpected::Map, &self));
        }
        while let Some(key) = map.next_key::<String>()? {
            match self.keys.iter().find(|k| **k == key) {
                Some(key) => {
                    *self.found += 1;
                    map.next_value_seed(Array {
                        key,
                        each: &mut *self.each,
                        stopped: &mut *self.stopped,
                    })?
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The array under one key.
struct Array<'a, 'f> {
    key: &'a str,
    each: &'f mut dyn FnMut(&str, usize, Value) -> Next,
    stopped: &'f mut bool,
}

impl<'de> DeserializeSeed<'de> for Array<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Array<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array under {}", self.key)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        elements(seq, self.key, self.each, self.stopped)
    }
}

fn elements<'de, A: SeqAccess<'de>>(
    mut seq: A,
    key: &str,
    each: &mut dyn FnMut(&str, usize, Value) -> Next,
    stopped: &mut bool,
) -> Result<(), A::Error> {
    let mut i = 0;
    while let Some(value) = seq.next_element::<Value>()? {
        if each(key, i, value) == Next::Stop {
            *stopped = true;
            // Ends the parse: the caller sees `stopped` and takes it as done.
            return Err(serde::de::Error::custom("stopped"));
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(json: &str, keys: &[&str]) -> Result<Vec<(String, usize, Value)>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        std::fs::write(&path, json).unwrap();
        let mut seen = Vec::new();
        each_element(&path, keys, &mut |key, i, v| {
            seen.push((key.to_owned(), i, v));
            Next::More
        })
        .map_err(|e| e.0)?;
        Ok(seen)
    }

    #[test]
    fn elements_of_named_arrays_in_order_others_skipped() {
        let seen = collect(
            r#"{"skip": {"deep": [1, 2, {"x": "y"}]}, "b": [{"n": 1}], "a": [1, 2], "c": null}"#,
            &["a", "b", "c"],
        )
        .unwrap();
        let keys: Vec<(&str, usize)> = seen.iter().map(|(k, i, _)| (k.as_str(), *i)).collect();
        assert_eq!(keys, [("b", 0), ("a", 0), ("a", 1)]);
        assert_eq!(seen[0].2["n"], 1);
    }

    #[test]
    fn a_top_level_array_and_wrong_shapes() {
        assert_eq!(collect("[1, [2], {}]", &[]).unwrap().len(), 3);
        assert!(collect("{}", &[]).unwrap_err().starts_with("its JSON is not an array"));
        assert!(
            collect("[]", &["a"])
                .unwrap_err()
                .starts_with("its JSON is not an object with a")
        );
        assert!(collect(r#"{"a": 3}"#, &["a"]).unwrap_err().contains("an array under a"));
        assert_eq!(
            collect(r#"{"a": [1, 2"#, &["a"]).unwrap_err(),
            "not JSON: it ends too soon (line 1)"
        );
        assert_eq!(
            collect("[1] [2]", &[]).unwrap_err(),
            "not JSON: it stops being JSON at line 1, column 5"
        );
        assert_eq!(
            collect("# notes", &[]).unwrap_err(),
            "not JSON: it stops being JSON at line 1, column 1"
        );
    }

    #[test]
    fn detection_stops_at_the_first_element() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        // Broken after the first element: detection never reads that far.
        std::fs::write(&path, r#"{"items": [{"uuid": "u"}, {"#).unwrap();
        assert!(first_element_is(&path, &["items"], false, |v| v.get("uuid").is_some()));
        assert!(!first_element_is(&path, &["notes"], true, |_| true));
        std::fs::write(&path, r#"{"items": []}"#).unwrap();
        assert!(
            first_element_is(&path, &["items"], true, |_| false),
            "empty, and empty is enough"
        );
        assert!(
            !first_element_is(&path, &["items"], false, |_| true),
            "empty, and it is not"
        );
    }
}
