//! Storage keys, validated once when made instead of by each driver on each call.

use crate::error::{Kind, Result, err};

/// A `/`-separated path of one object or prefix, relative to the dataset root (`""` is the
/// root itself). Made only by `Key::new`, so a key a driver receives has no leading slash,
/// no empty, `.` or `..` segment, and no control characters or backslashes: nothing a
/// hostile name could use to leave the dataset.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(String);

impl Key {
    pub fn new(key: impl Into<String>) -> Result<Key> {
        let key: String = key.into();
        if !key.is_empty() {
            for seg in key.split('/') {
                if seg.is_empty() || seg == "." || seg == ".." {
                    return err(Kind::BadName, format!("bad key segment in {key:?}"));
                }
                if seg.chars().any(|c| (c as u32) < 0x20 || c as u32 == 0x7f || c == '\\') {
                    return err(Kind::BadName, format!("control character in key {key:?}"));
                }
            }
        }
        Ok(Key(key))
    }

    /// Several keys at once (the first bad one is the error).
    pub(crate) fn all<S: AsRef<str>>(keys: &[S]) -> Result<Vec<Key>> {
        keys.iter().map(|k| Key::new(k.as_ref())).collect()
    }

    /// The dataset root (the prefix of everything).
    pub(crate) fn root() -> Key {
        Key(String::new())
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Key {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_keys_are_made() {
        assert_eq!(Key::new("a/b/0.0").unwrap().as_str(), "a/b/0.0");
        assert_eq!(Key::root().as_str(), "");
        for bad in ["/a", "a//b", "a/../b", "./a", "a/", "a\\b", "a\u{1}b", ".."] {
            assert_eq!(Key::new(bad).unwrap_err().kind, Kind::BadName, "{bad:?}");
        }
    }
}
