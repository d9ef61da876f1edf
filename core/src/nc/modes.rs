//! netCDF's integer arguments as Rust types. The C layer converts each `int` once and the core
//! matches on names, never on netcdf.h numbers. A value netcdf-c rejects only after other
//! checks stays representable (`Other(n)`), so the core can report it in netcdf-c's order.
//!
//! The numbers are netcdf.h's (`ffi::consts` holds them again for the C header; the unit test
//! at the end of `ffi::consts` checks the two agree).

/// What a `varid` argument names: a group's attributes (NC_GLOBAL) or a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarRef {
    Global,
    Var(usize),
}

impl VarRef {
    /// `-1` is NC_GLOBAL. Any other negative id names no variable: it becomes an index no
    /// group has, so lookups answer NC_ENOTVAR at the point netcdf-c checks the varid.
    pub fn from_c(varid: i32) -> VarRef {
        match varid {
            -1 => VarRef::Global,
            n => VarRef::Var(usize::try_from(n).unwrap_or(usize::MAX)),
        }
    }

    /// The variable's index; NC_GLOBAL is not a variable (NC_ENOTVAR).
    pub fn index(self) -> crate::error::Result<usize> {
        match self {
            VarRef::Var(i) => Ok(i),
            VarRef::Global => crate::error::err(crate::error::Kind::NotVar, "NC_GLOBAL"),
        }
    }
}

impl std::fmt::Display for VarRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VarRef::Global => write!(f, "NC_GLOBAL"),
            VarRef::Var(i) => write!(f, "varid {i}"),
        }
    }
}

/// The `cmode`/`omode` bits of `nc_create`/`nc_open`, kept whole because
/// `nc_inq_format_extended` reports them back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFlags(i32);

// Not `pub`: cbindgen would put them into netcdf.h beside the real NC_* names.
const WRITE: i32 = 0x0001;
const NOCLOBBER: i32 = 0x0004;
const DISKLESS: i32 = 0x0008;
const DATA_64BIT: i32 = 0x0020;
const CLASSIC_MODEL: i32 = 0x0100;
const OFFSET_64BIT: i32 = 0x0200;
const NETCDF4: i32 = 0x1000;
const INMEMORY: i32 = 0x8000;
const NOFILL: i32 = 0x100;

impl OpenFlags {
    pub fn from_bits(bits: i32) -> OpenFlags {
        OpenFlags(bits)
    }

    /// A netCDF-4 create over whatever is there (`NC_NETCDF4 | NC_CLOBBER`): how an
    /// aggregated dataset is built in memory.
    pub fn netcdf4_clobber() -> OpenFlags {
        OpenFlags(NETCDF4)
    }

    /// The create of an aggregated dataset's logical (netCDF-4) dataset, in the classic model
    /// when its master is to be classic.
    pub fn aggregated_create(classic: bool) -> OpenFlags {
        OpenFlags(NETCDF4 | if classic { CLASSIC_MODEL } else { 0 })
    }

    /// The bits as given, with NC_NETCDF4 set: what `nc_inq_format_extended` reports.
    pub fn reported(self) -> i32 {
        self.0 | NETCDF4
    }

    fn has(self, bit: i32) -> bool {
        self.0 & bit != 0
    }

    pub fn write(self) -> bool {
        self.has(WRITE)
    }

    pub fn noclobber(self) -> bool {
        self.has(NOCLOBBER)
    }

    pub(crate) fn netcdf4(self) -> bool {
        self.has(NETCDF4)
    }

    pub fn classic_model(self) -> bool {
        self.has(CLASSIC_MODEL)
    }

    /// A flag no Zarr dataset can honour when creating: netCDF-3 formats, diskless, in-memory.
    pub fn unsupported_for_create(self) -> bool {
        self.has(OFFSET_64BIT | DATA_64BIT | DISKLESS | INMEMORY)
    }

    /// Diskless or in-memory: no store of any kind can honour them.
    pub fn in_memory(self) -> bool {
        self.has(DISKLESS | INMEMORY)
    }

    /// The same when opening (NC_64BIT_DATA is ignored by netcdf-c's open).
    pub fn unsupported_for_open(self) -> bool {
        self.has(OFFSET_64BIT | DISKLESS | INMEMORY)
    }
}

/// `nc_set_fill`'s mode: a dataset's default for variables defined after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FillMode {
    Fill,
    NoFill,
}

impl FillMode {
    /// `None`: not a fill mode (NC_EINVAL).
    pub fn from_c(mode: i32) -> Option<FillMode> {
        match mode {
            0 => Some(FillMode::Fill),
            NOFILL => Some(FillMode::NoFill),
            _ => None,
        }
    }

    pub fn to_c(self) -> i32 {
        match self {
            FillMode::Fill => 0,
            FillMode::NoFill => NOFILL,
        }
    }
}

/// `nc_def_var_chunking`'s storage argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Chunked,
    Contiguous,
    Compact,
    /// Rejected (NC_EINVAL) after the variable's own checks.
    Other(i32),
}

impl Storage {
    pub fn from_c(storage: i32) -> Storage {
        match storage {
            0 => Storage::Chunked,
            1 => Storage::Contiguous,
            2 => Storage::Compact,
            n => Storage::Other(n),
        }
    }
}

/// `nc_def_var_endian`'s argument (the stored byte order is `model::Endian`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndianRequest {
    Native,
    Little,
    Big,
    /// Rejected (NC_EINVAL) after the variable's own checks.
    Other(i32),
}

impl EndianRequest {
    pub fn from_c(endian: i32) -> EndianRequest {
        match endian {
            0 => EndianRequest::Native,
            1 => EndianRequest::Little,
            2 => EndianRequest::Big,
            n => EndianRequest::Other(n),
        }
    }
}

/// `nc_def_var_quantize`'s algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantizeMode {
    None,
    BitGroom,
    GranularBr,
    BitRound,
    /// Rejected (NC_EINVAL) after the variable's own checks.
    Other(i32),
}

impl QuantizeMode {
    pub fn from_c(mode: i32) -> QuantizeMode {
        match mode {
            0 => QuantizeMode::None,
            1 => QuantizeMode::BitGroom,
            2 => QuantizeMode::GranularBr,
            3 => QuantizeMode::BitRound,
            n => QuantizeMode::Other(n),
        }
    }

    /// netcdf.h's number, as the model and `nc_inq_var_quantize` keep it.
    pub(crate) fn to_c(self) -> i32 {
        match self {
            QuantizeMode::None => 0,
            QuantizeMode::BitGroom => 1,
            QuantizeMode::GranularBr => 2,
            QuantizeMode::BitRound => 3,
            QuantizeMode::Other(n) => n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_trip() {
        for m in [FillMode::Fill, FillMode::NoFill] {
            assert_eq!(FillMode::from_c(m.to_c()), Some(m));
        }
        assert_eq!(FillMode::from_c(7), None);
        assert_eq!(VarRef::from_c(-1), VarRef::Global);
        assert_eq!(VarRef::from_c(3), VarRef::Var(3));
        assert!(VarRef::from_c(-7).index().is_ok_and(|i| i == usize::MAX));
        assert!(VarRef::Global.index().is_err());
        for n in -1..5 {
            assert_eq!(QuantizeMode::from_c(n).to_c(), n);
        }
        assert_eq!(Storage::from_c(9), Storage::Other(9));
        assert_eq!(EndianRequest::from_c(2), EndianRequest::Big);
        let f = OpenFlags::from_bits(WRITE | CLASSIC_MODEL);
        assert!(f.write() && f.classic_model() && !f.noclobber());
        assert_eq!(f.reported() & NETCDF4, NETCDF4);
        assert!(OpenFlags::from_bits(DATA_64BIT).unsupported_for_create());
        assert!(!OpenFlags::from_bits(DATA_64BIT).unsupported_for_open());
    }
}
