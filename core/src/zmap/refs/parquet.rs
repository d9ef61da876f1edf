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

/// Rows per record file of the sets we write (kerchunk's default).
pub const RECORD_SIZE: u64 = 10_000;

/// A set as a Parquet reference directory: its files by name relative to the directory, the
/// record files first and `.zmetadata` last (a reader that sees `.zmetadata` finds every file
/// it names). `entries`: every key of the set and where it points.
pub fn render(name: &str, entries: &[(&str, super::Located)], record_size: u64) -> Result<Vec<(String, Vec<u8>)>> {
    use super::Located;
    let by_key: BTreeMap<&str, &Located> = entries.iter().map(|(k, at)| (*k, at)).collect();
    let mut metadata = serde_json::Map::new();
    for (key, at) in entries {
        let last = key.rsplit('/').next().unwrap_or(key);
        if matches!(last, ".zarray" | ".zattrs" | ".zgroup")
            && let Located::Inline(text) = at
        {
            let doc = serde_json::from_slice(text).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(text).into_owned()));
            metadata.insert(key.to_string(), doc);
        }
    }
    let mut files = Vec::new();
    for (key, zarray) in &metadata {
        let Some(array) = key.strip_suffix("/.zarray") else { continue };
        let grid = Grid::of(name, key, zarray)?;
        for record in 0..grid.total.div_ceil(record_size) {
            let first = record * record_size;
            let rows: Vec<Option<&Located>> =
                (first..(first + record_size).min(grid.total)).map(|n| by_key.get(grid.key(array, n).as_str()).copied()).collect();
            files.push((format!("{array}/refs.{record}.parq"), record_file(&rows).map_err(|e| bad(name, e))?));
        }
    }
    let mut top = serde_json::Map::new();
    top.insert("metadata".into(), Value::Object(metadata));
    top.insert("record_size".into(), record_size.into());
    files.push((".zmetadata".to_string(), Value::Object(top).to_string().into_bytes()));
    Ok(files)
}

/// One record file: a row per chunk (`path`, `offset`, `size`, `raw`, as fsspec writes them;
/// a missing chunk has neither path nor raw).
fn record_file(rows: &[Option<&super::Located>]) -> parquet::errors::Result<Vec<u8>> {
    use super::Located;
    use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let schema = parquet::schema::parser::parse_message_type(
        "message schema { OPTIONAL BYTE_ARRAY path (UTF8); REQUIRED INT64 offset; REQUIRED INT64 size; OPTIONAL BYTE_ARRAY raw; }",
    )?;
    let (mut paths, mut path_levels, mut raws, mut raw_levels) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut offsets, mut sizes) = (Vec::new(), Vec::new());
    for row in rows {
        let (path, offset, size, raw) = match row {
            Some(Located::Range { url, offset, len }) => (Some(url.as_str()), *offset, *len, None),
            Some(Located::Whole { url }) => (Some(url.as_str()), 0, 0, None),
            Some(Located::Inline(bytes)) => (None, 0, bytes.len() as u64, Some(bytes.as_slice())),
            Some(Located::Absent) | None => (None, 0, 0, None),
        };
        path_levels.push(i16::from(path.is_some()));
        paths.extend(path.map(|p| ByteArray::from(p.as_bytes().to_vec())));
        raw_levels.push(i16::from(raw.is_some()));
        raws.extend(raw.map(|r| ByteArray::from(r.to_vec())));
        offsets.push(i64::try_from(offset).unwrap_or(i64::MAX));
        sizes.push(i64::try_from(size).unwrap_or(i64::MAX));
    }
    let props = WriterProperties::builder().set_compression(parquet::basic::Compression::ZSTD(Default::default())).build();
    let mut out = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut out, std::sync::Arc::new(schema), std::sync::Arc::new(props))?;
    let mut group = writer.next_row_group()?;
    let mut column = 0;
    while let Some(mut col) = group.next_column()? {
        match column {
            0 => col.typed::<ByteArrayType>().write_batch(&paths, Some(&path_levels), None)?,
            1 => col.typed::<Int64Type>().write_batch(&offsets, None, None)?,
            2 => col.typed::<Int64Type>().write_batch(&sizes, None, None)?,
            _ => col.typed::<ByteArrayType>().write_batch(&raws, Some(&raw_levels), None)?,
        };
        col.close()?;
        column += 1;
    }
    group.close()?;
    writer.close()?;
    Ok(out)
}
