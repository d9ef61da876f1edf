//! The one error type of the core and the one table that maps it to `NC_*` codes.
//!
//! Core code never returns raw integers: it names what went wrong with a `Kind`
//! (the netCDF meaning) plus a context string for the trace log. Only
//! `Error::code` knows the numbers C callers see.

use std::fmt;

/// netCDF meanings of failures. Variant names follow the `NC_E*` names they map to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    BadId,
    TooManyFiles,
    Exists,
    Invalid,
    ReadOnly,
    NotInDefine,
    InDefine,
    InvalidCoords,
    MaxDims,
    NameInUse,
    NotAtt,
    BadType,
    BadDim,
    UnlimPos,
    NotVar,
    Global,
    NotNetcdf,
    MaxName,
    Unlimit,
    Char,
    Edge,
    Stride,
    BadName,
    Range,
    NoMem,
    DimSize,
    Io,
    Access,
    Internal,
    HdfErr,
    AttMeta,
    NotNc4,
    StrictNc3,
    NoPar,
    BadGroupId,
    BadTypeId,
    LateFill,
    LateDef,
    NoGroup,
    BadChunk,
    NotBuilt,
    Filter,
    NoFilter,
    NcZarr,
    S3,
    NoObject,
    Url,
    /// A C `errno` value, passed through as netcdf-c does (positive codes).
    Errno(i32),
    /// A status the real netcdf-c behind us returned, passed on unchanged.
    Real(i32),
}

#[derive(Debug, Clone)]
pub struct Error {
    pub kind: Kind,
    pub context: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: Kind, context: impl Into<String>) -> Error {
        Error { kind, context: context.into() }
    }

    /// A status code the real library returned (passthrough).
    pub fn from_code(code: i32) -> Error {
        Error::new(Kind::Real(code), "from the real netCDF library")
    }

    /// The `NC_*` code (or positive errno) C callers receive.
    pub fn code(&self) -> i32 {
        match self.kind {
            Kind::BadId => -33,
            Kind::TooManyFiles => -34,
            Kind::Exists => -35,
            Kind::Invalid => -36,
            Kind::ReadOnly => -37,
            Kind::NotInDefine => -38,
            Kind::InDefine => -39,
            Kind::InvalidCoords => -40,
            Kind::MaxDims => -41,
            Kind::NameInUse => -42,
            Kind::NotAtt => -43,
            Kind::BadType => -45,
            Kind::BadDim => -46,
            Kind::UnlimPos => -47,
            Kind::NotVar => -49,
            Kind::Global => -50,
            Kind::NotNetcdf => -51,
            Kind::MaxName => -53,
            Kind::Unlimit => -54,
            Kind::Char => -56,
            Kind::Edge => -57,
            Kind::Stride => -58,
            Kind::BadName => -59,
            Kind::Range => -60,
            Kind::NoMem => -61,
            Kind::DimSize => -63,
            Kind::Io => -68,
            Kind::Url => -74,
            Kind::Access => -77,
            Kind::Internal => -92,
            Kind::HdfErr => -101,
            Kind::AttMeta => -107,
            Kind::NotNc4 => -111,
            Kind::StrictNc3 => -112,
            Kind::NoPar => -114,
            Kind::BadGroupId => -116,
            Kind::BadTypeId => -117,
            Kind::LateFill => -122,
            Kind::LateDef => -123,
            Kind::NoGroup => -125,
            Kind::BadChunk => -127,
            Kind::NotBuilt => -128,
            Kind::Filter => -132,
            Kind::NoFilter => -136,
            Kind::NcZarr => -137,
            Kind::S3 => -138,
            Kind::NoObject => -141,
            Kind::Errno(e) | Kind::Real(e) => e,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.context)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        let kind = match e.kind() {
            std::io::ErrorKind::OutOfMemory => Kind::NoMem,
            _ => match e.raw_os_error() {
                Some(code) if code > 0 => Kind::Errno(code),
                _ => Kind::Io,
            },
        };
        Error::new(kind, e.to_string())
    }
}

/// Shorthand used throughout the core: `err(Kind::NotVar, "varid 7")`.
pub fn err<T>(kind: Kind, context: impl Into<String>) -> Result<T> {
    Err(Error::new(kind, context))
}
