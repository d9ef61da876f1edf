//! Elements between a chunk's file type and the caller's memory type, with netcdf-c's
//! conversions and NC_ERANGE.

use super::mem::{Mem, MemOut, MemType};
use super::plan::Run;

use crate::error::{Kind, Result, err};
use crate::nc::types::NcType;
use crate::nc::values::{Scalar, convert_scalar};

/// Reads the element at `i` of a native buffer of type `t` as a scalar.
pub(super) fn load(b: &[u8], i: usize, t: NcType) -> Scalar {
    macro_rules! rd {
        ($ty:ty) => {{
            const N: usize = std::mem::size_of::<$ty>();
            <$ty>::from_ne_bytes(b[i * N..i * N + N].try_into().expect("element"))
        }};
    }
    match t {
        NcType::Byte => Scalar::Int(rd!(i8) as i128),
        NcType::UByte | NcType::Char => Scalar::Int(b[i] as i128),
        NcType::Short => Scalar::Int(rd!(i16) as i128),
        NcType::UShort => Scalar::Int(rd!(u16) as i128),
        NcType::Int => Scalar::Int(rd!(i32) as i128),
        NcType::UInt => Scalar::Int(rd!(u32) as i128),
        NcType::Int64 => Scalar::Int(rd!(i64) as i128),
        NcType::UInt64 => Scalar::Int(rd!(u64) as i128),
        NcType::Float => Scalar::F32(rd!(f32)),
        NcType::Double => Scalar::F64(rd!(f64)),
        NcType::String => Scalar::Int(0),
    }
}

pub(super) fn store(b: &mut [u8], i: usize, t: NcType, s: Scalar) {
    let as_i = |s: Scalar| match s {
        Scalar::Int(v) => v,
        Scalar::F32(v) => v as i128,
        Scalar::F64(v) => v as i128,
    };
    let as_f = |s: Scalar| match s {
        Scalar::Int(v) => v as f64,
        Scalar::F32(v) => v as f64,
        Scalar::F64(v) => v,
    };
    macro_rules! wr {
        ($v:expr, $ty:ty) => {{
            const N: usize = std::mem::size_of::<$ty>();
            b[i * N..i * N + N].copy_from_slice(&($v).to_ne_bytes());
        }};
    }
    match t {
        NcType::Byte => wr!(as_i(s) as i8, i8),
        NcType::UByte | NcType::Char => b[i] = as_i(s) as u8,
        NcType::Short => wr!(as_i(s) as i16, i16),
        NcType::UShort => wr!(as_i(s) as u16, u16),
        NcType::Int => wr!(as_i(s) as i32, i32),
        NcType::UInt => wr!(as_i(s) as u32, u32),
        NcType::Int64 => wr!(as_i(s) as i64, i64),
        NcType::UInt64 => wr!(as_i(s) as u64, u64),
        NcType::Float => wr!(as_f(s) as f32, f32),
        NcType::Double => wr!(as_f(s), f64),
        NcType::String => {}
    }
}

/// Moves one run between a chunk buffer (`file`) and memory; returns "out of range seen".
pub(super) fn copy_run(run: &Run, chunk: &mut [u8], file: NcType, mem: &mut [u8], mt: MemType, to_mem: bool) -> bool {
    let fs = file.size();
    let ms = mt.size();
    let mem_t = match mt {
        MemType::Text => NcType::Char,
        MemType::Num(t) => t,
    };
    if mem_t == file {
        if run.cstep == 1 && run.mstep == 1 {
            let (c, m) = (run.coff * fs, run.moff * ms);
            let len = run.n * fs;
            if to_mem {
                crate::bytes::copy(&mut mem[m..m + len], &chunk[c..c + len]);
            } else {
                crate::bytes::copy(&mut chunk[c..c + len], &mem[m..m + len]);
            }
        } else {
            for j in 0..run.n {
                let c = (run.coff + j * run.cstep) * fs;
                let m = run.mem(j) * ms;
                if to_mem {
                    mem[m..m + fs].copy_from_slice(&chunk[c..c + fs]);
                } else {
                    chunk[c..c + fs].copy_from_slice(&mem[m..m + fs]);
                }
            }
        }
        return false;
    }
    let mut range = false;
    for j in 0..run.n {
        let c = run.coff + j * run.cstep;
        let m = run.mem(j);
        if to_mem {
            let (v, r) = convert_scalar(load(chunk, c, file), mem_t);
            store(mem, m, mem_t, v);
            range |= r;
        } else {
            let (v, r) = convert_scalar(load(mem, m, mem_t), file);
            store(chunk, c, file, v);
            range |= r;
        }
    }
    range
}

/// Checks that memory and variable types can meet (c-api.md §9.4).
pub fn check_types(file: NcType, mem: &Mem<'_>) -> Result<()> {
    match (file, mem) {
        (NcType::Char, Mem::Bytes(_, MemType::Text)) | (NcType::String, Mem::Strings(_)) => Ok(()),
        (NcType::Char, Mem::Bytes(_, MemType::Num(_))) => err(Kind::Char, "numbers into a char variable"),
        (NcType::String, Mem::Bytes(_, MemType::Text)) => err(Kind::Char, "text into a string variable"),
        (NcType::Char, Mem::Strings(_)) => err(Kind::Char, "strings into a char variable"),
        (NcType::String, Mem::Bytes(..)) | (_, Mem::Strings(_)) => err(Kind::BadType, "strings and numbers do not convert"),
        (_, Mem::Bytes(_, MemType::Text)) => err(Kind::Char, "text into a numeric variable"),
        (_, Mem::Bytes(_, MemType::Num(_))) => Ok(()),
    }
}

/// `copy_run` towards memory through a shared `MemOut`.
pub(super) fn copy_out(run: &Run, chunk: &[u8], file: NcType, out: &MemOut, mt: MemType) -> bool {
    let fs = file.size();
    let ms = mt.size();
    let mem_t = match mt {
        MemType::Text => NcType::Char,
        MemType::Num(t) => t,
    };
    let last = run.mem_end() * ms;
    assert!(last <= out.len, "selection outside the user buffer");
    let write = |m: usize, bytes: &[u8]| {
        // SAFETY: in bounds (checked above) and disjoint from other threads' writes (MemOut).
        crate::bytes::copy(unsafe { std::slice::from_raw_parts_mut(out.ptr.add(m), bytes.len()) }, bytes)
    };
    if mem_t == file {
        if run.cstep == 1 && run.mstep == 1 {
            write(run.moff * ms, &chunk[run.coff * fs..(run.coff + run.n) * fs]);
        } else {
            for j in 0..run.n {
                let c = (run.coff + j * run.cstep) * fs;
                write(run.mem(j) * ms, &chunk[c..c + fs]);
            }
        }
        return false;
    }
    let mut range = false;
    let mut tmp = [0u8; 8];
    for j in 0..run.n {
        let (v, r) = convert_scalar(load(chunk, run.coff + j * run.cstep, file), mem_t);
        store(&mut tmp, 0, mem_t, v);
        write(run.mem(j) * ms, &tmp[..ms]);
        range |= r;
    }
    range
}
