//! The model as the dataset holds it, counting its changes, and the chunk layout of each
//! variable built once and kept while the model is unchanged: a get or put looks its codec
//! chain (plugin `set_local` included), fill and key up instead of rebuilding them. Any change
//! of the model (a define call, a rename, an attribute, a grown dimension, a variable
//! re-laid by a reference set) counts, so no rule of which change touches which layout is
//! needed: every layout built before it is rebuilt at its next use.

use crate::engine::Layout;
use crate::error::{Error, Kind, Result};
use crate::model::{Model, VarKey};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The dataset's model; every mutable access counts as a change.
pub(super) struct TrackedModel {
    model: Model,
    changes: u64,
}

impl TrackedModel {
    pub(super) fn new(model: Model) -> TrackedModel {
        TrackedModel { model, changes: 0 }
    }
}

impl std::ops::Deref for TrackedModel {
    type Target = Model;
    fn deref(&self) -> &Model {
        &self.model
    }
}

impl std::ops::DerefMut for TrackedModel {
    fn deref_mut(&mut self) -> &mut Model {
        self.changes += 1;
        &mut self.model
    }
}

/// Chunk layouts by variable, each with the model's change count it was built at.
#[derive(Default)]
pub(super) struct Layouts(Mutex<HashMap<VarKey, (u64, Arc<Layout>)>>);

impl Layouts {
    /// The layout of `var`, built by `build` unless one made since the model's last change is
    /// kept.
    pub(super) fn get(&self, model: &TrackedModel, var: VarKey, build: impl FnOnce(&Model) -> Result<Layout>) -> Result<Arc<Layout>> {
        let mut held = self.0.lock().map_err(|_| Error::new(Kind::Internal, "chunk layouts poisoned"))?;
        if let Some((at, layout)) = held.get(&var)
            && *at == model.changes
        {
            return Ok(layout.clone());
        }
        let layout = Arc::new(build(&model.model)?);
        if held.values().any(|(at, _)| *at != model.changes) {
            // Layouts of an older model are never used again.
            held.clear();
        }
        held.insert(var, (model.changes, layout.clone()));
        Ok(layout)
    }

    /// Forgets every layout: the dataset moved to another store, whose caps shape layouts
    /// (`Caps::raw_chunks`) whether or not the model changed.
    pub(super) fn clear(&mut self) {
        self.0.get_mut().map(HashMap::clear).unwrap_or_else(|p| p.into_inner().clear());
    }
}

#[cfg(test)]
mod tests {
    use crate::dataset::Dataset;
    use crate::nc::modes::{OpenFlags, VarRef};
    use crate::nc::types::NcType;
    use crate::nc::values::Values;
    use std::sync::Arc;

    #[test]
    fn a_layout_is_kept_until_the_model_changes() {
        let store = crate::zmap::memory::MemoryStore::new();
        let spec = crate::url::OpenSpec::in_memory("mem");
        let mut ds = Dataset::create_on(spec, OpenFlags::from_bits(1), Box::new(store), crate::format::ZarrFormat::V2).unwrap();
        let x = crate::model::DimId(ds.def_dim(0, b"x", 6).unwrap());
        let v = ds.def_var(0, b"v", NcType::Int, &[x]).unwrap();
        ds.enddef().unwrap();
        let first = ds.chunk_layout(0, v).unwrap();
        assert!(Arc::ptr_eq(&first, &ds.chunk_layout(0, v).unwrap()), "kept while the model is unchanged");
        ds.redef().unwrap();
        ds.put_att(0, VarRef::Var(v), b"_FillValue", NcType::Int, Values::Int(vec![7])).unwrap();
        let after = ds.chunk_layout(0, v).unwrap();
        assert!(!Arc::ptr_eq(&first, &after), "rebuilt after a change");
        assert_eq!(after.fill.as_ref().map(|f| f.to_ne_bytes()), Some(7i32.to_ne_bytes().to_vec()));
    }
}
