//! Every constant of netcdf.h, with netcdf-c's names and values, in netcdf.h order.
//! cbindgen renders these as the `#define`s of `include/netcdf.h`.
#![allow(non_upper_case_globals, non_camel_case_types)]

use std::ffi::{c_char, c_int, c_longlong, c_schar, c_short, c_uchar, c_uint, c_ulonglong, c_ushort};

/// The netCDF external data types.
pub type nc_type = c_int;

pub const NC_NAT: c_int = 0;
pub const NC_BYTE: c_int = 1;
pub const NC_CHAR: c_int = 2;
pub const NC_SHORT: c_int = 3;
pub const NC_INT: c_int = 4;
pub const NC_LONG: c_int = NC_INT;
pub const NC_FLOAT: c_int = 5;
pub const NC_DOUBLE: c_int = 6;
pub const NC_UBYTE: c_int = 7;
pub const NC_USHORT: c_int = 8;
pub const NC_UINT: c_int = 9;
pub const NC_INT64: c_int = 10;
pub const NC_UINT64: c_int = 11;
pub const NC_STRING: c_int = 12;
pub const NC_MAX_ATOMIC_TYPE: c_int = NC_STRING;
pub const NC_VLEN: c_int = 13;
pub const NC_OPAQUE: c_int = 14;
pub const NC_ENUM: c_int = 15;
pub const NC_COMPOUND: c_int = 16;
pub const NC_FIRSTUSERTYPEID: c_int = 32;

pub const NC_FILL_BYTE: c_schar = -127 as c_schar;
pub const NC_FILL_CHAR: c_char = 0 as c_char;
pub const NC_FILL_SHORT: c_short = -32767 as c_short;
pub const NC_FILL_INT: c_int = -2147483647;
pub const NC_FILL_FLOAT: f32 = 9.969_209_968_386_869e36_f64 as f32;
pub const NC_FILL_DOUBLE: f64 = 9.969_209_968_386_869e36;
pub const NC_FILL_UBYTE: c_uchar = 255 as c_uchar;
pub const NC_FILL_USHORT: c_ushort = 65535 as c_ushort;
pub const NC_FILL_UINT: c_uint = 4294967295 as c_uint;
pub const NC_FILL_INT64: c_longlong = -9223372036854775806 as c_longlong;
pub const NC_FILL_UINT64: c_ulonglong = 18446744073709551614 as c_ulonglong;

pub const NC_MAX_BYTE: c_int = 127;
pub const NC_MIN_BYTE: c_int = -NC_MAX_BYTE - 1;
pub const NC_MAX_CHAR: c_int = 255;
pub const NC_MAX_SHORT: c_int = 32767;
pub const NC_MIN_SHORT: c_int = -NC_MAX_SHORT - 1;
pub const NC_MAX_INT: c_int = 2147483647;
pub const NC_MIN_INT: c_int = -NC_MAX_INT - 1;
pub const NC_MAX_FLOAT: f32 = 3.402_823_466e38_f64 as f32;
pub const NC_MIN_FLOAT: f32 = -NC_MAX_FLOAT;
pub const NC_MAX_DOUBLE: f64 = 1.797_693_134_862_315_7e308;
pub const NC_MIN_DOUBLE: f64 = -NC_MAX_DOUBLE;
pub const NC_MAX_UBYTE: c_int = NC_MAX_CHAR;
pub const NC_MAX_USHORT: c_uint = 65535;
pub const NC_MAX_UINT: c_uint = 4294967295;
pub const NC_MAX_INT64: c_longlong = 9223372036854775807;
pub const NC_MIN_INT64: c_longlong = -9223372036854775807 - 1;
pub const NC_MAX_UINT64: c_ulonglong = 18446744073709551615;

pub const NC_FILL: c_int = 0;
pub const NC_NOFILL: c_int = 0x100;

pub const NC_NOWRITE: c_int = 0x0000;
pub const NC_WRITE: c_int = 0x0001;
pub const NC_CLOBBER: c_int = 0x0000;
pub const NC_NOCLOBBER: c_int = 0x0004;
pub const NC_DISKLESS: c_int = 0x0008;
pub const NC_MMAP: c_int = 0x0010;
pub const NC_64BIT_DATA: c_int = 0x0020;
pub const NC_CDF5: c_int = NC_64BIT_DATA;
pub const NC_UDF0: c_int = 0x0040;
pub const NC_UDF1: c_int = 0x0080;
pub const NC_CLASSIC_MODEL: c_int = 0x0100;
pub const NC_64BIT_OFFSET: c_int = 0x0200;
pub const NC_LOCK: c_int = 0x0400;
pub const NC_SHARE: c_int = 0x0800;
pub const NC_NETCDF4: c_int = 0x1000;
pub const NC_MPIIO: c_int = 0x2000;
pub const NC_MPIPOSIX: c_int = NC_MPIIO;
pub const NC_PNETCDF: c_int = NC_MPIIO;
pub const NC_PERSIST: c_int = 0x4000;
pub const NC_INMEMORY: c_int = 0x8000;
pub const NC_UDF2: c_int = 0x10000;
pub const NC_NOATTCREORD: c_int = 0x20000;
pub const NC_NODIMSCALE_ATTACH: c_int = 0x40000;
pub const NC_UDF3: c_int = 0x80000;
pub const NC_UDF4: c_int = 0x100000;
pub const NC_UDF5: c_int = 0x200000;
pub const NC_UDF6: c_int = 0x400000;
pub const NC_UDF7: c_int = 0x800000;
pub const NC_UDF8: c_int = 0x1000000;
pub const NC_UDF9: c_int = 0x2000000;
pub const NC_MAX_MAGIC_NUMBER_LEN: c_int = 8;
pub const NC_MAX_UDF_FORMATS: c_int = 10;
pub const NC_FORMAT_ALL: c_int = NC_64BIT_OFFSET
    | NC_64BIT_DATA
    | NC_CLASSIC_MODEL
    | NC_NETCDF4
    | NC_UDF0
    | NC_UDF1
    | NC_UDF2
    | NC_UDF3
    | NC_UDF4
    | NC_UDF5
    | NC_UDF6
    | NC_UDF7
    | NC_UDF8
    | NC_UDF9;

pub const NC_FORMAT_CLASSIC: c_int = 1;
pub const NC_FORMAT_64BIT_OFFSET: c_int = 2;
pub const NC_FORMAT_64BIT: c_int = NC_FORMAT_64BIT_OFFSET;
pub const NC_FORMAT_NETCDF4: c_int = 3;
pub const NC_FORMAT_NETCDF4_CLASSIC: c_int = 4;
pub const NC_FORMAT_64BIT_DATA: c_int = 5;
pub const NC_FORMAT_CDF5: c_int = NC_FORMAT_64BIT_DATA;

pub const NC_FORMATX_NC3: c_int = 1;
pub const NC_FORMATX_NC_HDF5: c_int = 2;
pub const NC_FORMATX_NC4: c_int = NC_FORMATX_NC_HDF5;
pub const NC_FORMATX_NC_HDF4: c_int = 3;
pub const NC_FORMATX_PNETCDF: c_int = 4;
pub const NC_FORMATX_DAP2: c_int = 5;
pub const NC_FORMATX_DAP4: c_int = 6;
pub const NC_FORMATX_UDF0: c_int = 8;
pub const NC_FORMATX_UDF1: c_int = 9;
pub const NC_FORMATX_NCZARR: c_int = 10;
pub const NC_FORMATX_ZARR: c_int = NC_FORMATX_NCZARR;
pub const NC_FORMATX_UDF2: c_int = 11;
pub const NC_FORMATX_UDF3: c_int = 12;
pub const NC_FORMATX_UDF4: c_int = 13;
pub const NC_FORMATX_UDF5: c_int = 14;
pub const NC_FORMATX_UDF6: c_int = 15;
pub const NC_FORMATX_UDF7: c_int = 16;
pub const NC_FORMATX_UDF8: c_int = 17;
pub const NC_FORMATX_UDF9: c_int = 18;
pub const NC_FORMATX_UNDEFINED: c_int = 0;

pub const NC_FORMAT_NC3: c_int = NC_FORMATX_NC3;
pub const NC_FORMAT_NC_HDF5: c_int = NC_FORMATX_NC_HDF5;
pub const NC_FORMAT_NC4: c_int = NC_FORMATX_NC4;
pub const NC_FORMAT_NC_HDF4: c_int = NC_FORMATX_NC_HDF4;
pub const NC_FORMAT_PNETCDF: c_int = NC_FORMATX_PNETCDF;
pub const NC_FORMAT_DAP2: c_int = NC_FORMATX_DAP2;
pub const NC_FORMAT_DAP4: c_int = NC_FORMATX_DAP4;
pub const NC_FORMAT_UNDEFINED: c_int = NC_FORMATX_UNDEFINED;

pub const NC_SIZEHINT_DEFAULT: c_int = 0;
pub const NC_ALIGN_CHUNK: usize = -1_isize as usize;
pub const NC_UNLIMITED: std::ffi::c_long = 0;
pub const NC_GLOBAL: c_int = -1;
pub const NC_MAX_DIMS: c_int = 1024;
pub const NC_MAX_ATTRS: c_int = 8192;
pub const NC_MAX_VARS: c_int = 8192;
pub const NC_MAX_NAME: c_int = 256;
pub const NC_MAX_VAR_DIMS: c_int = 1024;
pub const NC_MAX_HDF4_NAME: c_int = NC_MAX_NAME;

pub const NC_ENDIAN_NATIVE: c_int = 0;
pub const NC_ENDIAN_LITTLE: c_int = 1;
pub const NC_ENDIAN_BIG: c_int = 2;
pub const NC_CHUNKED: c_int = 0;
pub const NC_CONTIGUOUS: c_int = 1;
pub const NC_COMPACT: c_int = 2;
pub const NC_UNKNOWN_STORAGE: c_int = 3;
pub const NC_VIRTUAL: c_int = 4;
pub const NC_NOCHECKSUM: c_int = 0;
pub const NC_FLETCHER32: c_int = 1;
pub const NC_NOSHUFFLE: c_int = 0;
pub const NC_SHUFFLE: c_int = 1;
pub const NC_MIN_DEFLATE_LEVEL: c_int = 0;
pub const NC_MAX_DEFLATE_LEVEL: c_int = 9;
pub const NC_SZIP_NN: c_int = 32;
pub const NC_SZIP_EC: c_int = 4;
pub const NC_NOQUANTIZE: c_int = 0;
pub const NC_QUANTIZE_BITGROOM: c_int = 1;
pub const NC_QUANTIZE_GRANULARBR: c_int = 2;
pub const NC_QUANTIZE_BITROUND: c_int = 3;
pub const NC_QUANTIZE_MAX_FLOAT_NSD: c_int = 6;
pub const NC_QUANTIZE_MAX_FLOAT_NSB: c_int = 23;
pub const NC_QUANTIZE_MAX_DOUBLE_NSD: c_int = 15;
pub const NC_QUANTIZE_MAX_DOUBLE_NSB: c_int = 52;

pub const NC_NOERR: c_int = 0;
pub const NC2_ERR: c_int = -1;
pub const NC_EBADID: c_int = -33;
pub const NC_ENFILE: c_int = -34;
pub const NC_EEXIST: c_int = -35;
pub const NC_EINVAL: c_int = -36;
pub const NC_EPERM: c_int = -37;
pub const NC_ENOTINDEFINE: c_int = -38;
pub const NC_EINDEFINE: c_int = -39;
pub const NC_EINVALCOORDS: c_int = -40;
pub const NC_EMAXDIMS: c_int = -41;
pub const NC_ENAMEINUSE: c_int = -42;
pub const NC_ENOTATT: c_int = -43;
pub const NC_EMAXATTS: c_int = -44;
pub const NC_EBADTYPE: c_int = -45;
pub const NC_EBADDIM: c_int = -46;
pub const NC_EUNLIMPOS: c_int = -47;
pub const NC_EMAXVARS: c_int = -48;
pub const NC_ENOTVAR: c_int = -49;
pub const NC_EGLOBAL: c_int = -50;
pub const NC_ENOTNC: c_int = -51;
pub const NC_ESTS: c_int = -52;
pub const NC_EMAXNAME: c_int = -53;
pub const NC_EUNLIMIT: c_int = -54;
pub const NC_ENORECVARS: c_int = -55;
pub const NC_ECHAR: c_int = -56;
pub const NC_EEDGE: c_int = -57;
pub const NC_ESTRIDE: c_int = -58;
pub const NC_EBADNAME: c_int = -59;
pub const NC_ERANGE: c_int = -60;
pub const NC_ENOMEM: c_int = -61;
pub const NC_EVARSIZE: c_int = -62;
pub const NC_EDIMSIZE: c_int = -63;
pub const NC_ETRUNC: c_int = -64;
pub const NC_EAXISTYPE: c_int = -65;
pub const NC_EDAP: c_int = -66;
pub const NC_ECURL: c_int = -67;
pub const NC_EIO: c_int = -68;
pub const NC_ENODATA: c_int = -69;
pub const NC_EDAPSVC: c_int = -70;
pub const NC_EDAS: c_int = -71;
pub const NC_EDDS: c_int = -72;
pub const NC_EDMR: c_int = NC_EDDS;
pub const NC_EDATADDS: c_int = -73;
pub const NC_EDATADAP: c_int = NC_EDATADDS;
pub const NC_EDAPURL: c_int = -74;
pub const NC_EDAPCONSTRAINT: c_int = -75;
pub const NC_ETRANSLATION: c_int = -76;
pub const NC_EACCESS: c_int = -77;
pub const NC_EAUTH: c_int = -78;
pub const NC_ENOTFOUND: c_int = -90;
pub const NC_ECANTREMOVE: c_int = -91;
pub const NC_EINTERNAL: c_int = -92;
pub const NC_EPNETCDF: c_int = -93;
pub const NC4_FIRST_ERROR: c_int = -100;
pub const NC_EHDFERR: c_int = -101;
pub const NC_ECANTREAD: c_int = -102;
pub const NC_ECANTWRITE: c_int = -103;
pub const NC_ECANTCREATE: c_int = -104;
pub const NC_EFILEMETA: c_int = -105;
pub const NC_EDIMMETA: c_int = -106;
pub const NC_EATTMETA: c_int = -107;
pub const NC_EVARMETA: c_int = -108;
pub const NC_ENOCOMPOUND: c_int = -109;
pub const NC_EATTEXISTS: c_int = -110;
pub const NC_ENOTNC4: c_int = -111;
pub const NC_ESTRICTNC3: c_int = -112;
pub const NC_ENOTNC3: c_int = -113;
pub const NC_ENOPAR: c_int = -114;
pub const NC_EPARINIT: c_int = -115;
pub const NC_EBADGRPID: c_int = -116;
pub const NC_EBADTYPID: c_int = -117;
pub const NC_ETYPDEFINED: c_int = -118;
pub const NC_EBADFIELD: c_int = -119;
pub const NC_EBADCLASS: c_int = -120;
pub const NC_EMAPTYPE: c_int = -121;
pub const NC_ELATEFILL: c_int = -122;
pub const NC_ELATEDEF: c_int = -123;
pub const NC_EDIMSCALE: c_int = -124;
pub const NC_ENOGRP: c_int = -125;
pub const NC_ESTORAGE: c_int = -126;
pub const NC_EBADCHUNK: c_int = -127;
pub const NC_ENOTBUILT: c_int = -128;
pub const NC_EDISKLESS: c_int = -129;
pub const NC_ECANTEXTEND: c_int = -130;
pub const NC_EMPI: c_int = -131;
pub const NC_EFILTER: c_int = -132;
pub const NC_ERCFILE: c_int = -133;
pub const NC_ENULLPAD: c_int = -134;
pub const NC_EINMEMORY: c_int = -135;
pub const NC_ENOFILTER: c_int = -136;
pub const NC_ENCZARR: c_int = -137;
pub const NC_ES3: c_int = -138;
pub const NC_EEMPTY: c_int = -139;
pub const NC_EOBJECT: c_int = -140;
pub const NC_ENOOBJECT: c_int = -141;
pub const NC_EPLUGIN: c_int = -142;
pub const NC4_LAST_ERROR: c_int = -142;
pub const NC_EURL: c_int = NC_EDAPURL;
pub const NC_ECONSTRAINT: c_int = NC_EDAPCONSTRAINT;

pub const NC_HAVE_NEW_CHUNKING_API: c_int = 1;
pub const NC_TURN_OFF_LOGGING: c_int = -1;
pub const NC_HAVE_RENAME_GRP: c_int = 1;
pub const NC_HAVE_INQ_FORMAT_EXTENDED: c_int = 1;
pub const NC_HAVE_META_H: c_int = 1;

pub const NC_FATAL: c_int = 1;
pub const NC_VERBOSE: c_int = 2;
pub const NC_SYSERR: c_int = -31;
pub const NC_EXDR: c_int = -32;
pub const NC_ENTOOL: c_int = NC_EMAXNAME;
pub const FILL_BYTE: c_schar = NC_FILL_BYTE;
pub const FILL_CHAR: c_char = NC_FILL_CHAR;
pub const FILL_SHORT: c_short = NC_FILL_SHORT;
pub const FILL_LONG: c_int = NC_FILL_INT;
pub const FILL_FLOAT: f32 = NC_FILL_FLOAT;
pub const FILL_DOUBLE: f64 = NC_FILL_DOUBLE;
pub const MAX_NC_DIMS: c_int = NC_MAX_DIMS;
pub const MAX_NC_ATTRS: c_int = NC_MAX_ATTRS;
pub const MAX_NC_VARS: c_int = NC_MAX_VARS;
pub const MAX_NC_NAME: c_int = NC_MAX_NAME;
pub const MAX_VAR_DIMS: c_int = NC_MAX_VAR_DIMS;

/// A variable-length array element (`nc_vlen_t`).
#[repr(C)]
pub struct nc_vlen_t {
    pub len: usize,
    pub p: *mut std::ffi::c_void,
}

/// A memory image for `nc_open_memio` / `nc_close_memio`.
#[repr(C)]
pub struct NC_memio {
    pub size: usize,
    pub memory: *mut std::ffi::c_void,
    pub flags: c_int,
}

/// One parsed filter spec (`ncaux_h5filterspec_parselist`).
#[repr(C)]
pub struct NC_H5_Filterspec {
    pub filterid: c_uint,
    pub nparams: usize,
    pub params: *mut c_uint,
}

/// A plugin path: `ndirs` directory names (`nc_plugin_path_*`, `ncaux_plugin_path_*`).
#[repr(C)]
pub struct NCPluginList {
    pub ndirs: usize,
    pub dirs: *mut *mut c_char,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nc::modes::{EndianRequest, FillMode, OpenFlags, QuantizeMode, Storage};

    /// Every error kind reaches C as its netcdf.h code: the match names each kind once (the
    /// compiler checks none is missing), the list runs each through `Error::code`.
    #[test]
    fn every_error_kind_is_its_nc_code() {
        use crate::error::{Error, Kind};
        fn expected(kind: Kind) -> c_int {
            match kind {
                Kind::BadId => NC_EBADID,
                Kind::TooManyFiles => NC_ENFILE,
                Kind::Exists => NC_EEXIST,
                Kind::Invalid => NC_EINVAL,
                Kind::ReadOnly => NC_EPERM,
                Kind::NotInDefine => NC_ENOTINDEFINE,
                Kind::InDefine => NC_EINDEFINE,
                Kind::InvalidCoords => NC_EINVALCOORDS,
                Kind::MaxDims => NC_EMAXDIMS,
                Kind::NameInUse => NC_ENAMEINUSE,
                Kind::NotAtt => NC_ENOTATT,
                Kind::BadType => NC_EBADTYPE,
                Kind::BadDim => NC_EBADDIM,
                Kind::UnlimPos => NC_EUNLIMPOS,
                Kind::NotVar => NC_ENOTVAR,
                Kind::Global => NC_EGLOBAL,
                Kind::NotNetcdf => NC_ENOTNC,
                Kind::MaxName => NC_EMAXNAME,
                Kind::Unlimit => NC_EUNLIMIT,
                Kind::Char => NC_ECHAR,
                Kind::Edge => NC_EEDGE,
                Kind::Stride => NC_ESTRIDE,
                Kind::BadName => NC_EBADNAME,
                Kind::Range => NC_ERANGE,
                Kind::NoMem => NC_ENOMEM,
                Kind::DimSize => NC_EDIMSIZE,
                Kind::Io => NC_EIO,
                Kind::Access => NC_EACCESS,
                Kind::Internal => NC_EINTERNAL,
                Kind::HdfErr => NC_EHDFERR,
                Kind::AttMeta => NC_EATTMETA,
                Kind::NotNc4 => NC_ENOTNC4,
                Kind::StrictNc3 => NC_ESTRICTNC3,
                Kind::NoPar => NC_ENOPAR,
                Kind::ParInit => NC_EPARINIT,
                Kind::Mpi => NC_EMPI,
                Kind::BadGroupId => NC_EBADGRPID,
                Kind::BadTypeId => NC_EBADTYPID,
                Kind::LateFill => NC_ELATEFILL,
                Kind::LateDef => NC_ELATEDEF,
                Kind::NoGroup => NC_ENOGRP,
                Kind::BadChunk => NC_EBADCHUNK,
                Kind::NotBuilt => NC_ENOTBUILT,
                Kind::Filter => NC_EFILTER,
                Kind::NoFilter => NC_ENOFILTER,
                Kind::NcZarr => NC_ENCZARR,
                Kind::S3 => NC_ES3,
                Kind::NoObject => NC_ENOOBJECT,
                Kind::Conflict => NC_EOBJECT,
                Kind::Url => NC_EURL,
                Kind::Errno(e) | Kind::Real(e) => e,
            }
        }
        let kinds = [
            Kind::BadId,
            Kind::TooManyFiles,
            Kind::Exists,
            Kind::Invalid,
            Kind::ReadOnly,
            Kind::NotInDefine,
            Kind::InDefine,
            Kind::InvalidCoords,
            Kind::MaxDims,
            Kind::NameInUse,
            Kind::NotAtt,
            Kind::BadType,
            Kind::BadDim,
            Kind::UnlimPos,
            Kind::NotVar,
            Kind::Global,
            Kind::NotNetcdf,
            Kind::MaxName,
            Kind::Unlimit,
            Kind::Char,
            Kind::Edge,
            Kind::Stride,
            Kind::BadName,
            Kind::Range,
            Kind::NoMem,
            Kind::DimSize,
            Kind::Io,
            Kind::Access,
            Kind::Internal,
            Kind::HdfErr,
            Kind::AttMeta,
            Kind::NotNc4,
            Kind::StrictNc3,
            Kind::NoPar,
            Kind::ParInit,
            Kind::Mpi,
            Kind::BadGroupId,
            Kind::BadTypeId,
            Kind::LateFill,
            Kind::LateDef,
            Kind::NoGroup,
            Kind::BadChunk,
            Kind::NotBuilt,
            Kind::Filter,
            Kind::NoFilter,
            Kind::NcZarr,
            Kind::S3,
            Kind::NoObject,
            Kind::Conflict,
            Kind::Url,
            Kind::Errno(5),
            Kind::Real(-51),
        ];
        for kind in kinds {
            assert_eq!(Error::new(kind, "").code(), expected(kind), "{kind:?}");
        }
    }

    /// The core's typed arguments and netcdf.h's numbers say the same thing.
    #[test]
    fn core_modes_match_netcdf_h() {
        assert_eq!(FillMode::from_c(NC_FILL), Some(FillMode::Fill));
        assert_eq!(FillMode::NoFill.to_c(), NC_NOFILL);
        assert_eq!(Storage::from_c(NC_CHUNKED), Storage::Chunked);
        assert_eq!(Storage::from_c(NC_CONTIGUOUS), Storage::Contiguous);
        assert_eq!(Storage::from_c(NC_COMPACT), Storage::Compact);
        assert_eq!(EndianRequest::from_c(NC_ENDIAN_NATIVE), EndianRequest::Native);
        assert_eq!(EndianRequest::from_c(NC_ENDIAN_LITTLE), EndianRequest::Little);
        assert_eq!(EndianRequest::from_c(NC_ENDIAN_BIG), EndianRequest::Big);
        assert_eq!(QuantizeMode::from_c(NC_NOQUANTIZE), QuantizeMode::None);
        assert_eq!(QuantizeMode::from_c(NC_QUANTIZE_BITGROOM), QuantizeMode::BitGroom);
        assert_eq!(QuantizeMode::from_c(NC_QUANTIZE_GRANULARBR), QuantizeMode::GranularBr);
        assert_eq!(QuantizeMode::from_c(NC_QUANTIZE_BITROUND), QuantizeMode::BitRound);
        assert!(OpenFlags::from_bits(NC_WRITE).write());
        assert!(OpenFlags::from_bits(NC_NOCLOBBER).noclobber());
        assert!(OpenFlags::from_bits(NC_CLASSIC_MODEL).classic_model());
        assert_eq!(OpenFlags::from_bits(0).reported(), NC_NETCDF4);
        for bad in [NC_64BIT_OFFSET, NC_64BIT_DATA, NC_DISKLESS, NC_INMEMORY] {
            assert!(OpenFlags::from_bits(bad).unsupported_for_create());
        }
        for bad in [NC_64BIT_OFFSET, NC_DISKLESS, NC_INMEMORY] {
            assert!(OpenFlags::from_bits(bad).unsupported_for_open());
        }
    }
}
