//! Aggregated datasets (CFA-netCDF 0.4 and 0.5 as S3netCDF4 writes them, CF-1.12 aggregation),
//! read transparently: a master is read through `NcSource` and turned into one of our datasets,
//! held in memory — the master's dimensions, attributes and ordinary variables copied, each
//! aggregated variable an ordinary variable over its aggregated dimensions whose chunks come
//! from the fragment files (`zmap::cfa`). The CFA bookkeeping (the `cf_role`/`cfa_*`/
//! `aggregated_*` attributes, CFA-0.5's `cfa_<var>` groups, CF's fragment array variables) is
//! not copied. Fragments are opened through an `Opener` the caller provides.
//!
//! Written too: a create of an aggregated name, or the reopen of a master for writing, gives
//! our dataset over a store that hands each chunk to a fragment file; each sync and close
//! stores the fragments and writes the master.
//!
//! Files: `conventions` (which convention; a variable's fragment list per convention), `copy`
//! (a master into ours), `read` (fragments read through the opener), `place` (names), `write`
//! (creating, reopening, storing), `fragment_files` (fragments written behind), `master` (the
//! master written).

mod conventions;
mod copy;
mod fragment_files;
mod master;
pub mod place;
mod read;
pub mod write;

pub use conventions::convention_of;

use crate::dataset::Dataset;
use crate::error::Result;
use crate::nc::modes::OpenFlags;
use crate::source::{CreateFormat, NcFile, NcSink, NcSource};
use crate::zmap::cfa::write::ArrayInfo;
use crate::zmap::cfa::{Aggregated, CfaStore, FragmentReader};
use crate::zmap::memory::MemoryStore;
use std::sync::Arc;

/// Each aggregated variable with its fill value (one element, native byte order).
pub type AggregatedVars = Vec<(Aggregated, Vec<u8>)>;

/// Opens the files a master names, read-only, as sources: the C crate's opener reaches the
/// real netcdf-c (netCDF-3 and netCDF-4, local or fetched from S3) and opens our own datasets
/// directly.
pub trait Opener: Send + Sync {
    /// `name` read-only.
    fn open(&self, name: &str) -> Result<Box<dyn NcSource + Send>>;

    /// `name` for reading and writing (a fragment written again).
    fn open_write(&self, name: &str) -> Result<Box<dyn NcFile>>;

    /// A new file `name` in `format`, replacing any (fragments and masters being written).
    fn create(&self, name: &str, format: CreateFormat) -> Result<Box<dyn NcFile>>;
}

/// A master turned into our dataset, still writable and in define mode's aftermath: either
/// sealed read-only over its fragments (`read_only`), or closed into `memory` for a writer
/// to reopen (`into_parts`).
pub struct Built {
    name: String,
    dataset: Dataset,
    memory: Arc<MemoryStore>,
    vars: AggregatedVars,
    reader: Arc<dyn FragmentReader>,
    opener: Arc<dyn Opener>,
}

/// Builds our dataset for `master`, named `name`, whose convention is `version`
/// (`convention_of`).
pub fn build(master: &mut dyn NcSource, name: &str, version: &str, opener: Arc<dyn Opener>) -> Result<Built> {
    let memory = Arc::new(MemoryStore::new());
    let reader: Arc<dyn FragmentReader> = Arc::new(read::SourceReader { opener: opener.clone() });
    let spec = crate::url::OpenSpec::in_memory(name);
    let staging = CfaStore::new(name, memory.clone(), Vec::new(), reader.clone(), false);
    let mut dataset = Dataset::create_on(spec, OpenFlags::netcdf4_clobber(), Box::new(staging), crate::format::ZarrFormat::V2)?;
    let mut copy = copy::Copy { master: name, version, aggregated: Vec::new() };
    let (from, to) = (master.root(), NcSink::root(&dataset));
    copy.group(master, from, &mut dataset, to, "")?;
    Ok(Built { name: name.to_string(), dataset, memory, vars: copy.aggregated, reader, opener })
}

impl Built {
    /// The dataset as an open of it gives it: read-only, its aggregated variables' chunks read
    /// from their fragments (concurrently when any fragment is remote).
    pub fn read_only(mut self, omode: OpenFlags) -> Result<Dataset> {
        let remote = self.vars.iter().any(|(v, _)| v.fragments.iter().any(|f| f.file.contains("://")));
        let store = CfaStore::new(&self.name, self.memory, self.vars, self.reader, remote);
        self.dataset.seal_on(omode, Box::new(store))?;
        Ok(self.dataset)
    }

    /// Each aggregated variable as a fragment writer sees it (dimensions, chunks, fill).
    pub fn array_infos(&self) -> Result<Vec<ArrayInfo>> {
        self.vars.iter().map(|(agg, fill)| self.dataset.aggregated_array_info(agg, fill)).collect()
    }

    /// The dataset stored into its memory store; that store and the aggregated variables.
    pub fn into_parts(self) -> Result<(Arc<MemoryStore>, AggregatedVars)> {
        self.dataset.close()?;
        Ok((self.memory, self.vars))
    }
}
