//! Datasets opened by many MPI ranks at once (`nc_create_par`, `nc_open_par`).
//!
//! Every rank holds the whole model and makes the same define-mode calls; at each collective
//! point (enddef, sync, redef, close) the ranks check they agree, and then:
//! 1. unlimited dimensions take the largest length any rank wrote;
//! 2. chunks a rank wrote whole go from that rank straight to storage;
//! 3. chunks a rank wrote in part travel as pieces to the chunk's owner rank, which reads the
//!    chunk once, lays every piece over it in rank order and stores it once (two-phase I/O;
//!    a sharded variable's chunks all travel, to the owner of their shard);
//! 4. rank 0 alone writes metadata;
//! 5. every rank forgets its cached chunks, so reads see what the others wrote.
//!
//! A failure on any rank fails the collective call on every rank at the same step (`agree`).

use super::*;
use crate::collective::Comm;
use crate::engine::{Piece, WirePiece, decode_pieces};
use crate::model::VarKey;
use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};

/// NC_MPIIO: set in the mode `nc_inq_format_extended` reports for parallel datasets.
const MPIIO: i32 = 0x2000;

/// Default bound on bytes of partly written chunks a rank holds between collective calls.
const PENDING_LIMIT_DEFAULT: usize = 256 << 20;

pub(crate) struct ParState {
    pub comm: Comm,
    /// Variables switched to NC_COLLECTIVE (the default is NC_INDEPENDENT, as netcdf-c's).
    collective: HashSet<VarKey>,
    pending_limit: usize,
}

/// `nc_var_par_access`'s modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Independent,
    Collective,
}

fn pending_limit() -> usize {
    crate::config::par_pending_mb().map_or(PENDING_LIMIT_DEFAULT, |mb| mb << 20)
}

fn check_driver(spec: &OpenSpec, writing: bool) -> Result<()> {
    let zip = spec.driver == Some(Driver::Zip) || (spec.driver.is_none() && probe(&spec.path) == Some(Driver::Zip));
    if zip && writing {
        return err(Kind::Invalid, "zip stores are read-only in parallel (one archive cannot take writes from many ranks)");
    }
    let icechunk = spec.driver == Some(Driver::Icechunk) || (spec.driver.is_none() && probe(&spec.path) == Some(Driver::Icechunk));
    if icechunk && writing {
        // Each rank's writes would be a session of its own, and so a commit of its own: one
        // snapshot per close needs the sessions merged first, which is not built.
        return err(Kind::Invalid, "Icechunk repositories are read-only in parallel (one commit cannot yet take writes from many ranks)");
    }
    Ok(())
}

impl Dataset {
    fn attach(mut self, comm: Comm) -> Dataset {
        self.mode = OpenFlags::from_bits(self.mode.reported() | MPIIO);
        self.chunks.track_writes();
        self.par = Some(ParState { comm, collective: HashSet::new(), pending_limit: pending_limit() });
        self
    }

    /// `nc_create_par`: rank 0 creates the dataset (clobbering as `nc_create` does); once it
    /// exists, the other ranks attach to it without writing anything.
    pub fn create_par(spec: OpenSpec, cmode: OpenFlags, comm: Comm) -> Result<Dataset> {
        let local = check_driver(&spec, true)
            .and_then(|()| if comm.rank() == 0 { Dataset::create(spec.clone(), cmode).map(Some) } else { Ok(None) });
        let created = comm.agree(local)?;
        let ds = match created {
            Some(ds) => Ok(ds),
            None => Dataset::attach_created(spec, cmode),
        };
        Ok(comm.agree(ds)?.attach(comm))
    }

    /// A rank other than 0 joining the dataset rank 0 has just created.
    fn attach_created(spec: OpenSpec, cmode: OpenFlags) -> Result<Dataset> {
        let format = ZarrFormat::from_number(spec.create_format());
        let (store, _) = crate::zmap::open::open(&spec, false, true, format.zip_in_folder())?;
        let mut ds = Dataset::fresh(spec, cmode, store, format);
        // Rank 0 wrote the root group; what this rank would render now is what it wrote.
        let opts = ds.render_options();
        ds.stored = ds.format.render(&ds.model, &opts).into_iter().collect();
        ds.dirty = true;
        Ok(ds)
    }

    /// `nc_open_par`: every rank reads the metadata itself.
    pub fn open_par(spec: OpenSpec, omode: OpenFlags, comm: Comm) -> Result<Dataset> {
        let local = check_driver(&spec, omode.write()).and_then(|()| Dataset::open(spec, omode));
        Ok(comm.agree(local)?.attach(comm))
    }

    /// `nc_var_par_access`: NC_GLOBAL sets every variable of the group.
    pub fn set_par_access(&mut self, gid: usize, varid: VarRef, access: Access) -> Result<()> {
        let nvars = self.model.groups.get(gid).map_or(0, |g| g.vars.len());
        let Some(par) = self.par.as_mut() else { return err(Kind::NoPar, "dataset not opened with nc_create_par/nc_open_par") };
        let vars: Vec<usize> = match varid {
            VarRef::Global => (0..nvars).collect(),
            VarRef::Var(v) if v < nvars => vec![v],
            VarRef::Var(v) => return err(Kind::NotVar, format!("varid {v}")),
        };
        for v in vars {
            match access {
                Access::Collective => par.collective.insert(VarKey::new(gid, v)),
                Access::Independent => par.collective.remove(&VarKey::new(gid, v)),
            };
        }
        Ok(())
    }

    /// After each write of a parallel dataset: partly written chunks held past the bound are
    /// merged now if the variable is collective (every rank is in this call); independent
    /// writers get NC_ENOMEM and keep what they hold until the next collective call.
    pub(super) fn after_par_write(&mut self, gid: usize, varid: usize) -> Result<()> {
        let Some(par) = self.par.as_ref() else { return Ok(()) };
        let over = self.chunks.pending_bytes() > par.pending_limit;
        if par.collective.contains(&VarKey::new(gid, varid)) {
            let mut flag = [over as u64];
            par.comm.max(&mut flag)?;
            if flag[0] == 1 {
                return self.exchange_chunks();
            }
            return Ok(());
        }
        if over {
            return err(
                Kind::NoMem,
                format!(
                    "{} MiB of partly written chunks wait for the next collective call (NCZARR_PAR_PENDING_MB): call nc_sync, or use NC_COLLECTIVE",
                    par.pending_limit >> 20
                ),
            );
        }
        Ok(())
    }

    /// A digest of everything define mode decides, with unlimited lengths left out (they
    /// differ between ranks until agreed): equal on every rank that made the same calls.
    fn define_digest(&self) -> u64 {
        let mut model = self.model.clone();
        for d in &mut model.dims {
            if d.unlimited {
                d.len = 0;
            }
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (k, v) in self.format.render(&model, &self.render_options()) {
            k.hash(&mut h);
            v.hash(&mut h);
        }
        h.finish()
    }

    /// The collective part of `persist` (steps 1–5 of the module comment).
    pub(super) fn persist_par(&mut self) -> Result<()> {
        let par = self.par.as_ref().expect("parallel dataset");
        let rank = par.comm.rank();
        let digest = self.define_digest();
        let mut digest = [digest, !digest];
        par.comm.max(&mut digest)?;
        if digest[0] != !digest[1] {
            return err(
                Kind::Mpi,
                "ranks made different define-mode calls (every rank must define the same dimensions, variables and attributes)",
            );
        }
        let unlimited: Vec<usize> = (0..self.model.dims.len()).filter(|&d| self.model.dims[d].unlimited).collect();
        let mut lens: Vec<u64> = unlimited.iter().map(|&d| self.model.dims[d].len).collect();
        par.comm.max(&mut lens)?;
        for (&d, len) in unlimited.iter().zip(lens) {
            if self.model.dims[d].len != len {
                self.model.dims[d].len = len;
                self.dirty = true;
            }
        }
        let renamed = if rank == 0 { self.apply_renames() } else { Ok(()) };
        self.par_agree(renamed)?;
        if rank != 0 {
            self.note_renames();
        }
        self.exchange_chunks()?;
        let mut local = self.flush_metadata_as(rank == 0);
        if local.is_ok() && rank == 0 {
            local = self.delete_retired();
        }
        let local = local.and_then(|()| self.store.flush());
        self.par_agree(local)?;
        self.chunks.clear();
        Ok(())
    }

    fn par_agree<T>(&self, local: Result<T>) -> Result<T> {
        self.par.as_ref().expect("parallel dataset").comm.agree(local)
    }

    /// Steps 2 and 3: whole chunks stored by their writer, pieces merged by their owner.
    fn exchange_chunks(&mut self) -> Result<()> {
        let stored = self.store_whole_chunks();
        let outgoing = self.par_agree(stored)?;
        let par = self.par.as_ref().expect("parallel dataset");
        let received = par.comm.exchange(&outgoing)?;
        let local = self.merge_pieces(received);
        self.par_agree(local)
    }

    /// Stores this rank's wholly written chunks; returns the pieces for each owner rank.
    fn store_whole_chunks(&mut self) -> Result<Vec<Vec<u8>>> {
        let size = self.par.as_ref().expect("parallel dataset").comm.size();
        let mut outgoing = vec![Vec::new(); size];
        for key in self.chunks.dirty_vars() {
            let VarKey { gid, varid } = key;
            let layout = self.chunk_layout(gid, varid)?;
            let var = self.model.var(gid, VarRef::Var(varid))?;
            let shard = var.stored.v3.as_ref().and_then(|v| v.shard.clone());
            let mut pieces: Vec<Piece> = self.chunks.take_pieces(key, shard.is_some());
            if shard.is_none() {
                self.chunks.flush_var(self.store.as_ref(), key, &layout)?;
            }
            pieces.sort_by(|a, b| a.idx.cmp(&b.idx));
            for p in pieces {
                let owner = owner_of(key, &object_of(&p.idx, &layout.chunk_shape, shard.as_deref()), size);
                p.encode(layout.item, &mut outgoing[owner]);
            }
        }
        Ok(outgoing)
    }

    /// The owner's side: what each rank sent, merged variable by variable.
    fn merge_pieces(&mut self, received: Vec<Vec<u8>>) -> Result<()> {
        let mut by_var: BTreeMap<VarKey, BTreeMap<Vec<u64>, Vec<WirePiece>>> = BTreeMap::new();
        // Ranks in order, and each rank's pieces in the order it sent them.
        for from in received {
            for p in decode_pieces(&from)? {
                by_var.entry(p.var).or_default().entry(p.idx.clone()).or_default().push(p);
            }
        }
        for (VarKey { gid, varid }, chunks) in by_var {
            let layout = self.chunk_layout(gid, varid)?;
            let var = self.model.var(gid, VarRef::Var(varid))?;
            crate::zmap::adapter::shard::through(
                self.store.as_ref(),
                &self.shard_indexes,
                var,
                &layout.key,
                layout.stored_limit(),
                |store| crate::engine::merge(store, &layout, chunks.into_iter().collect()),
            )?;
        }
        Ok(())
    }
}

/// The object a chunk lives in: the chunk itself, or its shard.
fn object_of(idx: &[u64], chunk: &[u64], shard: Option<&[u64]>) -> Vec<u64> {
    match shard {
        None => idx.to_vec(),
        Some(s) => idx.iter().zip(chunk).zip(s).map(|((&i, &c), &s)| i * c / s.max(1)).collect(),
    }
}

/// The rank that merges an object's pieces: spread over ranks, the same on every rank.
fn owner_of(var: VarKey, object: &[u64], size: usize) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (var, object).hash(&mut h);
    (h.finish() % size as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::fake;
    use crate::engine::{Mem, MemType, Request};

    fn url(dir: &std::path::Path) -> String {
        format!("file://{}#mode=nczarr,file", dir.display())
    }

    /// Four ranks (threads) each write every fourth element of one chunk, one element per call;
    /// the chunk comes back whole after the collective close.
    #[test]
    fn pieces_of_one_chunk_from_four_ranks_all_land() {
        let dir = std::env::temp_dir().join(format!("par_pieces_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let world = fake::world(4);
        let name = url(&dir);
        let handles: Vec<_> = (0..4)
            .map(|rank| {
                let (world, name) = (world.clone(), name.clone());
                std::thread::spawn(move || {
                    let comm = Comm::new(fake::comm(&world, rank)).unwrap();
                    let spec = crate::url::parse(&name).unwrap().unwrap();
                    let mut ds = Dataset::create_par(spec, OpenFlags::from_bits(0x1000), comm).unwrap();
                    let x = ds.def_dim(0, b"x", 8).unwrap() as i32;
                    let t = ds.def_dim(0, b"t", 0).unwrap() as i32;
                    let v = ds.def_var_codes(0, b"v", 4, Some(&[t, x]), 2).unwrap();
                    ds.def_var_chunking(0, VarRef::Var(v), crate::nc::modes::Storage::Chunked, Some(vec![4, 8])).unwrap();
                    ds.enddef().unwrap();
                    for i in (rank..32).step_by(4) {
                        let (start, count) = ([i / 8, i % 8], [1usize, 1]);
                        let req = Request { start: Some(&start), count: Some(&count), stride: None, imap: None };
                        let sel = ds.select(0, VarRef::Var(v), &req, true).unwrap();
                        let mut val = (100 + i as i32).to_ne_bytes().to_vec();
                        ds.write(0, VarRef::Var(v), &sel, Mem::Bytes(&mut val, MemType::Num(NcType::Int))).unwrap();
                    }
                    ds.close().unwrap();
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        let spec = crate::url::parse(&name).unwrap().unwrap();
        let mut ds = Dataset::open(spec, OpenFlags::from_bits(0)).unwrap();
        assert_eq!(ds.model.dims[1].len, 4);
        let (start, count) = ([0usize, 0], [4usize, 8]);
        let req = Request { start: Some(&start), count: Some(&count), stride: None, imap: None };
        let sel = ds.select(0, VarRef::Var(0), &req, false).unwrap();
        let mut out = vec![0u8; 128];
        ds.read(0, VarRef::Var(0), &sel, Mem::Bytes(&mut out, MemType::Num(NcType::Int))).unwrap();
        let got: Vec<i32> = out.chunks(4).map(|b| i32::from_ne_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, (100..132).collect::<Vec<i32>>());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
