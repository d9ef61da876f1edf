//! The CDMS calendar helpers ncdump uses for `-t` (times as ISO dates).

#![allow(non_snake_case, non_camel_case_types, clippy::upper_case_acronyms)]

use super::text;
use nczarr_macros::export;
use std::ffi::{c_char, c_int};

/// `cdCompTime` of netcdf-c's cdTime library.
#[repr(C)]
pub struct cdCompTime {
    pub year: std::ffi::c_long,
    pub month: std::ffi::c_short,
    pub day: std::ffi::c_short,
    pub hour: f64,
}

/// Days from 1970-01-01 in the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// "YYYY-MM-DD[ T]hh:mm:ss" → (y, m, d, hours).
fn parse_time(s: &str) -> Option<(i64, i64, i64, f64)> {
    let s = s.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], s[i + 1..].trim()),
        None => (s, ""),
    };
    let neg = date.starts_with('-');
    let mut parts = date.trim_start_matches('-').split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next().map(|p| p.parse().ok()).unwrap_or(Some(1))?;
    let d: i64 = parts.next().map(|p| p.parse().ok()).unwrap_or(Some(1))?;
    let mut hours = 0.0;
    if !time.is_empty() {
        let time = time.trim_end_matches('Z');
        let mut tp = time.split(':');
        let h: f64 = tp.next()?.parse().ok()?;
        let mi: f64 = tp.next().map(|p| p.parse().ok()).unwrap_or(Some(0.0))?;
        let se: f64 = tp.next().map(|p| p.parse().ok()).unwrap_or(Some(0.0))?;
        hours = h + mi / 60.0 + se / 3600.0;
    }
    Some((if neg { -y } else { y }, m, d, hours))
}

/// Units ("days since ...") → (seconds per unit, base (y, m, d, hours)).
fn parse_relunits(s: &str) -> Option<(f64, (i64, i64, i64, f64))> {
    let lower = s.trim().to_ascii_lowercase();
    let (unit, base) = lower.split_once(" since ")?;
    let secs = match unit.trim() {
        "second" | "seconds" | "sec" | "secs" | "s" => 1.0,
        "minute" | "minutes" | "min" | "mins" => 60.0,
        "hour" | "hours" | "hr" | "hrs" | "h" => 3600.0,
        "day" | "days" | "d" => 86400.0,
        "week" | "weeks" => 604800.0,
        _ => return None,
    };
    Some((secs, parse_time(base)?))
}

/// Only the standard/Gregorian calendars (cdCalenType 0x1111 and mixed 0x2111) are converted;
/// others report failure and ncdump prints the raw numbers.
fn gregorian(timetype: c_int) -> bool {
    matches!(timetype, 0x1111 | 0x2111)
}

#[export(on_panic = 1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cdParseRelunits(
    timetype: c_int,
    relunits: *mut c_char,
    unit: *mut c_int,
    base_comptime: *mut cdCompTime,
) -> c_int {
    // SAFETY: see `text`.
    let Some(s) = (unsafe { text(relunits) }) else { return 1 };
    if !gregorian(timetype) {
        return 1;
    }
    let Some((secs, (y, m, d, h))) = parse_relunits(&String::from_utf8_lossy(s)) else { return 1 };
    let code = match secs as i64 {
        1 => 4,
        60 => 3,
        3600 => 2,
        86400 => 1,
        _ => 0,
    };
    // SAFETY: optional out-pointers.
    unsafe {
        crate::ffi::put(unit, code);
        crate::ffi::put(base_comptime, cdCompTime { year: y as _, month: m as _, day: d as _, hour: h });
    }
    0
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cdRel2Iso(timetype: c_int, relunits: *mut c_char, separator: c_int, reltime: f64, chartime: *mut c_char) {
    if chartime.is_null() {
        return;
    }
    // SAFETY: see `text`.
    let parsed = unsafe { text(relunits) }.and_then(|s| parse_relunits(&String::from_utf8_lossy(s)));
    let out = match (gregorian(timetype), parsed) {
        (true, Some((secs, (y, m, d, h)))) => {
            let base = days_from_civil(y, m, d) as f64 * 86400.0 + h * 3600.0;
            let t = base + reltime * secs;
            let days = (t / 86400.0).floor();
            let mut rem = t - days * 86400.0;
            let (yy, mm, dd) = civil_from_days(days as i64);
            let hh = (rem / 3600.0).floor();
            rem -= hh * 3600.0;
            let mi = (rem / 60.0).floor();
            let ss = rem - mi * 60.0;
            let sep = if separator == 0 { ' ' } else { separator as u8 as char };
            if ss.fract().abs() > 1e-6 {
                format!("{yy}-{mm:02}-{dd:02}{sep}{hh:02}:{mi:02}:{ss:09.6}")
            } else {
                format!("{yy}-{mm:02}-{dd:02}{sep}{hh:02}:{mi:02}:{:02}", ss.round() as i64)
            }
        }
        _ => format!("{reltime}"),
    };
    // SAFETY: ncdump passes a buffer of at least CD_MAX_CHARTIME (64) bytes.
    unsafe { crate::ffi::put_name(chartime, &out[..out.len().min(63)]) };
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cdSetErrOpts(opts: c_int) {
    let _ = opts;
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cdChar2Comp(timetype: c_int, chartime: *mut c_char, comptime: *mut cdCompTime) {
    let _ = timetype;
    // SAFETY: see `text`.
    let parsed = unsafe { text(chartime) }.and_then(|s| parse_time(&String::from_utf8_lossy(s)));
    let (y, m, d, h) = parsed.unwrap_or((0, 1, 1, 0.0));
    // SAFETY: optional out-pointer.
    unsafe { crate::ffi::put(comptime, cdCompTime { year: y as _, month: m as _, day: d as _, hour: h }) };
}

/// `CdTime` of cdTime's "human" form, as ncgen passes it to `Cdh2e`.
#[repr(C)]
pub struct CdTime {
    pub year: std::ffi::c_long,
    pub month: std::ffi::c_short,
    pub day: std::ffi::c_short,
    pub hour: f64,
    pub baseYear: std::ffi::c_long,
    pub timeType: c_int,
}

/// Human time → epochal hours since the base year (Gregorian).
#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Cdh2e(htime: *mut CdTime, etime: *mut f64) {
    if htime.is_null() {
        return;
    }
    // SAFETY: non-NULL struct from ncgen.
    let h = unsafe { &*htime };
    let days = days_from_civil(h.year, h.month as i64, h.day as i64) - days_from_civil(h.baseYear, 1, 1);
    // SAFETY: optional out-pointer.
    unsafe { crate::ffi::put(etime, days as f64 * 24.0 + h.hour) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
        let (secs, base) = parse_relunits("days since 2000-01-01 00:00:00").unwrap();
        assert_eq!(secs, 86400.0);
        assert_eq!(base, (2000, 1, 1, 0.0));
    }
}
