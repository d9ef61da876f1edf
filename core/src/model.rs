//! The in-memory netCDF-4 data model of one dataset: groups, dimensions, variables and
//! attributes. Plain data, no I/O; the format layer fills it on open and renders it on flush.
//!
//! Ids are indexes: group ids index `Model::groups` (root = 0, creation order, as netcdf-c
//! numbers them), dimension ids index `Model::dims` (file-wide), varids index a group's `vars`.

use crate::error::{Kind, Result, err};
use crate::nc::modes::VarRef;
use crate::nc::types::NcType;
use crate::nc::values::Values;
use serde_json::Value;

/// A variable by its group id and its varid in that group: the key of its cached chunks,
/// its chunk layout and the other per-variable state a dataset keeps beside the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarKey {
    pub gid: usize,
    pub varid: usize,
}

/// A dimension id: an index into the dataset's dimensions (netCDF's dimids are file-wide).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DimId(pub usize);

impl VarKey {
    pub fn new(gid: usize, varid: usize) -> VarKey {
        VarKey { gid, varid }
    }
}

#[derive(Debug, Clone)]
pub struct Att {
    pub name: String,
    pub value: Values,
    /// A structured JSON value read from storage and surfaced as NC_CHAR text; re-emitted
    /// verbatim while the attribute is untouched (nczarr-format.md C4b).
    pub json: Option<Value>,
    /// Made up on read (a pure Zarr `fill_value` shown as `_FillValue`, D3); never written.
    pub synthetic: bool,
}

impl Att {
    pub(crate) fn new(name: String, value: Values) -> Att {
        Att { name, value, json: None, synthetic: false }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

use crate::codec::Filter;

#[derive(Debug, Clone)]
pub struct Var {
    pub name: String,
    pub nctype: NcType,
    pub dimids: Vec<usize>,
    pub atts: Vec<Att>,
    /// Chunk lengths, one per dimension (empty for scalars).
    pub chunks: Vec<u64>,
    pub filters: Vec<Filter>,
    /// Fill turned off by `nc_def_var_fill` / `nc_set_fill(NC_NOFILL)`.
    pub no_fill: bool,
    /// The fill value stored in `.zarray` once the variable has been through an enddef.
    pub storage_fill: Option<Values>,
    pub endian: Endian,
    /// Set by every enddef: storage settings can no longer change (c-api.md §5.4).
    pub locked: bool,
    pub quantize: (i32, i32),
    pub cache: ChunkCache,
    /// How the variable is stored: Zarr facts the format writes and the engine reads.
    pub stored: StoredArray,
}

/// The Zarr side of a variable, kept apart from its netCDF facts: written by `format`, read by
/// `engine`; nothing here changes what the netCDF API reports.
#[derive(Debug, Clone, Default)]
pub struct StoredArray {
    /// Key under which the variable's objects live in storage; `None` until first flushed.
    pub key: Option<String>,
    /// `/` or `.` between chunk indices.
    pub separator: char,
    /// Metadata members of `.zarray` we do not interpret, kept across rewrites.
    pub extra_zarray: serde_json::Map<String, Value>,
    /// Fixed byte width of NC_STRING elements on storage.
    pub maxstrlen: Option<usize>,
    /// `order: "F"` arrays read from other producers.
    pub fortran_order: bool,
    /// How elements are laid out in chunk bytes.
    pub element: StorageKind,
    /// Zarr v3 details (`None` in v2 datasets).
    pub v3: Option<Box<V3Array>>,
}

/// What a Zarr v3 array needs beyond the netCDF model (zarr-v3.md §5, §7).
#[derive(Debug, Clone, Default)]
pub struct V3Array {
    /// The array document as read, re-emitted with only shape and attributes renewed
    /// (codecs, data type and extensions of other producers survive a rewrite).
    pub doc: Option<serde_json::Map<String, Value>>,
    /// `c/i/j` keys (`default` encoding); false: v2-style `i.j` keys.
    pub default_keys: bool,
    /// Shard shape in elements; the netCDF chunk is the inner chunk.
    pub shard: Option<Vec<u64>>,
    pub index: ShardIndex,
    /// Set by `nczarr_def_var_shards`: the `shard=` default does not apply.
    pub shard_explicit: bool,
    /// `transpose` order of stored chunks (stored axis k is array axis `transpose[k]`).
    pub transpose: Option<Vec<usize>>,
    /// Codecs around whole shards (then read and decoded whole).
    pub outer: Vec<Filter>,
}

/// How a shard's index is stored (`index_codecs`, `index_location`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShardIndex {
    pub at_start: bool,
    pub crc: bool,
    pub big_endian: bool,
}

/// Chunk element layouts beyond plain fixed-size values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StorageKind {
    /// Numbers, chars and booleans at their type size; strings NUL-padded to `maxstrlen`.
    #[default]
    Native,
    /// NumPy `<U n` / `>U n` strings: n UCS-4 code points.
    Utf32(usize),
    /// `|O` arrays with the numcodecs `vlen-utf8`/`vlen-bytes` object codec.
    Vlen,
    /// Booleans (`|b1`, v3 `bool`), surfaced as NC_UBYTE: a put stores any non-zero as 1.
    Bool,
    /// IEEE half floats (v3 `float16`), surfaced as NC_FLOAT: widened on read, rounded to
    /// nearest on write.
    Half,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChunkCache {
    pub size: usize,
    pub nelems: usize,
    pub preemption: f32,
}

impl Var {
    pub fn rank(&self) -> usize {
        self.dimids.len()
    }

    pub(crate) fn att(&self, name: &str) -> Option<&Att> {
        self.atts.iter().find(|a| a.name == name)
    }

    /// The fill value in force: `_FillValue` if set (and of the right type), else the default.
    pub(crate) fn fill_value(&self) -> Values {
        if let Some(fill) = &self.storage_fill {
            return fill.clone();
        }
        self.declared_fill()
    }

    pub(crate) fn declared_fill(&self) -> Values {
        match self.att("_FillValue") {
            Some(a) if a.value.nctype() == self.nctype && a.value.len() == 1 => a.value.clone(),
            _ => Values::default_fill(self.nctype),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Dim {
    pub name: String,
    pub len: u64,
    pub unlimited: bool,
    pub group: usize,
}

#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub dims: Vec<usize>,
    pub vars: Vec<Var>,
    pub atts: Vec<Att>,
    pub stored_key: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Model {
    pub groups: Vec<Group>,
    pub dims: Vec<Dim>,
}

/// Width of NC_STRING elements when nothing records one (netcdf-c's default).
pub(crate) const DEFAULT_MAXSTRLEN: usize = 128;
/// Widest fixed-width string element any reader or writer accepts.
pub(crate) const MAX_STRLEN: usize = 1 << 24;

impl Model {
    /// Width of a string variable's elements on storage: the variable's `_nczarr_maxstrlen`,
    /// else the width read with it, else the dataset's `_nczarr_default_maxstrlen`, else 128.
    pub(crate) fn maxstrlen(&self, var: &Var) -> usize {
        let from_att = |atts: &[Att], name: &str| {
            atts.iter().find(|a| a.name == name).and_then(|a| a.value.scalars().first().copied()).and_then(|s| match s {
                crate::nc::values::Scalar::Int(i) if i > 0 => Some(i as usize),
                _ => None,
            })
        };
        from_att(&var.atts, "_nczarr_maxstrlen")
            .or(var.stored.maxstrlen)
            .or_else(|| from_att(&self.groups[0].atts, "_nczarr_default_maxstrlen"))
            .unwrap_or(DEFAULT_MAXSTRLEN)
            .min(MAX_STRLEN)
    }

    /// Numbers the dimensions as netcdf-c does when it opens a dataset: the root group's in
    /// order, then each child group's, depth first (readers load groups level by level).
    pub(crate) fn number_dims_depth_first(&mut self) {
        let mut order = Vec::with_capacity(self.dims.len());
        let mut stack = vec![0usize];
        while let Some(g) = stack.pop() {
            order.extend(self.groups[g].dims.iter().copied());
            stack.extend(self.groups[g].children.iter().rev().copied());
        }
        if order.len() != self.dims.len() || order.iter().enumerate().all(|(i, &d)| i == d) {
            return;
        }
        let mut new_id = vec![0usize; self.dims.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = new;
        }
        let mut dims: Vec<Option<Dim>> = std::mem::take(&mut self.dims).into_iter().map(Some).collect();
        self.dims = order.iter().filter_map(|&old| dims[old].take()).collect();
        for g in &mut self.groups {
            for d in &mut g.dims {
                *d = new_id[*d];
            }
            for v in &mut g.vars {
                for d in &mut v.dimids {
                    *d = new_id[*d];
                }
            }
        }
    }

    pub(crate) fn new() -> Model {
        Model {
            groups: vec![Group {
                name: "/".into(),
                parent: None,
                children: Vec::new(),
                dims: Vec::new(),
                vars: Vec::new(),
                atts: Vec::new(),
                stored_key: Some(String::new()),
            }],
            dims: Vec::new(),
        }
    }

    pub(crate) fn group(&self, gid: usize) -> Result<&Group> {
        self.groups.get(gid).ok_or_else(|| crate::error::Error::new(Kind::BadId, "group id"))
    }

    pub(crate) fn group_mut(&mut self, gid: usize) -> Result<&mut Group> {
        self.groups.get_mut(gid).ok_or_else(|| crate::error::Error::new(Kind::BadId, "group id"))
    }

    /// A variable by reference; NC_GLOBAL or an index the group lacks is NC_ENOTVAR.
    pub(crate) fn var(&self, gid: usize, varid: VarRef) -> Result<&Var> {
        let i = varid.index()?;
        self.group(gid)?.vars.get(i).ok_or_else(|| crate::error::Error::new(Kind::NotVar, varid.to_string()))
    }

    pub(crate) fn var_mut(&mut self, gid: usize, varid: VarRef) -> Result<&mut Var> {
        let i = varid.index()?;
        self.group_mut(gid)?.vars.get_mut(i).ok_or_else(|| crate::error::Error::new(Kind::NotVar, varid.to_string()))
    }

    pub(crate) fn dim(&self, dimid: i32) -> Result<&Dim> {
        usize::try_from(dimid)
            .ok()
            .and_then(|d| self.dims.get(d))
            .ok_or_else(|| crate::error::Error::new(Kind::BadDim, format!("dimid {dimid}")))
    }

    /// Attribute list of a variable or, for NC_GLOBAL, of the group.
    pub(crate) fn atts(&self, gid: usize, varid: VarRef) -> Result<&Vec<Att>> {
        match varid {
            VarRef::Global => Ok(&self.group(gid)?.atts),
            VarRef::Var(_) => Ok(&self.var(gid, varid)?.atts),
        }
    }

    pub(crate) fn atts_mut(&mut self, gid: usize, varid: VarRef) -> Result<&mut Vec<Att>> {
        match varid {
            VarRef::Global => Ok(&mut self.group_mut(gid)?.atts),
            VarRef::Var(_) => Ok(&mut self.var_mut(gid, varid)?.atts),
        }
    }

    /// "/g1/g2" for a group, "/" for the root.
    pub(crate) fn full_name(&self, gid: usize) -> String {
        let mut parts = Vec::new();
        let mut cur = Some(gid);
        while let Some(g) = cur {
            if g != 0 {
                parts.push(self.groups[g].name.as_str());
            }
            cur = self.groups[g].parent;
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }

    /// The storage key prefix of a group as its names are now ("" for the root).
    pub(crate) fn group_key(&self, gid: usize) -> String {
        self.full_name(gid).trim_start_matches('/').to_string()
    }

    pub(crate) fn var_key(&self, gid: usize, varid: usize) -> String {
        join_key(&self.group_key(gid), &self.groups[gid].vars[varid].name)
    }

    /// Current length of a dimension (unlimited: records written so far).
    pub(crate) fn dim_len(&self, dimid: usize) -> u64 {
        self.dims[dimid].len
    }

    pub(crate) fn var_shape(&self, var: &Var) -> Vec<u64> {
        var.dimids.iter().map(|&d| self.dim_len(d)).collect()
    }

    /// Variables, groups and types share one namespace per group.
    pub(crate) fn name_in_use(&self, gid: usize, name: &str) -> bool {
        let g = &self.groups[gid];
        g.vars.iter().any(|v| v.name == name) || g.children.iter().any(|&c| self.groups[c].name == name)
    }

    /// The group's own first unlimited dimension (what `nc_inq_unlimdim` reports).
    pub(crate) fn first_unlimited(&self, gid: usize) -> Option<usize> {
        self.groups[gid].dims.iter().copied().find(|&d| self.dims[d].unlimited)
    }

    /// Looks a dimension up by name in a group and then its ancestors.
    pub(crate) fn find_dim(&self, gid: usize, name: &str) -> Option<usize> {
        let mut cur = Some(gid);
        while let Some(g) = cur {
            if let Some(&d) = self.groups[g].dims.iter().find(|&&d| self.dims[d].name == name) {
                return Some(d);
            }
            cur = self.groups[g].parent;
        }
        None
    }

    pub(crate) fn add_group(&mut self, parent: usize, name: String) -> usize {
        let gid = self.groups.len();
        self.groups.push(Group {
            name,
            parent: Some(parent),
            children: Vec::new(),
            dims: Vec::new(),
            vars: Vec::new(),
            atts: Vec::new(),
            stored_key: None,
        });
        self.groups[parent].children.push(gid);
        gid
    }

    pub(crate) fn add_dim(&mut self, gid: usize, name: String, len: u64, unlimited: bool) -> usize {
        let dimid = self.dims.len();
        self.dims.push(Dim { name, len, unlimited, group: gid });
        self.groups[gid].dims.push(dimid);
        dimid
    }

    /// The fully qualified name of a dimension, e.g. "/g1/lat".
    pub(crate) fn dim_fqn(&self, dimid: usize) -> String {
        let d = &self.dims[dimid];
        let g = self.full_name(d.group);
        if g == "/" { format!("/{}", d.name) } else { format!("{g}/{}", d.name) }
    }

    /// Resolves "/g1/lat" to a dimension id.
    pub(crate) fn dim_by_fqn(&self, fqn: &str) -> Result<usize> {
        let trimmed = fqn.trim_start_matches('/');
        let (path, name) = match trimmed.rfind('/') {
            Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
            None => ("", trimmed),
        };
        let mut gid = 0;
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            gid = *self.groups[gid]
                .children
                .iter()
                .find(|&&c| self.groups[c].name == seg)
                .ok_or_else(|| crate::error::Error::new(Kind::NcZarr, format!("dimension reference {fqn}")))?;
        }
        self.groups[gid]
            .dims
            .iter()
            .copied()
            .find(|&d| self.dims[d].name == name)
            .ok_or_else(|| crate::error::Error::new(Kind::NcZarr, format!("dimension reference {fqn}")))
    }
}

pub(crate) fn join_key(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_string() } else { format!("{prefix}/{name}") }
}

/// netcdf-c's default chunk sizes (c-api.md §8.4, nczarr-format.md §9.1), computed with
/// unlimited lengths taken as 0 (C11) so the layout does not depend on records written.
pub(crate) fn default_chunks(shape: &[u64], unlimited: &[bool], type_size: usize) -> Vec<u64> {
    const DEFAULT: f64 = 16_777_216.0;
    let n = shape.len();
    if n == 0 {
        return Vec::new();
    }
    let t = type_size.max(1) as f64;
    let nunlim = unlimited.iter().filter(|u| **u).count();
    let mut chunks: Vec<u64> = vec![0; n];
    for i in 0..n {
        if unlimited[i] {
            chunks[i] = 1;
        }
    }
    if n == 1 && nunlim == 1 {
        let c = ((DEFAULT / t).min(4096.0) / t).floor() as u64;
        return vec![c.max(1)];
    }
    if nunlim == n {
        let c = (DEFAULT / t).powf(1.0 / n as f64).floor() as u64;
        return vec![c.max(1); n];
    }
    let fixed_product: f64 = (0..n).filter(|&i| !unlimited[i]).map(|i| shape[i] as f64).product();
    let nfixed = (n - nunlim) as f64;
    for i in 0..n {
        if unlimited[i] {
            continue;
        }
        let len = shape[i];
        let c = if fixed_product > 0.0 { ((DEFAULT / (fixed_product * t)).powf(1.0 / nfixed) * len as f64 - 0.5).floor() } else { 1.0 };
        let c = if c.is_finite() { c as u64 } else { 1 };
        chunks[i] = c.min(len).max(1);
    }
    while (chunks.iter().map(|&c| c as f64).product::<f64>() * t) > 4_294_967_295.0 {
        for c in chunks.iter_mut() {
            *c = (*c / 2).max(1);
        }
    }
    for i in 0..n {
        let len = if unlimited[i] { 0 } else { shape[i] };
        if len == 0 {
            continue;
        }
        let nchunks = len.div_ceil(chunks[i]);
        chunks[i] -= (nchunks * chunks[i] - len) / nchunks;
    }
    chunks
}

/// S3netCDF4's file-splitting rule for the sub-arrays (fragments) of an aggregated variable
/// with no chunking of its own: axes are taken as `T Z Y X` from the last one back (any before
/// those are `N`), and the whole array is divided until a sub-array holds at most `max_bytes`,
/// splitting the field axes (`X`, `Y`) while a field read touches no more sub-arrays than a
/// time-series read does, else the linear axes (`T`, `Z`, `N`); within each kind the axis split
/// fewest times so far goes next. An unlimited dimension, whose length is not known yet, counts
/// as long as one sub-array of the other axes whole can hold (at least one record).
pub(crate) fn fragment_chunks(shape: &[u64], unlimited: &[bool], type_size: usize, max_bytes: u64) -> Vec<u64> {
    let n = shape.len();
    if n == 0 {
        return Vec::new();
    }
    let item = type_size.max(1) as f64;
    let record: f64 = (0..n).filter(|&i| !unlimited[i]).map(|i| shape[i].max(1) as f64).product::<f64>() * item;
    let records = ((max_bytes as f64 / record).floor() as u64).max(1);
    let len: Vec<u64> = (0..n).map(|i| if unlimited[i] { records } else { shape[i].max(1) }).collect();
    const AXES: [char; 4] = ['T', 'Z', 'Y', 'X'];
    let axis: Vec<char> = (0..n).map(|i| if n - i <= 4 { AXES[4 - (n - i)] } else { 'N' }).collect();
    let mut divs = vec![1u64; n];
    let bytes = |divs: &[u64]| (0..n).map(|i| len[i].div_ceil(divs[i]) as f64).product::<f64>() * item;
    let find = |a: char| axis.iter().position(|&x| x == a);
    while bytes(&divs) > max_bytes as f64 {
        let linear = find('T').or_else(|| find('Z')).or_else(|| find('N')).map(|i| divs[i]);
        let field = match (find('X'), find('Y')) {
            (Some(x), Some(y)) => Some(divs[x] * divs[y]),
            (Some(a), None) | (None, Some(a)) => Some(divs[a]),
            (None, None) => None,
        };
        let kinds: &[char] =
            if field.unwrap_or(0) as i64 <= linear.map_or(-1, |l| l as i64) || linear.is_none() { &['X', 'Y'] } else { &['T', 'Z', 'N'] };
        let pick = |kinds: &[char]| (0..n).filter(|&i| kinds.contains(&axis[i]) && divs[i] < len[i]).min_by_key(|&i| divs[i]);
        // An axis kind with nothing left to split hands over to the other.
        match pick(kinds).or_else(|| pick(&['X', 'Y', 'T', 'Z', 'N'])) {
            Some(i) => divs[i] += 1,
            None => break,
        }
    }
    (0..n).map(|i| len[i].div_ceil(divs[i]).max(1)).collect()
}

pub(crate) fn check_var_type(t: i32) -> Result<NcType> {
    if t == 0 {
        return err(Kind::BadType, "NC_NAT");
    }
    NcType::from_id(t)
}

#[cfg(test)]
mod tests {
    use super::default_chunks;

    #[test]
    fn default_chunk_examples() {
        assert_eq!(default_chunks(&[300, 400], &[false, false], 4), vec![300, 400]);
        assert_eq!(default_chunks(&[10_000_000], &[false], 1), vec![10_000_000]);
        assert_eq!(default_chunks(&[0, 1000, 2000], &[true, false, false], 8), vec![1, 1000, 2000]);
        assert_eq!(default_chunks(&[1000, 2000, 7], &[false, false, false], 8), vec![500, 1000, 3]);
        assert_eq!(default_chunks(&[0, 7], &[true, false], 4), vec![1, 7]);
        assert_eq!(default_chunks(&[0], &[true], 4), vec![1024]);
        assert_eq!(default_chunks(&[0], &[true], 8), vec![512]);
        assert_eq!(default_chunks(&[1000, 3000], &[false, false], 8), vec![500, 1500]);
    }

    #[test]
    fn fragment_chunks_follow_the_s3netcdf4_split() {
        use super::fragment_chunks;
        // Small enough: one sub-array.
        assert_eq!(fragment_chunks(&[12, 18, 36], &[false; 3], 4, 50 << 20), vec![12, 18, 36]);
        // 4 x 100 x 100 floats over 40000 bytes: a field axis first, then time (the field
        // now has more pieces than a time series), balancing the two kinds of read.
        assert_eq!(fragment_chunks(&[4, 100, 100], &[false; 3], 4, 40_000), vec![2, 50, 100]);
        // Unlimited time: as many records as fit, the field whole.
        assert_eq!(fragment_chunks(&[0, 18, 36], &[true, false, false], 4, 50 << 20), vec![20227, 18, 36]);
        // One record over the limit: one record per sub-array, the field split.
        let c = fragment_chunks(&[0, 1000, 1000], &[true, false, false], 8, 1 << 20);
        assert_eq!(c[0], 1);
        assert!(c[1] * c[2] * 8 <= 1 << 20, "{c:?}");
    }
}
