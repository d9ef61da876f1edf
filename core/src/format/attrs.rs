//! Attribute values and fill values ↔ JSON (nczarr-format.md §5.6, §7).

use crate::error::{Kind, Result, err};
use crate::json::{INF_MARK, NAN_MARK, NINF_MARK, char_text, f32_value, f64_value, int_of, special_float, text_bytes, unmark};
use crate::model::Att;
use crate::nc::types::NcType;
use crate::nc::values::{Scalar, Values, convert_scalar};
use serde_json::Value;

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// One JSON element as a number, if it is one (or a special-float string, or a bool).
fn scalar_of(v: &Value) -> Option<Scalar> {
    match v {
        Value::Number(n) => match int_of(n) {
            Some(i) => Some(Scalar::Int(i)),
            None => n.as_f64().map(Scalar::F64),
        },
        Value::String(s) => special_float(s).map(Scalar::F64).or_else(|| s.trim().parse::<i128>().ok().map(Scalar::Int)),
        Value::Bool(b) => Some(Scalar::Int(*b as i128)),
        _ => None,
    }
}

fn elements(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    }
}

/// Converts a JSON attribute value to the recorded netCDF type.
pub(crate) fn typed(v: &Value, t: NcType) -> Result<(Values, Option<Value>)> {
    match t {
        NcType::Char => Ok(match v {
            Value::String(s) => (Values::Char(text_bytes(unmark(s))), None),
            Value::Number(n) => (Values::Char(n.to_string().into_bytes()), None),
            Value::Null => (Values::Char(Vec::new()), None),
            other => (Values::Char(compact(other).into_bytes()), Some(other.clone())),
        }),
        NcType::String => {
            let items: Vec<Option<String>> = elements(v)
                .into_iter()
                .map(|e| match e {
                    Value::String(s) => Some(unmark(s).to_string()),
                    Value::Null => Some(String::new()),
                    other => Some(compact(other)),
                })
                .collect();
            Ok((Values::Str(items), None))
        }
        _ => {
            let mut out = Vec::new();
            for e in elements(v) {
                if let Some(bits) = float_bits(e, t) {
                    out.push(bits);
                    continue;
                }
                let s = scalar_of(e)
                    .ok_or_else(|| crate::error::Error::new(Kind::NcZarr, format!("attribute value {e} is not a {}", t.name())))?;
                out.push(Values::from_scalars(t, std::iter::once(convert_scalar(s, t).0)));
            }
            // Element by element, so hex-spelled NaNs keep their bits exactly.
            Ok((Values::concat(t, out), None))
        }
    }
}

/// D3 (nczarr-format.md): an array without NCZarr attributes declares its fill only in its
/// metadata's `fill_value`; CF clients should see it as `_FillValue` (read-only, synthetic: never
/// written back unless the user sets it). Zarr v2 and v3 arrays behave the same. An empty
/// string fill (zarr-python's default for strings) is not shown.
pub(crate) fn add_declared_fill(atts: &mut Vec<Att>, fill: Option<&Values>) {
    if atts.iter().any(|a| a.name == "_FillValue") {
        return;
    }
    if let Some(f) = fill
        && (f.nctype() != NcType::String || f != &Values::Str(vec![Some(String::new())]))
    {
        atts.push(Att { name: "_FillValue".into(), value: f.clone(), json: None, synthetic: true });
    }
}

/// Infers the netCDF type of an untyped (pure Zarr) attribute. `None`: skip it (`[]`).
pub(crate) fn inferred(v: &Value) -> Option<(Values, Option<Value>)> {
    let items = match v {
        Value::Array(items) => items.as_slice(),
        Value::String(s) if special_float(s).is_some() && s.starts_with('\0') => {
            return Some((Values::Double(vec![special_float(s)?]), None));
        }
        Value::String(s) => return Some((Values::Char(text_bytes(s)), None)),
        Value::Number(_) | Value::Bool(_) => std::slice::from_ref(v),
        other => return Some((Values::Char(compact(other).into_bytes()), Some(other.clone()))),
    };
    if items.is_empty() {
        return None;
    }
    if items.iter().all(|e| matches!(e, Value::String(s) if ![NAN_MARK, INF_MARK, NINF_MARK].contains(&s.as_str()))) {
        return Some((Values::Str(items.iter().map(|e| e.as_str().map(str::to_string)).collect()), None));
    }
    if items.iter().all(Value::is_boolean) {
        return Some((Values::UByte(items.iter().map(|e| e.as_bool() == Some(true)).map(u8::from).collect()), None));
    }
    let scalars: Option<Vec<Scalar>> = items
        .iter()
        .map(|e| match e {
            Value::Number(_) => scalar_of(e),
            Value::String(s) if s.starts_with('\0') => special_float(s).map(Scalar::F64),
            _ => None,
        })
        .collect();
    let Some(scalars) = scalars else {
        return Some((Values::Char(compact(v).into_bytes()), Some(v.clone())));
    };
    let ints: Option<Vec<i128>> = scalars.iter().map(|s| if let Scalar::Int(i) = s { Some(*i) } else { None }).collect();
    let t = match ints {
        None => NcType::Double,
        Some(ints) => {
            let (lo, hi) = (ints.iter().min().copied().unwrap_or(0), ints.iter().max().copied().unwrap_or(0));
            if lo >= i32::MIN as i128 && hi <= i32::MAX as i128 {
                NcType::Int
            } else if lo >= 0 && hi <= u32::MAX as i128 {
                NcType::UInt
            } else if lo >= i64::MIN as i128 && hi <= i64::MAX as i128 {
                NcType::Int64
            } else if lo >= 0 && hi <= u64::MAX as i128 {
                NcType::UInt64
            } else {
                NcType::Double
            }
        }
    };
    Some((Values::from_scalars(t, scalars.into_iter().map(|s| convert_scalar(s, t).0)), None))
}

/// A NaN with a payload (not the canonical quiet NaN) has no JSON or Zarr v2 spelling: it is
/// written as its bits in hex (`"0x7fc00123"`, v3's spelling of float fills), which `typed`
/// reads back for float attributes. Canonical NaNs stay `"NaN"`, readable by everyone.
fn nan_bits_f32(v: f32) -> Option<Value> {
    (v.is_nan() && v.to_bits() != f32::NAN.to_bits()).then(|| Value::String(format!("0x{:08x}", v.to_bits())))
}

fn nan_bits_f64(v: f64) -> Option<Value> {
    (v.is_nan() && v.to_bits() != f64::NAN.to_bits()).then(|| Value::String(format!("0x{:016x}", v.to_bits())))
}

/// A float attribute element written as hex bits (see `nan_bits_f32`).
fn float_bits(v: &Value, t: NcType) -> Option<Values> {
    let digits = v.as_str()?.strip_prefix("0x")?;
    match (t, digits.len()) {
        (NcType::Float, 8) => Some(Values::Float(vec![f32::from_bits(u32::from_str_radix(digits, 16).ok()?)])),
        (NcType::Double, 16) => Some(Values::Double(vec![f64::from_bits(u64::from_str_radix(digits, 16).ok()?)])),
        _ => None,
    }
}

fn element_json(values: &Values, i: usize) -> Value {
    match values {
        Values::Float(x) => nan_bits_f32(x[i]).unwrap_or_else(|| f32_value(x[i])),
        Values::Double(x) => nan_bits_f64(x[i]).unwrap_or_else(|| f64_value(x[i])),
        Values::Byte(x) => x[i].into(),
        Values::Short(x) => x[i].into(),
        Values::Int(x) => x[i].into(),
        Values::UByte(x) => x[i].into(),
        Values::UShort(x) => x[i].into(),
        Values::UInt(x) => x[i].into(),
        Values::Int64(x) => x[i].into(),
        Values::UInt64(x) => x[i].into(),
        Values::Str(x) => Value::String(x[i].clone().unwrap_or_default()),
        Values::Char(x) => Value::String(String::from_utf8_lossy(&x[i..i + 1]).into_owned()),
    }
}

/// The JSON we write for an attribute: C4 (char is always a string), scalars unwrapped.
pub fn render(att: &Att) -> Value {
    if let Some(raw) = &att.json {
        return raw.clone();
    }
    match &att.value {
        Values::Char(bytes) => Value::String(char_text(bytes).0),
        values if values.len() == 1 => element_json(values, 0),
        values => Value::Array((0..values.len()).map(|i| element_json(values, i)).collect()),
    }
}

/// The char attributes `render` writes as Latin-1 text (their bytes are not UTF-8): NCZarr
/// metadata lists them (`latin1` beside the attribute types) so `restore_latin1` gets the exact
/// bytes back. netcdf-c reads such text as its UTF-8 bytes; zarr-python and xarray as the
/// Latin-1 string.
pub(crate) fn latin1_names(atts: &[Att]) -> Vec<&str> {
    atts.iter()
        .filter(|a| !a.synthetic && a.json.is_none() && matches!(&a.value, Values::Char(b) if char_text(b).1))
        .map(|a| a.name.as_str())
        .collect()
}

/// The `latin1` list of an NCZarr attribute-types object.
pub(crate) fn latin1_list(attr_meta: Option<&Value>) -> Vec<String> {
    attr_meta
        .and_then(|m| m.get("latin1"))
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Gives the attributes `latin1` names their bytes back (see `latin1_names`).
pub(crate) fn restore_latin1(atts: &mut [Att], latin1: &[String], raw: impl Fn(&str) -> Option<String>) {
    for att in atts.iter_mut().filter(|a| latin1.contains(&a.name)) {
        if let (Values::Char(_), Some(text)) = (&att.value, raw(&att.name)) {
            att.value = Values::Char(crate::json::latin1_bytes(&text));
        }
    }
}

/// `.zarray` `fill_value` for a one-element fill (C3, C10).
pub(crate) fn render_fill(fill: &Values) -> Value {
    match fill {
        Values::Char(b) if b.first().copied().unwrap_or(0) == 0 => Value::String(String::new()),
        // A byte past ASCII is no one-character UTF-8 text: base64, zarr's spelling of `|S1`
        // fills, which `parse_fill` reads back.
        Values::Char(b) if b[0] >= 0x80 => Value::String(encode_base64(&b[..1])),
        Values::Char(b) => Value::String(String::from_utf8_lossy(&b[..1]).into_owned()),
        other if other.is_empty() => Value::Null,
        // v2 readers know "NaN" only: the payload travels in the `_FillValue` attribute.
        Values::Float(x) if x[0].is_nan() => f32_value(f32::NAN),
        Values::Double(x) if x[0].is_nan() => f64_value(f64::NAN),
        other => element_json(other, 0),
    }
}

/// Reads a `fill_value`. `None` is "no fill". 4.8.0 wrote one-element lists.
pub(crate) fn parse_fill(v: &Value, t: NcType) -> Result<Option<Values>> {
    let v = match v {
        Value::Array(items) if items.len() == 1 => &items[0],
        other => other,
    };
    match (v, t) {
        (Value::Null, _) => Ok(None),
        (Value::String(s), NcType::Char) => {
            let bytes = text_bytes(s);
            let byte = match bytes.len() {
                0 => 0,
                1 => bytes[0],
                _ => decode_base64(s).filter(|d| d.len() == 1).map(|d| d[0]).unwrap_or(bytes[0]),
            };
            Ok(Some(Values::Char(vec![byte])))
        }
        (Value::Number(n), NcType::Char) => Ok(Some(Values::Char(n.to_string().into_bytes()[..1].to_vec()))),
        (Value::String(s), NcType::String) => Ok(Some(Values::Str(vec![Some(unmark(s).to_string())]))),
        (_, NcType::String) => err(Kind::NcZarr, format!("fill_value {v} for a string array")),
        (Value::Number(n), NcType::Float | NcType::Double) if n.to_string() == "9.96921e+36" || n.to_string() == "9.96921e36" => {
            Ok(Some(Values::default_fill(t)))
        }
        _ => {
            let s = scalar_of(v).ok_or_else(|| crate::error::Error::new(Kind::NcZarr, format!("fill_value {v}")))?;
            if let (Scalar::F64(f), false) = (s, t.is_float())
                && (f.is_nan() || f.is_infinite() || f.fract() != 0.0)
            {
                return err(Kind::NcZarr, format!("fill_value {v} for an integer array"));
            }
            let (out, range) = convert_scalar(s, t);
            // ±Infinity is a float fill like any other (it is out of float's finite range,
            // which is what the range check is for).
            let non_finite = matches!(s, Scalar::F64(f) if !f.is_finite());
            if range && !non_finite {
                return err(Kind::NcZarr, format!("fill_value {v} out of range"));
            }
            Ok(Some(Values::from_scalars(t, std::iter::once(out))))
        }
    }
}

/// Base64 as zarr-python and xarray write it: padded, standard alphabet; trailing bits ignored.
pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true).with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    if !s.len().is_multiple_of(4) {
        return None;
    }
    LENIENT.decode(s).ok()
}

/// Padded standard base64 (the v3 spelling of float fill values).
pub(crate) fn encode_base64(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    #[test]
    fn inference() {
        let v = parse(b"[1, 2.5]", "t").unwrap();
        assert_eq!(inferred(&v).unwrap().0, Values::Double(vec![1.0, 2.5]));
        let v = parse(b"[1, 4000000000]", "t").unwrap();
        assert_eq!(inferred(&v).unwrap().0, Values::UInt(vec![1, 4000000000]));
        let v = parse(b"[\"x\", \"yy\"]", "t").unwrap();
        assert_eq!(inferred(&v).unwrap().0.nctype(), NcType::String);
        assert!(inferred(&parse(b"[]", "t").unwrap()).is_none());
        let v = parse(b"NaN", "t").unwrap();
        assert!(matches!(inferred(&v).unwrap().0, Values::Double(ref d) if d[0].is_nan()));
    }

    #[test]
    fn fills() {
        let f = parse_fill(&parse(b"9.96921e+36", "t").unwrap(), NcType::Double).unwrap().unwrap();
        assert_eq!(f, Values::default_fill(NcType::Double));
        assert!(parse_fill(&parse(b"\"abc\"", "t").unwrap(), NcType::Int).is_err());
        assert!(parse_fill(&parse(b"\"NaN\"", "t").unwrap(), NcType::Int).is_err());
        assert_eq!(parse_fill(&parse(b"[-999]", "t").unwrap(), NcType::Float).unwrap(), Some(Values::Float(vec![-999.0])));
        assert_eq!(render_fill(&Values::default_fill(NcType::Float)).to_string(), "9.96921e+36");
        // fill_inf.c: ±Infinity fills of both float types read back (they made the dataset
        // unopenable).
        for (text, want) in [("\"Infinity\"", f64::INFINITY), ("\"-Infinity\"", f64::NEG_INFINITY), ("Infinity", f64::INFINITY)] {
            let v = parse(text.as_bytes(), "t").unwrap();
            assert_eq!(parse_fill(&v, NcType::Float).unwrap(), Some(Values::Float(vec![want as f32])), "{text}");
            assert_eq!(parse_fill(&v, NcType::Double).unwrap(), Some(Values::Double(vec![want])), "{text}");
        }
    }
}
