//! kerchunk/fsspec Parquet reference sets (references.md): a directory holding `.zmetadata`
//! (`{"metadata": {key: document}, "record_size": N}`) and, for each array, files
//! `<array>/refs.<k>.parq` of `record_size` rows: row `i` of file `k` is chunk number
//! `k * record_size + i` of the array's chunk grid (C order), with columns `path`, `offset`,
//! `size` (a byte range; offset and size 0: the whole object) and `raw` (inline bytes); a row
//! with neither is a missing chunk. Every record file is read at open (a missing one: chunks
//! never written); the rows through the `parquet` crate's row reader (no Arrow).

use super::Ref;
use super::kerchunk::Parsed;
use crate::error::{Error, Kind, Result};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;
use std::collections::BTreeMap;

/// The most chunk references a set may make us hold (a hostile `.zarray` could ask for more).
const MOST_CHUNKS: u64 = 1 << 28;

fn bad(name: &str, why: impl std::fmt::Display) -> Error {
    Error::new(Kind::NotNetcdf, format!("{name}: not a Parquet reference set: {why}"))
}

/// One row: where a chunk is.
struct Row {
    path: Option<String>,
    offset: i64,
    size: i64,
    raw: Option<Vec<u8>>,
}

/// Parses the set whose `.zmetadata` is `zmetadata`; `fetch(rel)` reads a file of the set by
/// its name relative to the set's directory (`None`: no such file).
pub fn parse(name: &str, zmetadata: &[u8], fetch: &dyn Fn(&str) -> Result<Option<Vec<u8>>>) -> Result<Parsed> {
    let doc: Value = serde_json::from_slice(zmetadata).map_err(|e| bad(name, format!(".zmetadata: {e}")))?;
    let record_size = doc.get("record_size").and_then(Value::as_u64).filter(|n| (1..=MOST_CHUNKS).contains(n));
    let record_size = record_size.ok_or_else(|| bad(name, ".zmetadata without a usable record_size"))?;
    let meta = doc.get("metadata").and_then(Value::as_object).ok_or_else(|| bad(name, ".zmetadata without metadata"))?;
    let mut out = Parsed::default();
    let mut targets: BTreeMap<String, usize> = BTreeMap::new();
    for (key, value) in meta {
        let text = match value {
            Value::String(s) => s.as_bytes().to_vec(),
            other => other.to_string().into_bytes(),
        };
        out.refs.insert(key.clone(), Ref::Inline(text));
    }
    for (key, value) in meta {
        let Some(array) = key.strip_suffix("/.zarray") else { continue };
        let zarray: Value = match value {
            Value::String(s) => serde_json::from_str(s).map_err(|e| bad(name, format!("{key}: {e}")))?,
            other => other.clone(),
        };
        let grid = Grid::of(name, key, &zarray)?;
        let total = grid.total;
        for record in 0..total.div_ceil(record_size) {
            let Some(bytes) = fetch(&format!("{array}/refs.{record}.parq"))? else { continue };
            for (i, row) in rows(name, array, record, bytes)?.into_iter().enumerate() {
                let n = record * record_size + i as u64;
                if n >= total {
                    break;
                }
                let r = match row {
                    Row { raw: Some(raw), .. } => Ref::Inline(raw),
                    Row { path: None, .. } => continue,
                    Row { path: Some(path), offset, size, .. } => {
                        let id = targets.len();
                        let target = *targets.entry(path.clone()).or_insert_with(|| {
                            out.targets.push(path);
                            id
                        });
                        match (u64::try_from(offset), u64::try_from(size)) {
                            (Ok(0), Ok(0)) => Ref::Whole { target },
                            (Ok(offset), Ok(len)) => Ref::Range { target, offset, len },
                            _ => return Err(bad(name, format!("{array}: chunk {n}: offset {offset}, size {size}"))),
                        }
                    }
                };
                out.refs.insert(grid.key(array, n), r);
            }
        }
    }
    Ok(out)
}

/// An array's chunk grid, from its `.zarray`.
struct Grid {
    counts: Vec<u64>,
    total: u64,
    separator: String,
}

impl Grid {
    fn of(name: &str, key: &str, zarray: &Value) -> Result<Grid> {
        let numbers = |field: &str| -> Result<Vec<u64>> {
            zarray
                .get(field)
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                .ok_or_else(|| bad(name, format!("{key}: no {field}")))
        };
        let (shape, chunks) = (numbers("shape")?, numbers("chunks")?);
        if shape.len() != chunks.len() || chunks.contains(&0) {
            return Err(bad(name, format!("{key}: shape {shape:?} and chunks {chunks:?} do not match")));
        }
        let counts: Vec<u64> = shape.iter().zip(&chunks).map(|(&s, &c)| s.div_ceil(c)).collect();
        let total = counts.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n)).filter(|&n| n <= MOST_CHUNKS);
        let total = total.ok_or_else(|| bad(name, format!("{key}: more than {MOST_CHUNKS} chunks")))?;
        let separator = zarray.get("dimension_separator").and_then(Value::as_str).unwrap_or(".").to_string();
        Ok(Grid { counts, total, separator })
    }

    /// The key of chunk number `n` (C order) of `array`.
    fn key(&self, array: &str, mut n: u64) -> String {
        if self.counts.is_empty() {
            return format!("{array}/0");
        }
        let mut idx = vec![0u64; self.counts.len()];
        for d in (0..self.counts.len()).rev() {
            idx[d] = n % self.counts[d].max(1);
            n /= self.counts[d].max(1);
        }
        let joined: Vec<String> = idx.iter().map(u64::to_string).collect();
        format!("{array}/{}", joined.join(&self.separator))
    }
}

/// The rows of one record file.
fn rows(name: &str, array: &str, record: u64, bytes: Vec<u8>) -> Result<Vec<Row>> {
    let what = |e: &dyn std::fmt::Display| bad(name, format!("{array}/refs.{record}.parq: {e}"));
    let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).map_err(|e| what(&e))?;
    let mut out = Vec::new();
    for row in reader.get_row_iter(None).map_err(|e| what(&e))? {
        let row = row.map_err(|e| what(&e))?;
        let mut r = Row { path: None, offset: 0, size: 0, raw: None };
        for (column, field) in row.get_column_iter() {
            match (column.as_str(), field) {
                ("path", Field::Str(s)) => r.path = Some(s.clone()),
                ("path", Field::Bytes(b)) => r.path = Some(String::from_utf8_lossy(b.data()).into_owned()),
                ("offset", Field::Long(n)) => r.offset = *n,
                ("offset", Field::Int(n)) => r.offset = i64::from(*n),
                ("size", Field::Long(n)) => r.size = *n,
                ("size", Field::Int(n)) => r.size = i64::from(*n),
                ("raw", Field::Bytes(b)) => r.raw = Some(b.data().to_vec()),
                ("raw", Field::Str(s)) => r.raw = Some(s.as_bytes().to_vec()),
                _ => {}
            }
        }
        out.push(r);
    }
    Ok(out)
}
