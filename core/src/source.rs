//! "A netCDF file" as a Rust value: `NcSource` is what a reader of one asks (groups, dimensions,
//! variables with type and shape, attributes, fill values, data), `NcSink` what a writer does
//! (define, put, leave define mode). `Dataset` implements both (`dataset/source.rs`); the C
//! crate implements them over the real netcdf-c, so the aggregation code (`aggregate/`) reads
//! a CFA master or a fragment the same way whoever serves it, and never through the C API.
//!
//! Groups are named by `GroupId`s a source hands out (`root()` first); variables by their index
//! in their group; dimensions by name, as netCDF resolves them (the group, then its parents).

use crate::error::Result;
use crate::nc::types::NcType;
use crate::nc::values::Values;

/// A group of a source: the source's own number for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupId(pub usize);

/// One of a group's own dimensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimInfo {
    pub name: String,
    /// Its current length (an unlimited dimension's records so far).
    pub len: usize,
    pub unlimited: bool,
}

/// A variable: its type, dimensions (names, resolved from its group up) and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarInfo {
    pub name: String,
    pub xtype: NcType,
    pub dims: Vec<String>,
    pub shape: Vec<usize>,
}

/// Reading a netCDF file.
pub trait NcSource {
    fn root(&self) -> GroupId;

    /// The group's child groups, in order, with their names.
    fn groups(&self, g: GroupId) -> Result<Vec<(GroupId, String)>>;

    /// The group's own dimensions, in order.
    fn dims(&self, g: GroupId) -> Result<Vec<DimInfo>>;

    fn var_count(&self, g: GroupId) -> Result<usize>;

    fn var(&self, g: GroupId, v: usize) -> Result<VarInfo>;

    /// A variable of the group by name (`None`: there is none).
    fn var_id(&self, g: GroupId, name: &str) -> Result<Option<usize>>;

    /// The attribute names of a variable (`None`: the group's), in order.
    fn att_names(&self, g: GroupId, v: Option<usize>) -> Result<Vec<String>>;

    /// An attribute in its own type (`None`: absent).
    fn att(&self, g: GroupId, v: Option<usize>, name: &str) -> Result<Option<Values>>;

    /// The variable's fill value (one element of its type), `None` when it has none (no-fill).
    fn fill(&self, g: GroupId, v: usize) -> Result<Option<Values>>;

    /// `count` elements at `start` of a numeric or char variable, converted to `xtype` as
    /// netCDF's typed reads convert (native byte order), into `out` (exactly their size).
    fn get_vara(&mut self, g: GroupId, v: usize, xtype: NcType, start: &[usize], count: &[usize], out: &mut [u8]) -> Result<()>;

    /// `count` elements at `start` of a string variable (`None`: a NULL string).
    fn get_strings(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize]) -> Result<Vec<Option<String>>>;

    /// A child group by name.
    fn group(&self, g: GroupId, name: &str) -> Result<Option<GroupId>> {
        Ok(self.groups(g)?.into_iter().find(|(_, n)| n == name).map(|(id, _)| id))
    }

    /// A text attribute (NC_CHAR, or one NC_STRING); `None` when absent or of another type.
    fn text_att(&self, g: GroupId, v: Option<usize>, name: &str) -> Option<String> {
        match self.att(g, v, name).ok()?? {
            Values::Char(bytes) => {
                let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
            }
            Values::Str(items) if items.len() == 1 => Some(items[0].clone().unwrap_or_default()),
            _ => None,
        }
    }
}

/// Writing a netCDF file. Define calls enter define mode when needed and data calls leave it,
/// as netCDF-4 does.
pub trait NcSink {
    fn root(&self) -> GroupId;

    fn def_grp(&mut self, parent: GroupId, name: &str) -> Result<GroupId>;

    /// `len` `None`: unlimited.
    fn def_dim(&mut self, g: GroupId, name: &str, len: Option<usize>) -> Result<()>;

    /// A variable over dimensions named as visible from `g`; its index.
    fn def_var(&mut self, g: GroupId, name: &str, xtype: NcType, dims: &[String]) -> Result<usize>;

    fn def_var_chunking(&mut self, g: GroupId, v: usize, chunks: &[usize]) -> Result<()>;

    fn put_att(&mut self, g: GroupId, v: Option<usize>, name: &str, values: Values) -> Result<()>;

    fn enddef(&mut self) -> Result<()>;

    /// `count` elements at `start`, in the variable's own type (native byte order; bytes for
    /// NC_CHAR).
    fn put_vara(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize], data: &[u8]) -> Result<()>;

    fn put_strings(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize], data: &[Option<String>]) -> Result<()>;

    /// The variable's fill value (one element of its type).
    fn def_var_fill(&mut self, g: GroupId, v: usize, fill: Values) -> Result<()>;

    /// Big-endian storage (else the file's native order).
    fn def_var_endian_big(&mut self, g: GroupId, v: usize) -> Result<()>;

    /// An HDF5 filter by id, with its parameters.
    fn def_var_filter(&mut self, g: GroupId, v: usize, id: u32, params: &[u32]) -> Result<()>;
}

/// A netCDF file open for reading and writing, closed (stored) or aborted by its owner.
pub trait NcFile: NcSource + NcSink + Send {
    /// Everything written made durable, and the file released.
    fn close(self: Box<Self>) -> Result<()>;

    /// The file released without storing more.
    fn abort(self: Box<Self>) -> Result<()>;
}

/// How a new netCDF file is laid out (netCDF's create formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateFormat {
    Classic,
    Offset64,
    Data64,
    Netcdf4Classic,
    Netcdf4,
}

/// Copies variable `v` of group `g` of `from` (type, dimensions, attributes, data) into group
/// `to` of `into`, whose dimensions of the same names must exist, as `nc_copy_var` does; the
/// data moves one record (index of the first dimension) at a time. Returns its index in `into`.
pub fn copy_var(from: &mut dyn NcSource, g: GroupId, v: usize, into: &mut dyn NcSink, to: GroupId) -> Result<usize> {
    let info = from.var(g, v)?;
    let id = into.def_var(to, &info.name, info.xtype, &info.dims)?;
    for name in from.att_names(g, Some(v))? {
        if let Some(values) = from.att(g, Some(v), &name)? {
            into.put_att(to, Some(id), &name, values)?;
        }
    }
    if info.shape.contains(&0) {
        return Ok(id);
    }
    let (records, per_record) = match info.shape.split_first() {
        Some((&n, rest)) => (n, rest.iter().product::<usize>()),
        None => (1, 1),
    };
    let mut count = info.shape.clone();
    if let Some(c) = count.first_mut() {
        *c = 1;
    }
    let mut start = vec![0usize; info.shape.len()];
    let mut buf = vec![0u8; if info.xtype == NcType::String { 0 } else { per_record * info.xtype.size() }];
    for r in 0..records {
        if let Some(s) = start.first_mut() {
            *s = r;
        }
        if info.xtype == NcType::String {
            let strings = from.get_strings(g, v, &start, &count)?;
            into.put_strings(to, id, &start, &count, &strings)?;
        } else {
            from.get_vara(g, v, info.xtype, &start, &count, &mut buf)?;
            into.put_vara(to, id, &start, &count, &buf)?;
        }
    }
    Ok(id)
}
