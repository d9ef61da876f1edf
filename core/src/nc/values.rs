//! Typed value vectors (attribute values, fill values) and netcdf-c's element conversion.
//!
//! Conversion reproduces what netcdf-c compiled with gcc on x86-64 stores: C casts (not
//! Rust's saturating `as`) and NC_ERANGE flagged by comparisons in the source type
//! (c-api.md §9.5). The data path reuses the scalar helpers here.

use crate::error::{Kind, Result, err};
use crate::nc::types::NcType;

#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Byte(Vec<i8>),
    Char(Vec<u8>),
    Short(Vec<i16>),
    Int(Vec<i32>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    UByte(Vec<u8>),
    UShort(Vec<u16>),
    UInt(Vec<u32>),
    Int64(Vec<i64>),
    UInt64(Vec<u64>),
    Str(Vec<Option<String>>),
}

/// One element in a form every conversion can start from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scalar {
    Int(i128),
    F32(f32),
    F64(f64),
}

macro_rules! each_numeric {
    ($v:expr, $x:ident => $body:expr, $other:expr) => {
        match $v {
            Values::Byte($x) => $body,
            Values::Short($x) => $body,
            Values::Int($x) => $body,
            Values::UByte($x) => $body,
            Values::UShort($x) => $body,
            Values::UInt($x) => $body,
            Values::Int64($x) => $body,
            Values::UInt64($x) => $body,
            Values::Float($x) => $body,
            Values::Double($x) => $body,
            _ => $other,
        }
    };
}

pub(crate) trait Element: Copy {
    fn scalar(self) -> Scalar;
}
macro_rules! int_element {
    ($($t:ty),*) => {$(impl Element for $t { fn scalar(self) -> Scalar { Scalar::Int(self as i128) } })*};
}
int_element!(i8, u8, i16, u16, i32, u32, i64, u64);
impl Element for f32 {
    fn scalar(self) -> Scalar {
        Scalar::F32(self)
    }
}
impl Element for f64 {
    fn scalar(self) -> Scalar {
        Scalar::F64(self)
    }
}

const TWO63: f64 = 9_223_372_036_854_775_808.0;

/// C's `(int)x` on x86-64: truncation, with INT32_MIN for NaN and out-of-range values.
fn c_to_i32(v: f64) -> i32 {
    if v.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&v) { i32::MIN } else { v as i32 }
}

/// C's `(long long)x` on x86-64.
fn c_to_i64(v: f64) -> i64 {
    if v.is_nan() || !(-TWO63..TWO63).contains(&v) { i64::MIN } else { v as i64 }
}

fn c_to_u64(v: f64) -> u64 {
    // NaN takes the first branch, as the C comparison `!(v >= 2^63)` does.
    if v.partial_cmp(&TWO63).is_none_or(|o| o.is_lt()) { c_to_i64(v) as u64 } else { (c_to_i64(v - TWO63) as u64) ^ (1u64 << 63) }
}

fn int_bounds(t: NcType) -> (i128, i128) {
    match t {
        NcType::Byte => (i8::MIN as i128, i8::MAX as i128),
        NcType::UByte | NcType::Char => (0, u8::MAX as i128),
        NcType::Short => (i16::MIN as i128, i16::MAX as i128),
        NcType::UShort => (0, u16::MAX as i128),
        NcType::Int => (i32::MIN as i128, i32::MAX as i128),
        NcType::UInt => (0, u32::MAX as i128),
        NcType::Int64 => (i64::MIN as i128, i64::MAX as i128),
        _ => (0, u64::MAX as i128),
    }
}

/// An integer result wrapped to the destination width, as two's complement does.
fn wrap(v: i128, t: NcType) -> i128 {
    match t {
        NcType::Byte => v as i8 as i128,
        NcType::UByte | NcType::Char => v as u8 as i128,
        NcType::Short => v as i16 as i128,
        NcType::UShort => v as u16 as i128,
        NcType::Int => v as i32 as i128,
        NcType::UInt => v as u32 as i128,
        NcType::Int64 => v as i64 as i128,
        _ => v as u64 as i128,
    }
}

/// Converts one element to `dst`; the bool says "out of range" (NC_ERANGE).
pub(crate) fn convert_scalar(s: Scalar, dst: NcType) -> (Scalar, bool) {
    match (s, dst) {
        (Scalar::Int(v), NcType::Float) => (Scalar::F32(v as f32), false),
        (Scalar::Int(v), NcType::Double) => (Scalar::F64(v as f64), false),
        (Scalar::Int(v), _) => {
            let (lo, hi) = int_bounds(dst);
            (Scalar::Int(wrap(v, dst)), v < lo || v > hi)
        }
        (Scalar::F32(v), NcType::Float) => (Scalar::F32(v), false),
        (Scalar::F64(v), NcType::Double) => (Scalar::F64(v), false),
        (Scalar::F32(v), NcType::Double) => (Scalar::F64(v as f64), false),
        (Scalar::F64(v), NcType::Float) => {
            let max = f32::MAX as f64;
            (Scalar::F32(v as f32), v > max || v < -max)
        }
        (Scalar::F32(v), _) => float_to_int(v as f64, true, dst),
        (Scalar::F64(v), _) => float_to_int(v, false, dst),
    }
}

fn float_to_int(v: f64, from_f32: bool, dst: NcType) -> (Scalar, bool) {
    let (lo, hi) = int_bounds(dst);
    // netcdf-c compares against the bound converted to the source type; for float sources
    // and wide destinations that rounds the bound (observed: float 4294967296 -> uint not
    // flagged), while float -> int is flagged at 2^31 (c-api.md §9.5).
    let round = |b: i128| -> f64 {
        if from_f32 && matches!(dst, NcType::UInt | NcType::Int64 | NcType::UInt64) { b as f32 as f64 } else { b as f64 }
    };
    let out_of_range = v > round(hi) || v < round(lo);
    let value: i128 = match dst {
        NcType::UInt => (c_to_i64(v) as u64 & 0xffff_ffff) as i128,
        NcType::Int64 => c_to_i64(v) as i128,
        NcType::UInt64 => c_to_u64(v) as i128,
        _ => wrap(c_to_i32(v) as i128, dst),
    };
    (Scalar::Int(value), out_of_range)
}

impl Values {
    pub fn nctype(&self) -> NcType {
        match self {
            Values::Byte(_) => NcType::Byte,
            Values::Char(_) => NcType::Char,
            Values::Short(_) => NcType::Short,
            Values::Int(_) => NcType::Int,
            Values::Float(_) => NcType::Float,
            Values::Double(_) => NcType::Double,
            Values::UByte(_) => NcType::UByte,
            Values::UShort(_) => NcType::UShort,
            Values::UInt(_) => NcType::UInt,
            Values::Int64(_) => NcType::Int64,
            Values::UInt64(_) => NcType::UInt64,
            Values::Str(_) => NcType::String,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Values::Char(v) => v.len(),
            Values::Str(v) => v.len(),
            other => each_numeric!(other, x => x.len(), 0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn empty(t: NcType) -> Values {
        Values::from_scalars(t, std::iter::empty())
    }

    pub(crate) fn scalars(&self) -> Vec<Scalar> {
        each_numeric!(self, x => x.iter().map(|e| e.scalar()).collect(), Vec::new())
    }

    /// Builds a numeric vector of type `t` from already-converted scalars.
    pub(crate) fn from_scalars(t: NcType, it: impl Iterator<Item = Scalar>) -> Values {
        fn as_i(s: Scalar) -> i128 {
            match s {
                Scalar::Int(v) => v,
                Scalar::F32(v) => v as i128,
                Scalar::F64(v) => v as i128,
            }
        }
        fn as_f(s: Scalar) -> f64 {
            match s {
                Scalar::Int(v) => v as f64,
                Scalar::F32(v) => v as f64,
                Scalar::F64(v) => v,
            }
        }
        match t {
            NcType::Byte => Values::Byte(it.map(|s| as_i(s) as i8).collect()),
            NcType::Char => Values::Char(it.map(|s| as_i(s) as u8).collect()),
            NcType::Short => Values::Short(it.map(|s| as_i(s) as i16).collect()),
            NcType::Int => Values::Int(it.map(|s| as_i(s) as i32).collect()),
            NcType::Float => Values::Float(it.map(|s| as_f(s) as f32).collect()),
            NcType::Double => Values::Double(it.map(as_f).collect()),
            NcType::UByte => Values::UByte(it.map(|s| as_i(s) as u8).collect()),
            NcType::UShort => Values::UShort(it.map(|s| as_i(s) as u16).collect()),
            NcType::UInt => Values::UInt(it.map(|s| as_i(s) as u32).collect()),
            NcType::Int64 => Values::Int64(it.map(|s| as_i(s) as i64).collect()),
            NcType::UInt64 => Values::UInt64(it.map(|s| as_i(s) as u64).collect()),
            NcType::String => Values::Str(Vec::new()),
        }
    }

    /// One vector of type `t` from parts of that type (parts of another type are skipped).
    pub(crate) fn concat(t: NcType, parts: Vec<Values>) -> Values {
        let mut out = Values::from_scalars(t, std::iter::empty());
        for part in parts {
            match (&mut out, part) {
                (Values::Byte(a), Values::Byte(b)) => a.extend(b),
                (Values::Char(a), Values::Char(b)) => a.extend(b),
                (Values::Short(a), Values::Short(b)) => a.extend(b),
                (Values::Int(a), Values::Int(b)) => a.extend(b),
                (Values::Float(a), Values::Float(b)) => a.extend(b),
                (Values::Double(a), Values::Double(b)) => a.extend(b),
                (Values::UByte(a), Values::UByte(b)) => a.extend(b),
                (Values::UShort(a), Values::UShort(b)) => a.extend(b),
                (Values::UInt(a), Values::UInt(b)) => a.extend(b),
                (Values::Int64(a), Values::Int64(b)) => a.extend(b),
                (Values::UInt64(a), Values::UInt64(b)) => a.extend(b),
                (Values::Str(a), Values::Str(b)) => a.extend(b),
                _ => {}
            }
        }
        out
    }

    /// Converts to `dst` with netcdf-c's rules. Returns the values and whether any element
    /// was out of range (the caller reports NC_ERANGE after storing them).
    pub(crate) fn convert(&self, dst: NcType) -> Result<(Values, bool)> {
        let src = self.nctype();
        if src == dst {
            return Ok((self.clone(), false));
        }
        match (src, dst) {
            (NcType::Char, _) | (_, NcType::Char) => err(Kind::Char, "text <-> numbers"),
            (NcType::String, _) | (_, NcType::String) => err(Kind::BadType, "strings and numbers do not convert"),
            _ => {
                let mut range = false;
                let out = Values::from_scalars(
                    dst,
                    self.scalars().into_iter().map(|s| {
                        let (v, r) = convert_scalar(s, dst);
                        range |= r;
                        v
                    }),
                );
                Ok((out, range))
            }
        }
    }

    /// Native-endian bytes of a numeric or char vector (strings have no byte form).
    pub fn to_ne_bytes(&self) -> Vec<u8> {
        macro_rules! bytes {
            ($x:expr) => {
                $x.iter().flat_map(|e| e.to_ne_bytes()).collect()
            };
        }
        match self {
            Values::Char(v) => v.clone(),
            Values::Str(_) => Vec::new(),
            Values::Byte(x) => bytes!(x),
            Values::Short(x) => bytes!(x),
            Values::Int(x) => bytes!(x),
            Values::Float(x) => bytes!(x),
            Values::Double(x) => bytes!(x),
            Values::UByte(x) => x.clone(),
            Values::UShort(x) => bytes!(x),
            Values::UInt(x) => bytes!(x),
            Values::Int64(x) => bytes!(x),
            Values::UInt64(x) => bytes!(x),
        }
    }

    /// The inverse of `to_ne_bytes`; `bytes.len()` must be a multiple of the type size.
    pub fn from_ne_bytes(t: NcType, bytes: &[u8]) -> Values {
        macro_rules! parse {
            ($variant:ident, $ty:ty) => {
                Values::$variant(
                    bytes
                        .chunks_exact(std::mem::size_of::<$ty>())
                        .map(|c| <$ty>::from_ne_bytes(c.try_into().expect("chunk size")))
                        .collect(),
                )
            };
        }
        match t {
            NcType::Byte => parse!(Byte, i8),
            NcType::Char => Values::Char(bytes.to_vec()),
            NcType::Short => parse!(Short, i16),
            NcType::Int => parse!(Int, i32),
            NcType::Float => parse!(Float, f32),
            NcType::Double => parse!(Double, f64),
            NcType::UByte => Values::UByte(bytes.to_vec()),
            NcType::UShort => parse!(UShort, u16),
            NcType::UInt => parse!(UInt, u32),
            NcType::Int64 => parse!(Int64, i64),
            NcType::UInt64 => parse!(UInt64, u64),
            NcType::String => Values::Str(Vec::new()),
        }
    }

    /// The netCDF default fill value of a type, as a one-element vector.
    pub(crate) fn default_fill(t: NcType) -> Values {
        match t {
            NcType::Byte => Values::Byte(vec![-127]),
            NcType::Char => Values::Char(vec![0]),
            NcType::Short => Values::Short(vec![-32767]),
            NcType::Int => Values::Int(vec![-2147483647]),
            NcType::Float => Values::Float(vec![9.969_21e36_f32]),
            NcType::Double => Values::Double(vec![9.969_209_968_386_869e36]),
            NcType::UByte => Values::UByte(vec![255]),
            NcType::UShort => Values::UShort(vec![65535]),
            NcType::UInt => Values::UInt(vec![4294967295]),
            NcType::Int64 => Values::Int64(vec![-9223372036854775806]),
            NcType::UInt64 => Values::UInt64(vec![18446744073709551614]),
            NcType::String => Values::Str(vec![Some(String::new())]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: Scalar, t: NcType) -> (i128, bool) {
        match convert_scalar(s, t) {
            (Scalar::Int(v), r) => (v, r),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn c_cast_table() {
        assert_eq!(one(Scalar::Int(300), NcType::Byte), (44, true));
        assert_eq!(one(Scalar::Int(70000), NcType::Short), (4464, true));
        assert_eq!(one(Scalar::Int(-1), NcType::UByte), (255, true));
        assert_eq!(one(Scalar::F64(40000.0), NcType::Short), (-25536, true));
        assert_eq!(one(Scalar::F64(1000.7), NcType::Byte), (-24, true));
        assert_eq!(one(Scalar::F64(1e10), NcType::Short), (0, true));
        assert_eq!(one(Scalar::F64(f64::NAN), NcType::Int), (i32::MIN as i128, false));
        assert_eq!(one(Scalar::F64(f64::NAN), NcType::Short), (0, false));
        assert_eq!(one(Scalar::F64(-3e9), NcType::UInt), (1294967296, true));
        assert_eq!(one(Scalar::F64(-1.9), NcType::UInt), (4294967295, true));
        assert_eq!(one(Scalar::F64(5e9), NcType::UInt), (705032704, true));
        assert_eq!(one(Scalar::F64(-1.5), NcType::UInt64), (u64::MAX as i128, true));
        assert_eq!(one(Scalar::F64(f64::NAN), NcType::UInt64), (1i128 << 63, false));
        assert!(!one(Scalar::F32(4294967296.0), NcType::UInt).1);
        assert!(one(Scalar::F32(2147483648.0), NcType::Int).1);
        assert!(!one(Scalar::F64(TWO63), NcType::Int64).1);
    }
}

/// IEEE half → single (exact).
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}

/// Single → IEEE half, rounding to nearest even; overflow gives infinity, NaN stays NaN.
pub(crate) fn f32_to_f16(f: f32) -> u16 {
    half::f16::from_f32(f).to_bits()
}

#[cfg(test)]
mod half_tests {
    use super::*;

    #[test]
    fn half_floats() {
        for (h, f) in [
            (0x3c00u16, 1.0f32),
            (0xc000, -2.0),
            (0x7bff, 65504.0),
            (0x0001, 5.960_464_5e-8),
            (0x0400, 6.103_515_6e-5),
            (0x3555, 0.333_251_95),
        ] {
            assert_eq!(f16_to_f32(h), f);
            assert_eq!(f32_to_f16(f), h);
        }
        assert_eq!(f32_to_f16(1e6), 0x7c00);
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
        assert_eq!(f32_to_f16(1.0 + 1.0 / 4096.0), 0x3c00, "ties to even");
        for h in 0..0x7c00u16 {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h);
        }
    }
}
