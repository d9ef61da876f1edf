//! Lazy read-only opens of netCDF files held as objects (references.md; S3 objects, HTTP(S)
//! objects, local files when no real netcdf-c is there): the file's metadata is scanned with
//! ranged reads (netCDF-3 header; HDF5 superblock, object headers, chunk indexes) into our
//! model, and each chunk becomes a reference to its bytes in the object — a reference set made
//! in memory. Data is then read chunk by chunk through the reference store, decoded by our
//! codecs, cached like any Zarr chunk. What the model cannot hold lazily (user-defined types,
//! chunks stored without their filters, ...) is answered `Whole(why)`: the caller reads the
//! object whole as before, never wrong values.

mod chunks;
pub mod copies;
mod storage;

use crate::dataset::Dataset;
use crate::error::{Error, Kind, Result};
use crate::nc::magic::FileFormat;
use crate::nc::modes::OpenFlags;
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::source::{GroupId, NcSink};
use crate::zmap::Zmap;
use crate::zmap::memory::MemoryStore;
use crate::zmap::range::RangeSource;
use crate::zmap::refs::{Ref, RefStore};
use chunks::{Plan, Why};
use netcdf_reader::{NcAttrValue, NcFile, NcFormat, NcGroup};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The most strings a lazy open copies from a string variable (more: the file is read whole).
const MOST_STRINGS: u64 = 1 << 22;

/// `Lazy::Whole`'s reason for a local file that holds no netCDF signature.
pub const NOT_NETCDF: &str = "not a netCDF file";

/// What a lazy open gives.
pub enum Lazy {
    /// Our dataset over references into the object.
    Open(Box<Dataset>),
    /// The object must be read whole (the reason, for the trace).
    Whole(String),
}

/// Which of a name's places a read-only open may scan (`open_named`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Places {
    /// A netCDF object on S3 or a web server.
    Remote,
    /// A local file (what the real library would have read).
    Local,
    Both,
}

/// A read-only open of a classified name by our scanners, wherever `places` allows: its S3
/// object, its web object, or its local file. `None`: nothing there to scan (a write, lazy
/// opens turned off, a name of ours, a URL that is none of these).
pub fn open_named(class: &crate::url::classify::Classified, omode: OpenFlags, places: Places) -> Option<Result<Lazy>> {
    if omode.write() || crate::config::lazy_disabled() {
        return None;
    }
    let remote = places != Places::Local;
    match (&class.object, &class.web_object) {
        (Ok(Some(object)), _) if remote => return Some(open_object(object, omode)),
        (_, Some(url)) if remote => return Some(open_web(url, &class.name, omode)),
        _ => {}
    }
    if places == Places::Remote || class.is_ours() || class.web_object.is_some() || matches!(class.object, Ok(Some(_))) {
        return None;
    }
    let path = class.real_name.strip_prefix("file://").unwrap_or(&class.real_name);
    (!path.contains("://")).then(|| open_local(std::path::Path::new(path), omode))
}

/// A netCDF object on S3, read-only: lazily when it can be (one ranged GET for its first
/// bytes, then the scan's few reads).
pub fn open_object(name: &crate::url::object::ObjectName, omode: OpenFlags) -> Result<Lazy> {
    let object = crate::zmap::s3::object::S3Object::new(&name.target, &name.params)?;
    let Some((head, size)) = object.head(storage::HEAD)? else { return Ok(Lazy::Whole("no such object".into())) };
    if crate::nc::magic::signature(&head).is_none() {
        return Ok(Lazy::Whole("no netCDF signature at its start".into()));
    }
    let source = Arc::new(crate::zmap::s3::object::ObjectRanges { object, size });
    open(&name.original, source, Some(head), true, omode)
}

/// A netCDF file on a plain web server (`url`, asked for as `name`), read-only: lazily when it
/// can be.
pub fn open_web(url: &str, name: &str, omode: OpenFlags) -> Result<Lazy> {
    let Some((head, size)) = crate::zmap::http::head(url, storage::HEAD)? else { return Ok(Lazy::Whole("no such object".into())) };
    if crate::nc::magic::signature(&head).is_none() {
        return Ok(Lazy::Whole("no netCDF signature at its start".into()));
    }
    let source = Arc::new(crate::zmap::http::WebObject { url: url.to_string(), size });
    open(name, source, Some(head), true, omode)
}

/// A local netCDF file, read-only, lazily (what the drop-in reads with no real netcdf-c).
pub fn open_local(path: &std::path::Path, omode: OpenFlags) -> Result<Lazy> {
    let mut head = [0u8; 8];
    let read = std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
    if read.is_err() || crate::nc::magic::signature(&head).is_none() {
        return Ok(Lazy::Whole(NOT_NETCDF.into()));
    }
    let source = Arc::new(crate::zmap::range::LocalFile::open(path)?);
    open(&path.display().to_string(), source, None, false, omode)
}

/// Opens the netCDF file `source` holds, read-only, lazily; `head`: its first bytes when a
/// probe already read them; `remote`: reads wait on a network (several run at once).
pub fn open(name: &str, source: Arc<dyn RangeSource>, head: Option<Vec<u8>>, remote: bool, omode: OpenFlags) -> Result<Lazy> {
    let storage = Arc::new(storage::Prefetched::new(source, head));
    let nc = match NcFile::from_storage(storage.clone()) {
        Ok(nc) => nc,
        Err(e) => return Ok(Lazy::Whole(format!("the scanner cannot read it: {e}"))),
    };
    let hdf5 = match nc.format() {
        NcFormat::Nc4 | NcFormat::Nc4Classic => match hdf5_reader::Hdf5File::from_storage(storage.clone()) {
            Ok(h) => Some(h),
            Err(e) => return Ok(Lazy::Whole(format!("the HDF5 scanner cannot read it: {e}"))),
        },
        _ => None,
    };
    let memory = MemoryStore::new();
    let spec = crate::url::OpenSpec::in_memory(name);
    let ds = Dataset::create_on(spec, OpenFlags::netcdf4_clobber(), Box::new(memory.clone()), crate::format::ZarrFormat::V2)?;
    let size = hdf5_reader::storage::Storage::len(storage.as_ref());
    let recsize = nc.root_group().map(recsize).unwrap_or(0);
    let mut build = Build { size, recsize, hdf5: hdf5.as_ref(), ds, planned: Vec::new(), strings: Vec::new(), unlimited: Vec::new() };
    let root = nc.root_group().map_err(scan_error)?;
    let top = NcSink::root(&build.ds);
    if let Err(why) = build.group(root, top, "")? {
        return Ok(Lazy::Whole(why));
    }
    let Build { mut ds, planned, strings, unlimited, .. } = build;
    NcSink::enddef(&mut ds)?;
    for (g, dim, len) in unlimited {
        ds.set_unlimited_len(g.0, &dim, len)?;
    }
    for (g, v, path, shape) in strings {
        let values = nc.read_variable_as_strings(&path).map_err(scan_error)?;
        let count: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
        let values: Vec<Option<String>> = values.into_iter().map(Some).collect();
        ds.put_strings(g, v, &vec![0; count.len()], &count, &values)?;
    }
    ds.persist()?;
    let mut refs: BTreeMap<String, Ref> = BTreeMap::new();
    for key in memory.keys() {
        if let Some(bytes) = memory.get(&crate::zmap::Key::new(key.clone())?)? {
            refs.insert(key, Ref::Inline(bytes));
        }
    }
    let mut stored = std::collections::HashMap::new();
    for (g, v, plan) in planned {
        if plan.stored != crate::nc::modes::Storage::Chunked {
            stored.insert((g.0, v), plan.stored);
        }
        let layout = ds.chunk_layout(g.0, v)?;
        for (idx, r) in plan.refs {
            refs.insert(layout.chunk_key(&idx)?.to_string(), r);
        }
    }
    crate::trace::emit(
        1,
        &format!(
            "lazy: {name}: {} keys; metadata in {} reads of {} bytes",
            refs.len(),
            storage.requests.load(Ordering::Relaxed),
            storage.bytes.load(Ordering::Relaxed)
        ),
    );
    let store = RefStore::from_parts(name.to_string(), refs, vec![storage], remote);
    ds.seal_on(omode, Box::new(store))?;
    let (format, classic) = match nc.format() {
        NcFormat::Classic => (FileFormat::Classic, true),
        NcFormat::Offset64 => (FileFormat::Offset64, true),
        NcFormat::Cdf5 => (FileFormat::Cdf5, true),
        NcFormat::Nc4 => (FileFormat::Hdf5, false),
        NcFormat::Nc4Classic => (FileFormat::Hdf5, true),
    };
    ds.set_scanned(crate::dataset::Scanned { format, storage: stored }, classic);
    Ok(Lazy::Open(Box::new(ds)))
}

fn scan_error(e: netcdf_reader::Error) -> Error {
    Error::new(Kind::HdfErr, format!("scanning the file: {e}"))
}

struct Build<'a> {
    /// The object's size: no reference may point past it.
    size: u64,
    /// netCDF-3: bytes from one record to the next.
    recsize: u64,
    hdf5: Option<&'a hdf5_reader::Hdf5File>,
    ds: Dataset,
    /// Each referenced variable's chunks.
    planned: Vec<(GroupId, usize, Plan)>,
    /// String variables, copied into the references (their bytes are in HDF5's heaps).
    strings: Vec<(GroupId, usize, String, Vec<u64>)>,
    /// Unlimited dimensions and their current length.
    unlimited: Vec<(GroupId, String, u64)>,
}

impl Build<'_> {
    fn group(&mut self, group: &NcGroup, g: GroupId, path: &str) -> Result<std::result::Result<(), Why>> {
        for dim in &group.dimensions {
            if !self.defined_here(path, &dim.name) {
                continue;
            }
            let len = usize::try_from(dim.size)
                .map_err(|_| Error::new(Kind::HdfErr, format!("dimension {}: {} too long", dim.name, dim.size)))?;
            NcSink::def_dim(&mut self.ds, g, &dim.name, (!dim.is_unlimited).then_some(len))?;
            if dim.is_unlimited {
                self.unlimited.push((g, dim.name.clone(), dim.size));
            }
        }
        for att in &group.attributes {
            let Some(values) = values(&att.value) else { return Ok(Err(format!("attribute {path}/{}: a user-defined type", att.name))) };
            let values = self.string_or_text(path, None, &att.name, values);
            NcSink::put_att(&mut self.ds, g, None, &att.name, values)?;
        }
        for var in &group.variables {
            if let Err(why) = self.var(var, g, path)? {
                return Ok(Err(why));
            }
        }
        for child in &group.groups {
            let c = NcSink::def_grp(&mut self.ds, g, &child.name)?;
            if let Err(why) = self.group(child, c, &format!("{path}/{}", child.name))? {
                return Ok(Err(why));
            }
        }
        Ok(Ok(()))
    }

    fn var(&mut self, var: &netcdf_reader::NcVariable, g: GroupId, group_path: &str) -> Result<std::result::Result<(), Why>> {
        let path = format!("{group_path}/{}", var.name);
        let Some(xtype) = nctype(&var.dtype) else { return Ok(Err(format!("variable {path}: a user-defined type"))) };
        let dims: Vec<String> = var.dimensions.iter().map(|d| d.name.clone()).collect();
        let v = NcSink::def_var(&mut self.ds, g, &var.name, xtype, &dims)?;
        let shape: Vec<u64> = var.dimensions.iter().map(|d| d.size).collect();
        if xtype == NcType::String {
            // Strings are copied at open (their bytes are in HDF5's heaps): only so many.
            if shape.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n)).is_none_or(|n| n > MOST_STRINGS) {
                return Ok(Err(format!("{path}: more than {MOST_STRINGS} strings")));
            }
            self.strings.push((g, v, path.clone(), shape));
        } else {
            let esize = xtype.size() as u64;
            let plan = match self.hdf5 {
                Some(h) => match chunks::hdf5(h, &path, &shape, esize) {
                    Ok(Ok(plan)) => plan,
                    Ok(Err(why)) => return Ok(Err(why)),
                    Err(e) => return Ok(Err(format!("{path}: {e}"))),
                },
                None => {
                    let record = var.is_record_var.then_some(self.recsize);
                    match chunks::classic(&shape, esize, var.data_offset, record, self.size) {
                        Ok(plan) => plan,
                        Err(why) => return Ok(Err(format!("{path}: {why}"))),
                    }
                }
            };
            // Every byte referenced must be in the object: a header claiming more is read by
            // the real library (which reports it), never as fill.
            if let Some(end) = plan.refs.iter().filter_map(|(_, r)| r.end()).max()
                && end > self.size
            {
                return Ok(Err(format!("{path}: data up to byte {end} of a {}-byte file", self.size)));
            }
            if !shape.is_empty() {
                let sizes: Vec<usize> = plan.chunk.iter().map(|&c| c as usize).collect();
                NcSink::def_var_chunking(&mut self.ds, g, v, &sizes)?;
            }
            for (id, params) in &plan.filters {
                if let Err(e) = NcSink::def_var_filter(&mut self.ds, g, v, *id, params) {
                    return Ok(Err(format!("{path}: filter {id}: {e}")));
                }
            }
            if plan.big_endian && esize > 1 {
                NcSink::def_var_endian_big(&mut self.ds, g, v)?;
            }
            self.planned.push((g, v, plan));
        }
        for att in &var.attributes {
            let Some(values) = values(&att.value) else { return Ok(Err(format!("attribute {path}/{}: a user-defined type", att.name))) };
            let values = self.string_or_text(group_path, Some(&var.name), &att.name, values);
            NcSink::put_att(&mut self.ds, g, Some(v), &att.name, values)?;
        }
        Ok(Ok(()))
    }

    /// Is dimension `name`, which the scanner lists for the group at `path`, defined there
    /// rather than inherited? netCDF-4 keeps a dataset (its scale) in the defining group.
    fn defined_here(&self, path: &str, name: &str) -> bool {
        match self.hdf5 {
            Some(h) if !path.is_empty() => h.dataset(&format!("{path}/{name}")).is_ok(),
            _ => true,
        }
    }

    /// An attribute the scanner read as text: NC_STRING when HDF5 stores it as a
    /// variable-length string (netcdf-c's rule), NC_CHAR when as fixed-length.
    fn string_or_text(&self, group_path: &str, var: Option<&str>, name: &str, values: Values) -> Values {
        use hdf5_reader::Datatype as D;
        let (Some(h), Values::Char(text)) = (self.hdf5, &values) else { return values };
        let att = match var {
            Some(v) => h.dataset(&format!("{group_path}/{v}")).and_then(|d| d.attribute(name)),
            None if group_path.is_empty() => h.root_group().and_then(|g| g.attribute(name)),
            None => h.group(group_path).and_then(|g| g.attribute(name)),
        };
        let vlen = att.is_ok_and(|a| {
            matches!(
                a.datatype,
                D::String { size: hdf5_reader::messages::datatype::StringSize::Variable, .. }
                    | D::VarLen { kind: hdf5_reader::messages::datatype::VarLenKind::String, .. }
            )
        });
        if vlen { Values::Str(vec![Some(String::from_utf8_lossy(text).into_owned())]) } else { values }
    }
}

/// netCDF-3: bytes from one record to the next (one record variable: its own size, unpadded;
/// several: each padded to 4 bytes).
fn recsize(root: &NcGroup) -> u64 {
    let records: Vec<_> = root.variables.iter().filter(|v| v.is_record_var).collect();
    match records.as_slice() {
        [only] => only.record_size,
        many => many.iter().map(|v| v.record_size.div_ceil(4) * 4).sum(),
    }
}

fn nctype(t: &netcdf_reader::NcType) -> Option<NcType> {
    use netcdf_reader::NcType as T;
    Some(match t {
        T::Byte => NcType::Byte,
        T::Char => NcType::Char,
        T::Short => NcType::Short,
        T::Int => NcType::Int,
        T::Float => NcType::Float,
        T::Double => NcType::Double,
        T::UByte => NcType::UByte,
        T::UShort => NcType::UShort,
        T::UInt => NcType::UInt,
        T::Int64 => NcType::Int64,
        T::UInt64 => NcType::UInt64,
        T::String => NcType::String,
        _ => return None,
    })
}

fn values(v: &NcAttrValue) -> Option<Values> {
    Some(match v {
        NcAttrValue::Bytes(x) => Values::Byte(x.clone()),
        NcAttrValue::Chars(s) => Values::Char(s.as_bytes().to_vec()),
        NcAttrValue::Shorts(x) => Values::Short(x.clone()),
        NcAttrValue::Ints(x) => Values::Int(x.clone()),
        NcAttrValue::Floats(x) => Values::Float(x.clone()),
        NcAttrValue::Doubles(x) => Values::Double(x.clone()),
        NcAttrValue::UBytes(x) => Values::UByte(x.clone()),
        NcAttrValue::UShorts(x) => Values::UShort(x.clone()),
        NcAttrValue::UInts(x) => Values::UInt(x.clone()),
        NcAttrValue::Int64s(x) => Values::Int64(x.clone()),
        NcAttrValue::UInt64s(x) => Values::UInt64(x.clone()),
        NcAttrValue::Strings(x) => Values::Str(x.iter().cloned().map(Some).collect()),
        _ => return None,
    })
}
