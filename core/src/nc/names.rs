//! netCDF name rules (c-api.md §7), applied to names from the API and from storage alike.

use crate::error::{Kind, Result, err};
use unicode_normalization::UnicodeNormalization;

pub const MAX_NAME: usize = 256;

/// Validates a name given as raw bytes and returns its NFC form, the form stored and compared.
pub(crate) fn check(raw: &[u8]) -> Result<String> {
    if raw.len() > MAX_NAME {
        return err(Kind::MaxName, "name longer than NC_MAX_NAME");
    }
    let text = std::str::from_utf8(raw).map_err(|_| crate::error::Error::new(Kind::BadName, "name is not UTF-8"))?;
    check_str(text)
}

pub(crate) fn check_str(text: &str) -> Result<String> {
    if text.len() > MAX_NAME {
        return err(Kind::MaxName, "name longer than NC_MAX_NAME");
    }
    let bad = |why: &str| err(Kind::BadName, format!("{why}: {text:?}"));
    let Some(first) = text.chars().next() else { return bad("empty name") };
    if text.contains('/') {
        return bad("name contains '/'");
    }
    if first.is_ascii() && !(first.is_ascii_alphanumeric() || first == '_') {
        return bad("bad first character");
    }
    if text.chars().any(|c| (c as u32) < 0x20 || c as u32 == 0x7f) {
        return bad("control character in name");
    }
    if text.chars().last().is_some_and(|c| c.is_ascii_whitespace()) {
        return bad("trailing whitespace");
    }
    let normal: String = text.nfc().collect();
    if normal.len() > MAX_NAME {
        return err(Kind::MaxName, "name longer than NC_MAX_NAME after normalisation");
    }
    Ok(normal)
}

/// NFC form for lookups, without validity checks (lookups of odd names just find nothing).
pub fn normalize(text: &str) -> String {
    text.nfc().collect()
}

/// A name given to a lookup (`nc_inq_varid`, `nc_inq_attid`, ...): netcdf-c cannot normalise
/// bytes that are not UTF-8 and says NC_EBADNAME; any other name is looked up as given.
pub fn lookup(raw: &[u8]) -> Result<String> {
    match std::str::from_utf8(raw) {
        Ok(text) => Ok(normalize(text)),
        Err(_) => err(Kind::BadName, "name is not UTF-8"),
    }
}

/// Names coming from storage must also not collide with layout objects.
pub(crate) fn check_stored(text: &str) -> Result<String> {
    let name = check_str(text)?;
    if name == "." || name == ".." || name.starts_with(".z") || name.starts_with(".ncz") {
        return err(Kind::BadName, format!("reserved storage name {name:?}"));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert!(check(b"temp").is_ok());
        assert!(check(b"1digit").is_ok());
        assert!(check(b"_x").is_ok());
        assert!(check(b"a b.c-d:e").is_ok());
        for bad in [&b""[..], b"-x", b".x", b" x", b"a/b", b"a\nb", b"x ", b"\xff"] {
            assert_eq!(check(bad).unwrap_err().kind, Kind::BadName, "{bad:?}");
        }
        assert_eq!(check(&[b'a'; 257]).unwrap_err().kind, Kind::MaxName);
        assert!(check(&[b'a'; 256]).is_ok());
        // NFD spelling normalises to NFC.
        assert_eq!(check("e\u{301}".as_bytes()).unwrap(), "\u{e9}");
    }
}
