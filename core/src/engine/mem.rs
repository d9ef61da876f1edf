//! Memory as the engine sees it: the caller's buffer of a memory type, or string slots.

use crate::nc::types::NcType;

/// Memory as the engine sees it: bytes of a numeric/char memory type, or string slots.
pub enum Mem<'a> {
    Bytes(&'a mut [u8], MemType),
    Strings(&'a mut [Option<Option<String>>]),
}

/// The memory side's element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemType {
    Text,
    Num(NcType),
}

impl MemType {
    pub(crate) fn size(self) -> usize {
        match self {
            MemType::Text => 1,
            MemType::Num(t) => t.size(),
        }
    }
}
