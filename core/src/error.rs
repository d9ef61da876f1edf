//! The one error type of the core and the one table that maps it to `NC_*` codes.
//!
//! Core code never returns raw integers: it names what went wrong with a `Kind`
//! (the netCDF meaning) plus a context string for the trace log. Only
//! `Error::code` knows the numbers C callers see, and `message` the text `nc_strerror` gives
//! for each.

use std::ffi::CStr;
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
    ParInit,
    /// An MPI call failed, or the ranks disagreed on a collective call.
    Mpi,
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
    /// A commit lost a race: another writer changed what this one changed (an Icechunk branch
    /// moved and the same chunk or metadata was written): NC_EOBJECT, nothing stored.
    Conflict,
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
            Kind::ParInit => -115,
            Kind::Mpi => -131,
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
            Kind::Conflict => -140,
            Kind::Errno(e) | Kind::Real(e) => e,
        }
    }
}

/// Text of every netCDF error code, byte for byte as netcdf-c 4.10.1 prints them.
pub fn message(code: i32) -> &'static CStr {
    MESSAGES.iter().find(|(c, _)| *c == code).map_or(c"Unknown Error", |(_, text)| text)
}

/// netcdf-c's `nc_strerror` texts by code (libdispatch/derror.c), in its order.
const MESSAGES: &[(i32, &CStr)] = &[
    (0, c"No error"),
    (-33, c"NetCDF: Not a valid ID"),
    (-34, c"NetCDF: Too many files open"),
    (-35, c"NetCDF: File exists && NC_NOCLOBBER"),
    (-36, c"NetCDF: Invalid argument"),
    (-37, c"NetCDF: Write to read only"),
    (-38, c"NetCDF: Operation not allowed in data mode"),
    (-39, c"NetCDF: Operation not allowed in define mode"),
    (-40, c"NetCDF: Index exceeds dimension bound"),
    (-41, c"NetCDF: NC_MAX_DIMS exceeded"),
    (-42, c"NetCDF: String match to name in use"),
    (-43, c"NetCDF: Attribute not found"),
    (-44, c"NetCDF: NC_MAX_ATTRS exceeded"),
    (-45, c"NetCDF: Not a valid data type or _FillValue type mismatch"),
    (-46, c"NetCDF: Invalid dimension ID or name"),
    (-47, c"NetCDF: NC_UNLIMITED in the wrong index"),
    (-48, c"NetCDF: NC_MAX_VARS exceeded"),
    (-49, c"NetCDF: Variable not found"),
    (-50, c"NetCDF: Action prohibited on NC_GLOBAL varid"),
    (-51, c"NetCDF: Unknown file format"),
    (-52, c"NetCDF: In Fortran, string too short"),
    (-53, c"NetCDF: NC_MAX_NAME exceeded"),
    (-54, c"NetCDF: NC_UNLIMITED size already in use"),
    (-55, c"NetCDF: nc_rec op when there are no record vars"),
    (-56, c"NetCDF: Attempt to convert between text & numbers"),
    (-57, c"NetCDF: Start+count exceeds dimension bound"),
    (-58, c"NetCDF: Illegal stride"),
    (-59, c"NetCDF: Name contains illegal characters"),
    (-60, c"NetCDF: Numeric conversion not representable"),
    (-61, c"NetCDF: Memory allocation (malloc) failure"),
    (-62, c"NetCDF: One or more variable sizes violate format constraints"),
    (-63, c"NetCDF: Invalid dimension size"),
    (-64, c"NetCDF: File likely truncated or possibly corrupted"),
    (-65, c"NetCDF: Illegal axis type"),
    (-66, c"NetCDF: DAP failure"),
    (-67, c"NetCDF: libcurl failure"),
    (-68, c"NetCDF: I/O failure"),
    (-69, c"NetCDF: Variable has no data"),
    (-70, c"NetCDF: DAP server error"),
    (-71, c"NetCDF: Malformed or inaccessible DAP DAS"),
    (-72, c"NetCDF: Malformed or inaccessible DAP2 DDS or DAP4 DMR response"),
    (-73, c"NetCDF: Malformed or inaccessible DAP2 DATADDS or DAP4 DAP response"),
    (-74, c"NetCDF: Malformed URL"),
    (-75, c"NetCDF: Malformed or unexpected Constraint"),
    (-76, c"NetCDF: Untranslatable construct"),
    (-77, c"NetCDF: Access failure"),
    (-78, c"NetCDF: Authorization failure"),
    (-90, c"NetCDF: file not found"),
    (-91, c"NetCDF: cannot delete file"),
    (-92, c"NetCDF: internal library error; Please contact Unidata support"),
    (-93, c"NetCDF: PnetCDF error"),
    (-101, c"NetCDF: HDF error"),
    (-102, c"NetCDF: Can't read file"),
    (-103, c"NetCDF: Can't write file"),
    (-104, c"NetCDF: Can't create file"),
    (-105, c"NetCDF: Can't add HDF5 file metadata"),
    (-106, c"NetCDF: Can't define dimensional metadata"),
    (-107, c"NetCDF: Can't open HDF5 attribute"),
    (-108, c"NetCDF: Problem with variable metadata."),
    (-109, c"NetCDF: Can't create HDF5 compound type"),
    (-110, c"NetCDF: Attempt to create attribute that already exists"),
    (-111, c"NetCDF: Attempting netcdf-4 operation on netcdf-3 file"),
    (-112, c"NetCDF: Attempting netcdf-4 operation on strict nc3 netcdf-4 file"),
    (-113, c"NetCDF: Attempting netcdf-3 operation on netcdf-4 file"),
    (-114, c"NetCDF: Parallel operation on file opened for non-parallel access"),
    (-115, c"NetCDF: Error initializing for parallel access"),
    (-116, c"NetCDF: Bad group ID"),
    (-117, c"NetCDF: Bad type ID"),
    (-118, c"NetCDF: Type has already been defined and may not be edited"),
    (-119, c"NetCDF: Bad field ID"),
    (-120, c"NetCDF: Bad class"),
    (-121, c"NetCDF: Mapped access for atomic types only"),
    (-122, c"NetCDF: Attempt to define fill value when data already exists."),
    (-123, c"NetCDF: Attempt to define var properties, like deflate, after enddef."),
    (-124, c"NetCDF: Problem with HDF5 dimscales."),
    (-125, c"NetCDF: No group found."),
    (-126, c"NetCDF: Cannot specify both contiguous and chunking."),
    (-127, c"NetCDF: Bad chunk sizes."),
    (-128, c"NetCDF: Attempt to use feature that was not turned on when netCDF was built."),
    (-129, c"NetCDF: Error in using diskless access"),
    (-130, c"NetCDF: Attempt to extend dataset during NC_INDEPENDENT I/O operation. Use nc_var_par_access to set mode NC_COLLECTIVE before extending variable."),
    (-131, c"NetCDF: MPI operation failed."),
    (-132, c"NetCDF: Filter error: bad id or parameters or duplicate filter"),
    (-133, c"NetCDF: RC File Failure."),
    (-134, c"NetCDF: File fails strict Null-Byte Header check."),
    (-135, c"NetCDF: In-memory File operation failed."),
    (-136, c"NetCDF: Filter error: undefined filter encountered"),
    (-137, c"NetCDF: NCZarr error"),
    (-138, c"NetCDF: S3 error"),
    (-139, c"NetCDF: Attempt to read empty NCZarr map key"),
    (-140, c"NetCDF: Some object exists when it should not"),
    (-141, c"NetCDF: Some object not found"),
    (-142, c"NetCDF: Unclassified failure in accessing a dynamically loaded plugin"),
];

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
