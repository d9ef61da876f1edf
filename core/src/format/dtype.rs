//! Zarr v2 `dtype` strings ↔ netCDF types (nczarr-format.md §6).

use crate::error::{Kind, Result, err};
use crate::model::Endian;
use crate::nc::types::NcType;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Storage {
    /// Plain numbers or chars, `item_size` bytes each.
    Plain,
    /// Fixed-width NUL-padded byte strings (`|S<n>`).
    FixedBytes(usize),
    /// NumPy unicode `<U<n>`: n UCS-4 code points.
    Utf32(usize),
    /// `|b1` booleans, surfaced as ubyte.
    Bool,
    /// `|O` object arrays (vlen-utf8 / vlen-bytes codecs).
    Object,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DType {
    pub nctype: NcType,
    pub endian: Endian,
    pub storage: Storage,
}

/// Largest fixed string width we accept (guards `|S2147483648`).
pub(crate) use crate::model::MAX_STRLEN;

/// Why a dtype could not be read: invalid (the store is corrupt) or valid Zarr that netCDF
/// cannot represent (the array is skipped, D4).
#[derive(Debug)]
pub(crate) enum Unreadable {
    Invalid(String),
    Unsupported(String),
}

pub(crate) fn parse(text: &str, char_alias: bool) -> std::result::Result<DType, Unreadable> {
    let invalid = || Unreadable::Invalid(format!("dtype {text:?}"));
    let mut chars = text.chars();
    let order = chars.next().ok_or_else(invalid)?;
    let (endian, body) = match order {
        '<' | '|' => (Endian::Little, &text[1..]),
        '>' => (Endian::Big, &text[1..]),
        c if c.is_ascii_alphabetic() => (Endian::Little, text),
        _ => return Err(invalid()),
    };
    let (kind, size) = body.split_at(body.find(|c: char| c.is_ascii_digit() || c == '[').unwrap_or(body.len()));
    let plain = |t: NcType| Ok(DType { nctype: t, endian, storage: Storage::Plain });
    match (kind, size) {
        ("i", "1") => plain(NcType::Byte),
        ("u", "1") => plain(NcType::UByte),
        ("i", "2") => plain(NcType::Short),
        ("u", "2") => plain(NcType::UShort),
        ("i", "4") => plain(NcType::Int),
        ("u", "4") => plain(NcType::UInt),
        ("i", "8") => plain(NcType::Int64),
        ("u", "8") => plain(NcType::UInt64),
        ("f", "4") => plain(NcType::Float),
        ("f", "8") => plain(NcType::Double),
        ("b", "1") => Ok(DType { nctype: NcType::UByte, endian, storage: Storage::Bool }),
        ("S", n) => {
            let n: usize = n.parse().map_err(|_| invalid())?;
            if n == 0 || n > MAX_STRLEN {
                return Err(invalid());
            }
            if n == 1 && (order == '>' || char_alias) {
                plain(NcType::Char)
            } else {
                Ok(DType { nctype: NcType::String, endian, storage: Storage::FixedBytes(n) })
            }
        }
        ("U", n) => {
            let n: usize = n.parse().map_err(|_| invalid())?;
            if n == 0 || n > MAX_STRLEN {
                return Err(invalid());
            }
            Ok(DType { nctype: NcType::String, endian, storage: Storage::Utf32(n) })
        }
        ("O", "") => Ok(DType { nctype: NcType::String, endian, storage: Storage::Object }),
        ("M" | "m", s) if s.starts_with('8') => plain(NcType::Int64),
        ("c", "8" | "16") | ("f", "2" | "16") | ("V", _) => Err(Unreadable::Unsupported(format!("dtype {text:?}"))),
        _ => Err(invalid()),
    }
}

impl DType {
    pub(crate) fn item_size(&self) -> usize {
        match self.storage {
            Storage::FixedBytes(n) => n,
            Storage::Utf32(n) => 4 * n,
            Storage::Object => 8,
            Storage::Bool => 1,
            Storage::Plain => self.nctype.size(),
        }
    }
}

/// The dtype we write for a netCDF type (C2: single bytes use `|`).
pub fn render(t: NcType, endian: Endian, maxstrlen: usize, strict_char: bool) -> String {
    let mark = if endian == Endian::Big { '>' } else { '<' };
    match t {
        NcType::Byte => "|i1".into(),
        NcType::UByte => "|u1".into(),
        NcType::Char => if strict_char { ">S1" } else { "|S1" }.into(),
        NcType::String => format!("|S{maxstrlen}"),
        NcType::Short => format!("{mark}i2"),
        NcType::UShort => format!("{mark}u2"),
        NcType::Int => format!("{mark}i4"),
        NcType::UInt => format!("{mark}u4"),
        NcType::Int64 => format!("{mark}i8"),
        NcType::UInt64 => format!("{mark}u8"),
        NcType::Float => format!("{mark}f4"),
        NcType::Double => format!("{mark}f8"),
    }
}

/// Attribute type codes in `_nczarr_attr.types` (and the numeric codes of 4.8.0's `.nczattr`).
pub(crate) fn attr_type(text: &str) -> Result<NcType> {
    if let Ok(id) = text.parse::<i32>() {
        return NcType::from_id(id).map_err(|_| crate::error::Error::new(Kind::NcZarr, format!("attribute type {text:?}")));
    }
    if text == "<U1" || text == ">U1" {
        return Ok(NcType::Char);
    }
    match parse(text, false) {
        Ok(d) if d.storage == Storage::Plain || d.storage == Storage::Bool => Ok(d.nctype),
        Ok(d) if text.ends_with("S1") && d.nctype == NcType::String => Ok(NcType::Char),
        Ok(d) => Ok(d.nctype),
        Err(_) => err(Kind::NcZarr, format!("attribute type {text:?}")),
    }
}

pub(crate) fn render_attr_type(t: NcType) -> String {
    match t {
        NcType::Char => ">S1".into(),
        NcType::String => "|S128".into(),
        other => render(other, Endian::Little, 0, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        assert_eq!(parse("<i4", false).unwrap().nctype, NcType::Int);
        assert_eq!(parse(">f8", false).unwrap().endian, Endian::Big);
        assert_eq!(parse(">S1", false).unwrap().nctype, NcType::Char);
        assert_eq!(parse("|S1", true).unwrap().nctype, NcType::Char);
        assert_eq!(parse("|S1", false).unwrap().nctype, NcType::String);
        assert_eq!(parse("|S128", false).unwrap().storage, Storage::FixedBytes(128));
        assert!(matches!(parse("<q99", false), Err(Unreadable::Invalid(_))));
        assert!(matches!(parse("|S2147483648", false), Err(Unreadable::Invalid(_))));
        assert!(matches!(parse("<c8", false), Err(Unreadable::Unsupported(_))));
        assert_eq!(attr_type("4").unwrap(), NcType::Int);
        assert_eq!(attr_type("<U1").unwrap(), NcType::Char);
        assert_eq!(attr_type(">S1").unwrap(), NcType::Char);
        assert_eq!(attr_type("|S128").unwrap(), NcType::String);
    }
}
