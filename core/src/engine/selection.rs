//! A get/put request checked against the variable's shape as netcdf-c checks it: start,
//! count, stride and the memory map (`varm`) become one validated `Selection`.

use crate::error::{Error, Kind, Result, err};

/// A validated hyperslab: per dimension start, count and stride, and the memory map in
/// elements (C order for everything but `varm`).
#[derive(Debug, Clone)]
pub struct Selection {
    pub start: Vec<u64>,
    pub count: Vec<u64>,
    pub stride: Vec<u64>,
    pub imap: Vec<i64>,
    /// Memory index of the first selected element: non-zero only when negative imap entries
    /// make later elements sit before it (the caller's pointer then addresses that element).
    pub origin: u64,
}

impl Selection {
    pub fn nelems(&self) -> u64 {
        self.count.iter().product()
    }

    /// Number of memory slots the selection spans, counted from the lowest one (the user
    /// buffer must hold this many; the caller's pointer is at slot `origin`).
    pub fn mem_span(&self) -> Result<usize> {
        let mut max = self.origin as i64;
        for (&c, &m) in self.count.iter().zip(&self.imap) {
            if c == 0 {
                return Ok(0);
            }
            let reach = (c as i64 - 1).checked_mul(m.max(0)).ok_or_else(|| Error::new(Kind::Invalid, "imap overflow"))?;
            max = max.checked_add(reach).ok_or_else(|| Error::new(Kind::Invalid, "imap overflow"))?;
        }
        usize::try_from(max + 1).map_err(|_| Error::new(Kind::NoMem, "selection too large"))
    }
}

/// The raw pointer-free description of a data call's arguments (NULL = `None`).
pub struct Request<'a> {
    pub start: Option<&'a [usize]>,
    pub count: Option<&'a [usize]>,
    pub stride: Option<&'a [isize]>,
    pub imap: Option<&'a [isize]>,
}

/// Checks a request in netcdf-c's order and resolves its defaults (c-api.md §9.2).
pub fn select(shape: &[u64], unlimited: &[bool], write: bool, req: &Request<'_>) -> Result<Selection> {
    let rank = shape.len();
    if rank == 0 {
        return Ok(Selection { start: vec![], count: vec![], stride: vec![], imap: vec![], origin: 0 });
    }
    let start: Vec<u64> = match req.start {
        Some(s) => s.iter().map(|&x| x as u64).collect(),
        None => return err(Kind::InvalidCoords, "NULL start"),
    };
    let count: Vec<u64> = match req.count {
        Some(c) => c.iter().map(|&x| x as u64).collect(),
        None => shape.to_vec(),
    };
    let stride: Vec<u64> = match req.stride {
        Some(st) => {
            if st.iter().any(|&x| x <= 0) {
                return err(Kind::Stride, "stride must be positive");
            }
            st.iter().map(|&x| x as u64).collect()
        }
        None => vec![1; rank],
    };
    // One dimension at a time, its start and then its edge, as netcdf-c checks (the first
    // dimension's NC_EEDGE comes before the second's NC_EINVALCOORDS). A put that writes
    // nothing (some count is 0) is not checked against the edges; a get still is.
    let writes_nothing = write && count.contains(&0);
    for d in 0..rank {
        if write && unlimited[d] {
            continue;
        }
        if start[d] > shape[d] || (start[d] == shape[d] && count[d] > 0) {
            return err(Kind::InvalidCoords, format!("start {} beyond dimension length {}", start[d], shape[d]));
        }
        if count[d] == 0 || writes_nothing {
            continue;
        }
        let last = (count[d] - 1).checked_mul(stride[d]).and_then(|x| x.checked_add(start[d] + 1));
        if last.is_none_or(|l| l > shape[d]) {
            return err(Kind::Edge, "start + count exceeds dimension length");
        }
    }
    let imap: Vec<i64> = match req.imap {
        Some(m) => m.iter().map(|&x| x as i64).collect(),
        None => {
            let mut m = vec![1i64; rank];
            for d in (0..rank - 1).rev() {
                m[d] = m[d + 1].saturating_mul(count[d + 1] as i64);
            }
            m
        }
    };
    // Negative imap entries walk backwards from the caller's pointer.
    let mut origin: i64 = 0;
    for (&c, &m) in count.iter().zip(&imap) {
        if c > 0 && m < 0 {
            let back = (c as i64 - 1).checked_mul(-m).ok_or_else(|| Error::new(Kind::Invalid, "imap overflow"))?;
            origin = origin.checked_add(back).ok_or_else(|| Error::new(Kind::Invalid, "imap overflow"))?;
        }
    }
    Ok(Selection { start, count, stride, imap, origin: origin as u64 })
}
