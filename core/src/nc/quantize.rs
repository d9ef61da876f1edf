//! Lossy quantization applied to float/double data as it is written (`nc_def_var_quantize`).
//!
//! The three algorithms reproduce netcdf-c's bit patterns so that a dataset written through
//! us compresses and reads exactly like one written by netcdf-c: BitGroom alternately shaves
//! and sets the low mantissa bits (by the element's position in the written block), BitRound
//! rounds to a number of significant bits, Granular BitRound picks the bits per value from its
//! decimal magnitude. Fill values, zeros and NaN are never altered.

use crate::nc::types::NcType;

/// The attribute recording each mode's setting (index = mode - 1), an int holding the nsd.
pub(crate) const ATT_NAMES: [&str; 3] = [
    "_QuantizeBitGroomNumberOfSignificantDigits",
    "_QuantizeGranularBitRoundNumberOfSignificantDigits",
    "_QuantizeBitRoundNumberOfSignificantBits",
];

const MANT_BITS_F32: i32 = 23;
const MANT_BITS_F64: i32 = 52;
// netcdf-c computes these as M_LN10 / M_LN2 and M_LN2 / M_LN10: each is one ulp away from
// the correctly rounded log2(10) and log10(2), and that ulp decides how many bits exact
// powers of ten keep in Granular BitRound (1e4 stays 10000 only with netcdf-c's values).
const BITS_PER_DIGIT: f64 = std::f64::consts::LN_10 / std::f64::consts::LN_2;
const DIGITS_PER_BIT: f64 = std::f64::consts::LN_2 / std::f64::consts::LN_10;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Mode {
    BitGroom,
    GranularBitRound,
    BitRound,
}

/// A variable's quantization settings, with the masks precomputed for the fixed-width modes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantizer {
    mode: Mode,
    nsd: i32,
    double: bool,
    /// Elements equal to this (the variable's fill value) are left alone.
    fill: f64,
    /// Mask keeping the retained bits (AND); its complement sets the dropped bits (OR).
    keep: u64,
    /// Half of the last retained bit's weight, added before shaving to round.
    half: u64,
}

fn masks(keep_bits: i32, mant_bits: i32, width: u32) -> (u64, u64) {
    let zero_bits = mant_bits - keep_bits;
    let all = if width == 32 { u32::MAX as u64 } else { u64::MAX };
    if zero_bits <= 0 {
        // Nothing to drop: keep everything, add nothing.
        return (all, 0);
    }
    let keep = (all << zero_bits) & all;
    let ones = !keep & all;
    let half = ones & (keep >> 1);
    (keep, half)
}

impl Quantizer {
    /// `None` unless the mode asks for quantization of a float or double variable.
    pub(crate) fn new(mode: i32, nsd: i32, nctype: NcType, fill: f64) -> Option<Quantizer> {
        let mode = match mode {
            1 => Mode::BitGroom,
            2 => Mode::GranularBitRound,
            3 => Mode::BitRound,
            _ => return None,
        };
        let double = match nctype {
            NcType::Float => false,
            NcType::Double => true,
            _ => return None,
        };
        let (mant, width) = if double { (MANT_BITS_F64, 64) } else { (MANT_BITS_F32, 32) };
        let keep_bits = match mode {
            // Decimal digits → bits, rounded up, plus one for the corner cases netcdf-c guards.
            Mode::BitGroom => (nsd as f64 * BITS_PER_DIGIT).ceil() as i32 + 1,
            Mode::BitRound => nsd,
            Mode::GranularBitRound => mant,
        };
        let (keep, half) = masks(keep_bits, mant, width);
        Some(Quantizer { mode, nsd, double, fill, keep, half })
    }

    fn untouched(&self, v: f64) -> bool {
        v == self.fill || v == 0.0 || v.is_nan()
    }

    /// Bits to keep for one value in Granular BitRound (netcdf-c's per-value formula).
    fn granular_keep_bits(&self, v: f64) -> i32 {
        let (mant, exp) = frexp(v);
        let mant_log10 = mant.abs().log10();
        let digits = (exp as f64 * DIGITS_PER_BIT + mant_log10).floor() as i32 + 1;
        let quantum_pow = (BITS_PER_DIGIT * (digits - self.nsd) as f64).floor() as i32;
        let bits = ((exp as f64 - BITS_PER_DIGIT * mant_log10).floor() as i32 - quantum_pow).abs();
        bits - 1
    }

    fn apply_bits(&self, bits: u64, v: f64, position: usize) -> u64 {
        let (keep, half) = match self.mode {
            Mode::GranularBitRound => {
                let (mant, width) = if self.double { (MANT_BITS_F64, 64) } else { (MANT_BITS_F32, 32) };
                masks(self.granular_keep_bits(v), mant, width)
            }
            _ => (self.keep, self.half),
        };
        let all = if self.double { u64::MAX } else { u32::MAX as u64 };
        match self.mode {
            Mode::BitGroom if position.is_multiple_of(2) => bits & keep,
            Mode::BitGroom => bits | (!keep & all),
            _ => (bits.wrapping_add(half) & all) & keep,
        }
    }

    pub(crate) fn f32(&self, v: f32, position: usize) -> f32 {
        if self.untouched(v as f64) {
            return v;
        }
        f32::from_bits(self.apply_bits(v.to_bits() as u64, v as f64, position) as u32)
    }

    pub(crate) fn f64(&self, v: f64, position: usize) -> f64 {
        if self.untouched(v) {
            return v;
        }
        f64::from_bits(self.apply_bits(v.to_bits(), v, position))
    }

    /// Quantizes native-order elements of `buf` in place: element `i` of the slice sits at
    /// position `first + i * step` of the written block (BitGroom alternates by position).
    pub(crate) fn apply(&self, buf: &mut [u8], elems: impl Iterator<Item = (usize, usize)>) {
        for (at, position) in elems {
            if self.double {
                let b = &mut buf[at * 8..at * 8 + 8];
                let v = f64::from_ne_bytes(b.try_into().expect("8 bytes"));
                b.copy_from_slice(&self.f64(v, position).to_ne_bytes());
            } else {
                let b = &mut buf[at * 4..at * 4 + 4];
                let v = f32::from_ne_bytes(b.try_into().expect("4 bytes"));
                b.copy_from_slice(&self.f32(v, position).to_ne_bytes());
            }
        }
    }
}

/// C's `frexp`: `v = mant * 2^exp` with `0.5 <= |mant| < 1` for finite non-zero `v`.
fn frexp(v: f64) -> (f64, i32) {
    if v == 0.0 || !v.is_finite() {
        return (v, 0);
    }
    let bits = v.to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i32;
    if raw_exp == 0 {
        // Subnormal: scale into the normal range first.
        let (m, e) = frexp(v * f64::from_bits(0x4350000000000000)); // 2^54
        return (m, e - 54);
    }
    let mant = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (mant, raw_exp - 1022)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frexp_matches_c() {
        assert_eq!(frexp(1.0), (0.5, 1));
        assert_eq!(frexp(-3.0), (-0.75, 2));
        assert_eq!(frexp(0.1).1, -3);
        let (m, e) = frexp(5e-324);
        assert_eq!(m * 2f64.powi(e + 1000) * 2f64.powi(-1000), 5e-324);
    }

    #[test]
    fn bitgroom_alternates_and_spares_specials() {
        let q = Quantizer::new(1, 3, NcType::Float, 9.969_209_968_386_869e36).unwrap();
        // 3 digits → 11 bits kept of 23: low 12 bits shaved (even) or set (odd).
        let v = std::f32::consts::PI;
        assert_eq!(q.f32(v, 0).to_bits(), v.to_bits() & !0xfff);
        assert_eq!(q.f32(v, 1).to_bits(), v.to_bits() | 0xfff);
        assert_eq!(q.f32(0.0, 0), 0.0);
        assert!(q.f32(f32::NAN, 0).is_nan());
        assert_eq!(q.f32(9.969_21e36, 0), 9.969_21e36);
        assert!((q.f32(v, 0) - v).abs() < 1e-3);
    }

    #[test]
    fn bitround_rounds_to_nearest() {
        let q = Quantizer::new(3, 10, NcType::Double, f64::MAX).unwrap();
        let v = 1.0 + 2f64.powi(-11); // exactly half an ulp of a 10-bit mantissa above 1.0
        assert_eq!(q.f64(v, 0), 1.0 + 2f64.powi(-10));
        assert_eq!(q.f64(1.0 + 2f64.powi(-12), 0), 1.0);
    }

    #[test]
    fn granular_keeps_requested_digits() {
        let q = Quantizer::new(2, 4, NcType::Double, f64::MAX).unwrap();
        for v in [123.456789, 0.000123456789, -98765.4321, 3.0e10] {
            let r = q.f64(v, 0);
            // Within half a unit of the 4th significant digit.
            assert!(((r - v) / v).abs() < 5e-4, "{v} -> {r}");
            assert_ne!(r.to_bits(), v.to_bits());
        }
    }

    #[test]
    fn granular_matches_netcdf_c_at_powers_of_ten() {
        // Values netcdf-c 4.9.0 and 4.10.1 write for nsd 3 (issue: 1e4 must stay 10000).
        let q = Quantizer::new(2, 3, NcType::Double, f64::MAX).unwrap();
        let got: Vec<f64> = [1234.5, 1e4, 1e5, 1e6].iter().map(|&v| q.f64(v, 0)).collect();
        assert_eq!(got, [1232.0, 10000.0, 100032.0, 999936.0]);
        let q = Quantizer::new(2, 3, NcType::Float, f32::MAX as f64).unwrap();
        assert_eq!(q.f32(1e9, 0).to_bits(), 0x4e6e_6000);
    }
}
