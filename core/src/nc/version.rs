//! The netcdf-c release this library stands in for, defined here only: `nc_inq_libvers`,
//! `_NCProperties`, netcdf_meta.h (`NC_VERSION_*`, written by `make headers`) and
//! nc-config/netcdf.pc (the Makefile reads netcdf_meta.h) all take it from here. Clients test
//! it (netCDF4-python parses `nc_inq_libvers`, CMake projects compare `NC_VERSION`).

/// `major.minor.patch`.
pub const NETCDF: &str = "4.9.2";
pub const MAJOR: u32 = part(0);
pub const MINOR: u32 = part(1);
pub const PATCH: u32 = part(2);

/// The `n`th dot-separated number of `NETCDF`.
const fn part(n: usize) -> u32 {
    let bytes = NETCDF.as_bytes();
    let (mut i, mut seen, mut value) = (0, 0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'.' => seen += 1,
            d if seen == n => value = value * 10 + (d - b'0') as u32,
            _ => {}
        }
        i += 1;
    }
    value
}

#[cfg(test)]
mod tests {
    #[test]
    fn parts_spell_the_version() {
        assert_eq!(format!("{}.{}.{}", super::MAJOR, super::MINOR, super::PATCH), super::NETCDF);
    }
}
