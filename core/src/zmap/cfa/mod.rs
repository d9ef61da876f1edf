//! Aggregated datasets (CFA-netCDF 0.4/0.5, CF aggregation): the store behind the logical
//! dataset. Its metadata and the variables held in the master live in memory; a chunk of an
//! aggregated variable is read from the fragment file that holds it when it is asked for.
//!
//! The chunk grid of an aggregated variable divides every fragment boundary (per dimension,
//! the greatest common divisor of the boundaries), so each chunk lies in one fragment: a
//! chunk read is one hyperslab read of one fragment. A chunk no fragment covers is absent,
//! and reads as the fill value (CF: a missing fragment is missing data).

pub mod write;

use super::memory::MemoryStore;
use super::{Caps, Key, Zmap};
use crate::error::{Error, Kind, Result, err};
use crate::nc::types::NcType;
use std::sync::Arc;

/// One fragment of an aggregated variable: where it sits in the aggregated array and where
/// its data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    /// The fragment file's name, resolved (a path or URL the library opens).
    pub file: String,
    /// The variable in the fragment file.
    pub ncvar: String,
    /// First index of the fragment in the aggregated array, per dimension.
    pub start: Vec<usize>,
    /// The fragment's shape.
    pub shape: Vec<usize>,
    /// CF `unique_values`: every cell holds this one value (the aggregated variable's type,
    /// native byte order), and there is no file.
    pub constant: Option<Vec<u8>>,
}

/// Reads fragment data (the C boundary opens fragment files through the library itself, so
/// a fragment may be netCDF-3, netCDF-4 or NCZarr, local or on S3).
pub trait FragmentReader: Send + Sync {
    /// `count` elements at `start` of `fragment`'s variable, as `xtype` in native byte
    /// order, into `out` (exactly their size). `fill`: the aggregated variable's fill value
    /// (one element), for the cells a packed fragment marks missing (`Packing`).
    fn read(&self, fragment: &Fragment, xtype: NcType, fill: &[u8], start: &[usize], count: &[usize], out: &mut [u8]) -> Result<()>;
}

/// A fragment variable's own packing (CF 8.1: `scale_factor`, `add_offset`), which CF
/// aggregation (CF-1.12 §2.8, and cfdm) undoes before the values enter the aggregated variable:
/// each stored value `r` becomes `r * scale + offset` converted to the aggregated variable's
/// type, and a value the fragment marks missing (its `_FillValue`, else its type's default
/// fill, and its `missing_value`s) becomes the aggregated variable's fill value.
#[derive(Debug, Clone, PartialEq)]
pub struct Packing {
    pub scale: f64,
    pub offset: f64,
    missing: Vec<f64>,
}

impl Packing {
    /// `scale`/`offset` as the fragment's attributes give them (absent: `None`); `fill`: its
    /// `_FillValue` if it has one; `missing`: its `missing_value`s. `None`: not packed.
    pub fn of(fragment_type: NcType, scale: Option<f64>, offset: Option<f64>, fill: Option<f64>, missing: &[f64]) -> Option<Packing> {
        if scale.is_none() && offset.is_none() {
            return None;
        }
        let default = crate::nc::values::Values::default_fill(fragment_type).scalars().first().map(|s| match *s {
            crate::nc::values::Scalar::Int(i) => i as f64,
            crate::nc::values::Scalar::F32(f) => f64::from(f),
            crate::nc::values::Scalar::F64(d) => d,
        });
        let mut marks: Vec<f64> = fill.or(default).into_iter().collect();
        marks.extend_from_slice(missing);
        Some(Packing { scale: scale.unwrap_or(1.0), offset: offset.unwrap_or(0.0), missing: marks })
    }

    /// The stored values `raw` (read as doubles) unpacked into `out` as `xtype` (native byte
    /// order); missing ones become `fill`. Integer types take the nearest value; one out of
    /// their range is NC_ERANGE's conversion (as a get into a narrower type).
    pub fn unpack(&self, raw: &[f64], xtype: NcType, fill: &[u8], out: &mut [u8]) -> Result<()> {
        let size = xtype.size();
        if out.len() != raw.len() * size || fill.len() != size {
            return err(Kind::Internal, "unpacking: buffer sizes disagree");
        }
        for (r, cell) in raw.iter().zip(out.chunks_exact_mut(size)) {
            if r.is_nan() || self.missing.iter().any(|m| m == r) {
                cell.copy_from_slice(fill);
                continue;
            }
            let v = r * self.scale + self.offset;
            let v = if matches!(xtype, NcType::Float | NcType::Double) { v } else { v.round() };
            let bytes = crate::nc::values::Values::Double(vec![v]).convert(xtype).map(|(c, _)| c.to_ne_bytes());
            match bytes {
                Ok(b) if b.len() == size => cell.copy_from_slice(&b),
                _ => return err(Kind::BadType, format!("cannot unpack into {}", xtype.name())),
            }
        }
        Ok(())
    }
}

/// One aggregated variable as the store serves it.
#[derive(Debug, Clone)]
pub struct Aggregated {
    /// The variable's key in the store (`tas`, `g/tas`).
    pub key: String,
    pub shape: Vec<usize>,
    pub chunks: Vec<usize>,
    pub xtype: NcType,
    pub fragments: Vec<Fragment>,
}

impl Aggregated {
    /// The chunk shape that divides every fragment boundary of `fragments` in an array of
    /// `shape` (a dimension without inner boundaries is one chunk long... as long as its
    /// fragments, the first one's extent).
    pub fn chunk_shape(shape: &[usize], fragments: &[Fragment]) -> Vec<usize> {
        fn gcd(a: usize, b: usize) -> usize {
            if b == 0 { a } else { gcd(b, a % b) }
        }
        (0..shape.len())
            .map(|d| {
                let mut g = 0;
                for f in fragments {
                    for edge in [f.start[d], f.start[d] + f.shape[d]] {
                        if edge > 0 && edge < shape[d] {
                            g = gcd(g, edge);
                        }
                    }
                }
                if g == 0 { shape[d].max(1) } else { g }
            })
            .collect()
    }

    /// The chunk `index` as bytes (native order, the whole chunk; cells past the array's
    /// edge hold `fill`); `None` when no fragment covers it.
    fn chunk(&self, index: &[usize], fill: &[u8], reader: &dyn FragmentReader) -> Result<Option<Vec<u8>>> {
        let size = self.xtype.size();
        let n = self.chunks.len();
        let start: Vec<usize> = (0..n).map(|d| index[d] * self.chunks[d]).collect();
        if (0..n).any(|d| start[d] >= self.shape[d].max(1)) {
            return Ok(None);
        }
        let count: Vec<usize> = (0..n).map(|d| self.chunks[d].min(self.shape[d] - start[d])).collect();
        let Some(frag) = self.fragments.iter().find(|f| (0..n).all(|d| f.start[d] <= start[d] && start[d] < f.start[d] + f.shape[d]))
        else {
            return Ok(None);
        };
        if (0..n).any(|d| start[d] + count[d] > frag.start[d] + frag.shape[d]) {
            return err(Kind::Invalid, format!("{}: chunk {index:?} crosses the edge of fragment {}", self.key, frag.file));
        }
        let within: Vec<usize> = (0..n).map(|d| start[d] - frag.start[d]).collect();
        let cells: usize = count.iter().product();
        let region = match &frag.constant {
            Some(value) => value.repeat(cells),
            None => {
                let mut region = super::zeroed((cells * size) as u64)?;
                reader.read(frag, self.xtype, fill, &within, &count, &mut region)?;
                region
            }
        };
        let whole: usize = self.chunks.iter().product::<usize>().max(1);
        if cells == whole {
            return Ok(Some(region));
        }
        // An edge chunk: the region's rows go into a chunk-sized buffer of fill values.
        let mut out = Vec::with_capacity(whole * size);
        for _ in 0..whole {
            out.extend_from_slice(fill);
        }
        let row = count.last().copied().unwrap_or(1) * size;
        let rows = cells / count.last().copied().unwrap_or(1).max(1);
        let mut at = vec![0usize; n.saturating_sub(1)];
        for r in 0..rows {
            let mut offset = at.iter().zip(&self.chunks).fold(0, |o, (i, c)| o * c + i);
            if n > 0 {
                offset *= self.chunks[n - 1];
            }
            out[offset * size..offset * size + row].copy_from_slice(&region[r * row..(r + 1) * row]);
            for d in (0..n.saturating_sub(1)).rev() {
                at[d] += 1;
                if at[d] < count[d] {
                    break;
                }
                at[d] = 0;
            }
        }
        Ok(Some(out))
    }
}

/// The logical dataset's store: memory, with aggregated variables' chunks from fragments.
pub struct CfaStore {
    inner: Arc<MemoryStore>,
    vars: Vec<(Aggregated, Vec<u8>)>,
    reader: Arc<dyn FragmentReader>,
    name: String,
    latency_bound: bool,
}

impl CfaStore {
    /// `vars`: each aggregated variable with its fill value (one element, native order).
    pub fn new(
        name: &str,
        inner: Arc<MemoryStore>,
        vars: Vec<(Aggregated, Vec<u8>)>,
        reader: Arc<dyn FragmentReader>,
        latency_bound: bool,
    ) -> CfaStore {
        CfaStore { inner, vars, reader, name: name.to_string(), latency_bound }
    }

    /// The aggregated variable and chunk index a key names, if it names a chunk of one.
    fn chunk_of(&self, key: &str) -> Option<(&Aggregated, &[u8], Vec<usize>)> {
        self.vars.iter().find_map(|(var, fill)| {
            let rest = key.strip_prefix(var.key.as_str())?.strip_prefix('/')?;
            if rest.starts_with('.') || rest.contains("zarr.json") {
                return None;
            }
            let index: Vec<usize> = rest.split(['.', '/']).filter(|p| *p != "c").map(|p| p.parse().ok()).collect::<Option<_>>()?;
            (index.len() == var.chunks.len().max(1)).then_some((var, fill.as_slice(), index))
        })
    }
}

/// Fragment files fetched at once from S3 by one batch (each held in memory until read).
const FETCHES_IN_FLIGHT: usize = 16;

/// `work` on every item, on up to `threads` threads; the results in the items' order.
fn concurrently<T: Send, R: Send>(items: Vec<T>, threads: usize, work: impl Fn(T) -> Result<R> + Sync) -> Result<Vec<R>> {
    let n = items.len();
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let results: Vec<std::sync::Mutex<Option<Result<R>>>> = (0..n).map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.min(n) {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().ok().and_then(|mut q| q.next());
                    let Some((i, item)) = next else { break };
                    let got = work(item);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(got);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .map(|slot| slot.into_inner().ok().flatten().unwrap_or_else(|| err(Kind::Internal, "a fragment read stopped before it finished")))
        .collect()
}

impl Zmap for CfaStore {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        match self.chunk_of(key.as_str()) {
            Some((var, fill, index)) if !var.chunks.is_empty() => var.chunk(&index, fill, self.reader.as_ref()),
            _ => self.inner.get(key),
        }
    }

    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        // Fragments on S3 are fetched concurrently (each a round trip or more), by more
        // threads than cores: they wait on the network, not the CPU. The reader serialises
        // what must be serial (the real library's reads).
        if self.latency_bound && keys.len() > 1 {
            return concurrently(keys.iter().collect(), FETCHES_IN_FLIGHT, |k| self.get(k));
        }
        keys.iter().map(|k| self.get(k)).collect()
    }

    /// Chunks straight into the caller's memory, fetched as `get_many` fetches them (one at
    /// a time, 64 fragments of 4 MiB behind 20 ms took 5.9 s, 4.7× one netCDF-4 file).
    fn read_many_into(&self, keys: &[Key], outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        let work = |(k, out): (&Key, &mut [u8])| crate::zmap::copy_exact(k, self.get(k)?, out);
        if self.latency_bound && keys.len() > 1 {
            return concurrently(keys.iter().zip(outs).collect(), FETCHES_IN_FLIGHT, work);
        }
        keys.iter().zip(outs).map(work).collect()
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        if self.chunk_of(key.as_str()).is_some() {
            return Err(Error::new(Kind::ReadOnly, format!("{}: aggregated variables are read-only here", self.name)));
        }
        self.inner.put(key, value)
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        self.inner.list_dir(prefix)
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        self.inner.delete_prefix(prefix)
    }

    fn describe(&self) -> String {
        format!("aggregated dataset {}", self.name)
    }

    fn caps(&self) -> Caps {
        Caps { batch_size: 64, latency_bound: self.latency_bound, concurrent_puts: false, versioned: false, raw_chunks: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fragment data whose every cell holds its index in the aggregated array (1-D or 2-D).
    struct Counting(Vec<usize>);

    impl FragmentReader for Counting {
        fn read(&self, f: &Fragment, xtype: NcType, _fill: &[u8], start: &[usize], count: &[usize], out: &mut [u8]) -> Result<()> {
            assert_eq!(xtype, NcType::Int);
            let cols = if count.len() == 2 { count[1] } else { 1 };
            for (i, cell) in out.chunks_mut(4).enumerate() {
                let (r, c) = (i / cols, i % cols);
                let global = if count.len() == 2 {
                    (f.start[0] + start[0] + r) * self.0[1] + f.start[1] + start[1] + c
                } else {
                    f.start[0] + start[0] + i
                };
                cell.copy_from_slice(&(global as i32).to_ne_bytes());
            }
            Ok(())
        }
    }

    #[test]
    fn packed_fragments_unpack_into_the_aggregated_type() {
        // cfdm's case: short v, scale 0.01, offset 273.15, _FillValue -999; stored -200, 0, 100.
        let p = Packing::of(NcType::Short, Some(0.01), Some(273.15), Some(-999.0), &[]).unwrap();
        let fill = (-1.0e30f32).to_ne_bytes();
        let mut out = vec![0u8; 16];
        p.unpack(&[-200.0, 0.0, 100.0, -999.0], NcType::Float, &fill, &mut out).unwrap();
        let got: Vec<f32> = out.chunks(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, [271.15f32, 273.15, 274.15, -1.0e30]);
        // No _FillValue: the type's default fill is missing; missing_value too.
        let p = Packing::of(NcType::Short, Some(2.0), None, None, &[7.0]).unwrap();
        let mut out = vec![0u8; 24];
        p.unpack(&[-32767.0, 7.0, 3.0], NcType::Double, &(-9.0f64).to_ne_bytes(), &mut out).unwrap();
        let got: Vec<f64> = out.chunks(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, [-9.0, -9.0, 6.0]);
        // Into an integer type: the nearest value.
        let p = Packing::of(NcType::Byte, Some(0.5), Some(0.0), None, &[]).unwrap();
        let mut out = vec![0u8; 4];
        p.unpack(&[3.0], NcType::Int, &0i32.to_ne_bytes(), &mut out).unwrap();
        assert_eq!(i32::from_ne_bytes(out[..].try_into().unwrap()), 2);
        assert_eq!(Packing::of(NcType::Short, None, None, Some(1.0), &[]), None, "no packing attributes: not packed");
    }

    fn frag(start: &[usize], shape: &[usize]) -> Fragment {
        Fragment { file: format!("f{start:?}"), ncvar: "v".into(), start: start.to_vec(), shape: shape.to_vec(), constant: None }
    }

    fn ints(b: &[u8]) -> Vec<i32> {
        b.chunks(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect()
    }

    #[test]
    fn chunks_divide_every_fragment_edge() {
        let regular: Vec<Fragment> = (0..4).map(|i| frag(&[i * 3, 0], &[3, 18])).collect();
        assert_eq!(Aggregated::chunk_shape(&[12, 18], &regular), vec![3, 18]);
        let ragged = vec![frag(&[0], &[6]), frag(&[6], &[2])];
        assert_eq!(Aggregated::chunk_shape(&[8], &ragged), vec![6]);
        let uneven = vec![frag(&[0], &[4]), frag(&[4], &[6]), frag(&[10], &[2])];
        assert_eq!(Aggregated::chunk_shape(&[12], &uneven), vec![2]);
    }

    #[test]
    fn edge_chunks_and_holes() {
        // 2-D 5 x 7 in fragments of 3 x 4 (ragged at both far edges), one fragment missing.
        let frags = vec![frag(&[0, 0], &[3, 4]), frag(&[0, 4], &[3, 3]), frag(&[3, 0], &[2, 4])];
        let agg = Aggregated {
            key: "v".into(),
            shape: vec![5, 7],
            chunks: Aggregated::chunk_shape(&[5, 7], &frags),
            xtype: NcType::Int,
            fragments: frags,
        };
        assert_eq!(agg.chunks, vec![3, 4]);
        let reader = Counting(vec![5, 7]);
        let fill = (-1i32).to_ne_bytes();
        let c = ints(&agg.chunk(&[0, 1], &fill, &reader).unwrap().unwrap());
        assert_eq!(c, vec![4, 5, 6, -1, 11, 12, 13, -1, 18, 19, 20, -1]);
        let c = ints(&agg.chunk(&[1, 0], &fill, &reader).unwrap().unwrap());
        assert_eq!(c, vec![21, 22, 23, 24, 28, 29, 30, 31, -1, -1, -1, -1]);
        assert!(agg.chunk(&[1, 1], &fill, &reader).unwrap().is_none(), "no fragment: fill");
        let mut constant = agg.clone();
        constant.fragments.push(Fragment { constant: Some(7i32.to_ne_bytes().to_vec()), ..frag(&[3, 4], &[2, 3]) });
        let c = ints(&constant.chunk(&[1, 1], &fill, &reader).unwrap().unwrap());
        assert_eq!(c, vec![7, 7, 7, -1, 7, 7, 7, -1, -1, -1, -1, -1], "a unique_values fragment");
        assert!(agg.chunk(&[2, 0], &fill, &reader).unwrap().is_none(), "past the end");
        let store = CfaStore::new("t", Arc::new(MemoryStore::new()), vec![(agg, fill.to_vec())], Arc::new(reader), false);
        assert!(store.get(&Key::new("v/0.0").unwrap()).unwrap().is_some());
        assert!(store.get(&Key::new("v/.zarray").unwrap()).unwrap().is_none(), "metadata comes from memory");
        assert_eq!(store.put(&Key::new("v/0.0").unwrap(), b"x").unwrap_err().kind, Kind::ReadOnly);
    }
}
