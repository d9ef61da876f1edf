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
pub const NAN_MARK: &str = "\u{0}NaN";
pub const INF_MARK: &str = "\u{0}Infinity";
pub const NINF_MARK: &str = "\u{0}-Infinity";

/// Largest metadata object we parse (64 MiB attributes exist in the wild).
pub const MAX_OBJECT: usize = 1 << 30;

pub fn parse(bytes: &[u8], what: &str) -> Result<Value> {
    if bytes.len() > MAX_OBJECT {
        return err(Kind::NoMem, format!("{what}: metadata object too large"));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| Error::new(Kind::NcZarr, format!("{what}: not UTF-8")))?;
    let fixed = rewrite_bare_tokens(text);
    serde_json::from_str(&fixed).map_err(|e| Error::new(Kind::NcZarr, format!("{what}: {e}")))
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
pub fn special_float(s: &str) -> Option<f64> {
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
pub fn unmark(s: &str) -> &str {
    match s {
        NAN_MARK => "NaN",
        INF_MARK => "Infinity",
        NINF_MARK => "-Infinity",
        other => other,
    }
}

/// A JSON number with exactly this text.
pub fn number_text(text: &str) -> Value {
    Number::from_str(text).map(Value::Number).unwrap_or(Value::Null)
}

pub fn f64_value(v: f64) -> Value {
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
pub fn f32_value(v: f32) -> Value {
    if !v.is_finite() {
        return f64_value(v as f64);
    }
    let mut buf = ryu::Buffer::new();
    number_text(buf.format_finite(v))
}

/// An integer JSON value, read from text so the full u64 and i64 ranges survive.
pub fn int_of(n: &Number) -> Option<i128> {
    let text = n.to_string();
    if let Ok(v) = text.parse::<i128>() {
        return Some(v);
    }
    None
}

pub fn to_bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// An integer parameter that may be written as a number or an integer-valued string
/// (netcdf-c 4.9.x wrote `"level": "4"`).
pub fn int_param(v: Option<&Value>) -> Option<i64> {
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

    #[test]
    fn bare_tokens_and_depth() {
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
}
