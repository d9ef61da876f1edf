//! The twelve atomic netCDF types and their facts: sizes, names, default fills.

use crate::error::{Kind, Result, err};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NcType {
    Byte,
    Char,
    Short,
    Int,
    Float,
    Double,
    UByte,
    UShort,
    UInt,
    Int64,
    UInt64,
    String,
}

impl NcType {
    pub(crate) const ALL: [NcType; 12] = [
        NcType::Byte,
        NcType::Char,
        NcType::Short,
        NcType::Int,
        NcType::Float,
        NcType::Double,
        NcType::UByte,
        NcType::UShort,
        NcType::UInt,
        NcType::Int64,
        NcType::UInt64,
        NcType::String,
    ];

    /// From a C `nc_type` id. Ids of user-defined types or out of range → NC_EBADTYPE.
    pub fn from_id(id: i32) -> Result<NcType> {
        if (1..=12).contains(&id) { Ok(NcType::ALL[(id - 1) as usize]) } else { err(Kind::BadType, format!("type id {id}")) }
    }

    pub fn id(self) -> i32 {
        NcType::ALL.iter().position(|t| *t == self).unwrap_or(0) as i32 + 1
    }

    /// External size in bytes; strings count as a pointer, as netcdf-c reports.
    pub fn size(self) -> usize {
        match self {
            NcType::Byte | NcType::Char | NcType::UByte => 1,
            NcType::Short | NcType::UShort => 2,
            NcType::Int | NcType::UInt | NcType::Float => 4,
            NcType::Double | NcType::Int64 | NcType::UInt64 => 8,
            NcType::String => std::mem::size_of::<*const u8>(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NcType::Byte => "byte",
            NcType::Char => "char",
            NcType::Short => "short",
            NcType::Int => "int",
            NcType::Float => "float",
            NcType::Double => "double",
            NcType::UByte => "ubyte",
            NcType::UShort => "ushort",
            NcType::UInt => "uint",
            NcType::Int64 => "int64",
            NcType::UInt64 => "uint64",
            NcType::String => "string",
        }
    }

    pub fn from_name(name: &str) -> Option<NcType> {
        NcType::ALL.iter().copied().find(|t| t.name() == name)
    }

    pub fn is_numeric(self) -> bool {
        !matches!(self, NcType::Char | NcType::String)
    }

    pub(crate) fn is_float(self) -> bool {
        matches!(self, NcType::Float | NcType::Double)
    }

    /// Types allowed in the classic data model.
    pub(crate) fn is_classic(self) -> bool {
        self.id() <= 6
    }
}
