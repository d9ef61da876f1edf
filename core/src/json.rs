//! JSON as NCZarr and Zarr producers actually write it.
//!
//! Accepts the bare `NaN`/`Infinity`/`-Infinity` tokens that netcdf-c 4.8–4.9 and
//! zarr-python/xarray emit (not valid JSON) by rewriting them, outside strings, to marker
//! strings that only this module produces. Depth is bounded by serde_json's recursion limit,
//! so a 100 000-deep `[[[[` is an error, not a stack overflow. Numbers keep their exact text.

use crate::error::{Error, Kind, Result, err};
use serde_json::{Number, Value};
use std::str::FromStr;

/// Bare non-finite tokens become these strings (NUL cannot appear in real metadata text).
pub(crate) const NAN_MARK: &str = "\u{0}NaN";
pub(crate) const INF_MARK: &str = "\u{0}Infinity";
pub(crate) const NINF_MARK: &str = "\u{0}-Infinity";

/// Largest metadata object we parse (64 MiB attributes exist in the wild).
pub(crate) const MAX_OBJECT: usize = 1 << 30;

pub(crate) fn parse(bytes: &[u8], what: &str) -> Result<Value> {
    if bytes.len() > MAX_OBJECT {
        return err(Kind::NoMem, format!("{what}: metadata object too large"));
    }
    let decoded;
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => {
            decoded = decode_raw_bytes(bytes);
            &decoded
        }
    };
    let fixed = rewrite_bare_tokens(text);
    serde_json::from_str(&fixed).map_err(|e| Error::new(Kind::NcZarr, format!("{what}: {e}")))
}

/// netcdf-c writes NC_CHAR attribute bytes into its JSON as they are, so its metadata is not
/// always UTF-8 (Latin-1 text). Such a byte becomes the private-use character
/// `RAW_BYTE_BASE + byte`, which `text_bytes` turns back into the byte: char attributes keep
/// their exact bytes, and nothing else in a store can produce these characters.
const RAW_BYTE_BASE: u32 = 0x10_FF00;

fn decode_raw_bytes(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 16);
    loop {
        match std::str::from_utf8(bytes) {
            Ok(rest) => {
                out.push_str(rest);
                return out;
            }
            Err(e) => {
                let (good, bad) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len()).max(1);
                for &b in &bad[..n] {
                    out.push(char::from_u32(RAW_BYTE_BASE + b as u32).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                bytes = &bad[n..];
            }
        }
    }
}

/// The bytes of a JSON string holding NC_CHAR text: UTF-8, with the raw bytes of non-UTF-8
/// metadata (see `decode_raw_bytes`) restored.
pub(crate) fn text_bytes(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match (c as u32).checked_sub(RAW_BYTE_BASE) {
            Some(b @ 0x80..=0xff) => out.push(b as u8),
            _ => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// NC_CHAR bytes as JSON text: UTF-8 as it is; anything else as Latin-1 (each byte one
/// character, U+0000–U+00FF), with `true` saying so: the writer records those attributes
/// (`latin1` in `_nczarr_attr`) so the reader restores the exact bytes (`latin1_bytes`).
pub(crate) fn char_text(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(_) => (bytes.iter().map(|&b| b as char).collect(), true),
    }
}

/// The bytes `char_text` encoded as Latin-1 (a character above U+00FF was not written so,
/// and keeps its UTF-8 form).
pub(crate) fn latin1_bytes(s: &str) -> Vec<u8> {
    if s.chars().all(|c| (c as u32) <= 0xff) {
        return s.chars().map(|c| c as u8).collect();
    }
    text_bytes(s)
}

fn rewrite_bare_tokens(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let replaced = [("-Infinity", NINF_MARK), ("Infinity", INF_MARK), ("NaN", NAN_MARK)].iter().find(|(tok, _)| rest.starts_with(tok));
        if let Some((tok, mark)) = replaced {
            out.push_str(&serde_json::to_string(mark).unwrap_or_default());
            rest = &rest[tok.len()..];
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// A special float spelled as a string: the markers, zarr's "NaN"/"Infinity"/"-Infinity",
/// any case, and "-NaN".
pub(crate) fn special_float(s: &str) -> Option<f64> {
    match s {
        NAN_MARK => return Some(f64::NAN),
        INF_MARK => return Some(f64::INFINITY),
        NINF_MARK => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    match s.to_ascii_lowercase().as_str() {
        "nan" | "-nan" => Some(f64::NAN),
        "infinity" | "inf" | "+infinity" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Text of a marker string as the user would write it.
pub(crate) fn unmark(s: &str) -> &str {
    match s {
        NAN_MARK => "NaN",
        INF_MARK => "Infinity",
        NINF_MARK => "-Infinity",
        other => other,
    }
}

/// A JSON number with exactly this text.
pub(crate) fn number_text(text: &str) -> Value {
    Number::from_str(text).map(Value::Number).unwrap_or(Value::Null)
}

pub(crate) fn f64_value(v: f64) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        let mut buf = ryu::Buffer::new();
        number_text(buf.format_finite(v))
    }
}

/// Shortest text that round-trips as float32 (so 9.96921e36f stays "9.96921e+36"-short).
pub(crate) fn f32_value(v: f32) -> Value {
    if !v.is_finite() {
        return f64_value(v as f64);
    }
    let mut buf = ryu::Buffer::new();
    number_text(buf.format_finite(v))
}

/// An integer JSON value, read from text so the full u64 and i64 ranges survive.
pub(crate) fn int_of(n: &Number) -> Option<i128> {
    let text = n.to_string();
    if let Ok(v) = text.parse::<i128>() {
        return Some(v);
    }
    None
}

pub(crate) fn to_bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// A JSON object written straight to compact bytes, exactly as `to_bytes` writes the same
/// members in a `Value`: members keep their order and a repeated key replaces the earlier value
/// in place (serde_json's `Map` with `preserve_order`). No `Value` tree and no key hashing: a
/// thousand variables' metadata renders in a fraction of the time.
#[derive(Default)]
pub(crate) struct ObjectBytes<'a> {
    members: Vec<(std::borrow::Cow<'a, str>, Vec<u8>)>,
}

impl<'a> ObjectBytes<'a> {
    /// A member whose value is already JSON bytes.
    pub(crate) fn raw(&mut self, key: impl Into<std::borrow::Cow<'a, str>>, value: Vec<u8>) {
        let key = key.into();
        match self.members.iter_mut().find(|(k, _)| *k == key) {
            Some(member) => member.1 = value,
            None => self.members.push((key, value)),
        }
    }

    /// A member of any serializable value (a `Value`, a string, a list of numbers...).
    pub(crate) fn value(&mut self, key: impl Into<std::borrow::Cow<'a, str>>, value: &(impl serde::Serialize + ?Sized)) {
        self.raw(key, serde_json::to_vec(value).unwrap_or_default());
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.members.iter().any(|(k, _)| k == key)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub(crate) fn finish(self) -> Vec<u8> {
        let size: usize = self.members.iter().map(|(k, v)| k.len() + v.len() + 4).sum();
        let mut out = Vec::with_capacity(size + 2);
        out.push(b'{');
        for (i, (key, value)) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            // Writing a str into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut out, key.as_ref());
            out.push(b':');
            out.extend_from_slice(value);
        }
        out.push(b'}');
        out
    }
}

/// An integer parameter that may be written as a number or an integer-valued string
/// (netcdf-c 4.9.x wrote `"level": "4"`).
pub(crate) fn int_param(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => int_of(n).and_then(|i| i64::try_from(i).ok()).or_else(|| {
            let f = n.as_f64()?;
            (f.fract() == 0.0).then_some(f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ZARRAY: &[u8] = br#"{"zarr_format":2,"shape":[3,NaN],"dtype":"<f4","chunks":[2,2],"fill_value":-Infinity,"order":"C","compressor":{"id":"zlib","level":1},"filters":[{"id":"shuffle","elementsize":4}],"a":"\u00e9\"x"}"#;

    proptest! {
        /// Metadata JSON as hostile stores hold it: arbitrary bytes, and a real `.zarray`
        /// with bytes overwritten or cut; parsed or refused, never a panic or a deep recursion.
        #[test]
        fn fuzz_metadata_json(bytes in proptest::collection::vec(any::<u8>(), 0..1024),
                              edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8), cut in any::<usize>(), depth in 0usize..200_000) {
            let _ = parse(&bytes, "t");
            let _ = parse(&crate::bytes::mutated(ZARRAY, &edits, cut), "t");
            let deep = "[".repeat(depth);
            prop_assert!(parse(deep.as_bytes(), "t").is_err());
        }
    }

    #[test]
    fn bare_tokens_and_depth() {
        // netcdf-c's raw Latin-1 bytes in JSON text come back byte for byte.
        let v = parse(b"{\"t\": \"a\xe9z\", \"u\": \"\xc3\xa9\"}", "t").unwrap();
        assert_eq!(text_bytes(v["t"].as_str().unwrap()), b"a\xe9z");
        assert_eq!(text_bytes(v["u"].as_str().unwrap()), "é".as_bytes());
        let (text, latin1) = char_text(b"a\xe9z");
        assert!(latin1 && text == "aéz" && latin1_bytes(&text) == b"a\xe9z");
        assert_eq!(char_text("é".as_bytes()), ("é".to_string(), false));
        let v = parse(br#"{"a": NaN, "b": [-Infinity, "NaN in text"], "c": Infinity}"#, "t").unwrap();
        assert_eq!(v["a"], Value::String(NAN_MARK.into()));
        assert_eq!(v["b"][0], Value::String(NINF_MARK.into()));
        assert_eq!(v["b"][1], Value::String("NaN in text".into()));
        let deep = "[".repeat(100_000);
        assert_eq!(parse(deep.as_bytes(), "t").unwrap_err().kind, Kind::NcZarr);
        assert_eq!(parse(b"{\"a\":", "t").unwrap_err().kind, Kind::NcZarr);
    }

    #[test]
    fn exact_numbers() {
        assert_eq!(to_bytes(&f32_value(9.96921e36)), b"9.96921e+36");
        assert_eq!(to_bytes(&f64_value(9.969209968386869e36)), b"9.969209968386869e+36");
        let v = parse(b"18446744073709551614", "t").unwrap();
        assert_eq!(int_of(v.as_number().unwrap()), Some(18446744073709551614));
    }

    /// `ObjectBytes` writes what `to_bytes` writes for the same members in a `Map`: order kept,
    /// a repeated key replacing its value in place, keys escaped.
    #[test]
    fn object_bytes_match_serde_json() {
        let mut map = serde_json::Map::new();
        let mut obj = ObjectBytes::default();
        let members: [(&str, Value); 5] = [
            ("b", Value::from(1)),
            ("a \"q\"\n", Value::from("x\u{1}y")),
            ("b", Value::from(vec![1.5, 2.0])),
            ("c", serde_json::json!({"k": null})),
            ("\u{e9}", f64_value(f64::NAN)),
        ];
        for (k, v) in &members {
            map.insert(k.to_string(), v.clone());
            obj.value(*k, v);
        }
        assert!(obj.contains("c") && !obj.contains("d"));
        assert_eq!(String::from_utf8(obj.finish()).unwrap(), String::from_utf8(to_bytes(&Value::Object(map))).unwrap());
        assert_eq!(ObjectBytes::default().finish(), b"{}");
    }
}
