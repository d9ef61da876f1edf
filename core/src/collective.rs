//! The ranks of an MPI communicator, as this crate sees them: a table of C functions that the
//! parallel library's MPI shim (`csrc/par_mpi.c`, built only with an MPI compiler) fills in.
//! The crate itself never links MPI, so the serial libraries carry no MPI dependency; with no
//! shim, no `Comm` can exist and every parallel entry point answers NC_ENOPAR.
//!
//! Every method here is collective: all ranks call it in the same order. `agree` turns each
//! rank's local outcome into one outcome for all, so a failure on one rank makes every rank
//! leave the collective call at the same point (no rank waits for a partner that returned).

use crate::error::{Error, Kind, Result};
use std::ffi::{c_int, c_void};

/// The shim's functions over one duplicated communicator (`ctx`). Each returns 0 on success
/// or an MPI error code.
#[repr(C)]
pub struct NczParComm {
    pub ctx: *mut c_void,
    pub rank: c_int,
    pub size: c_int,
    pub barrier: Option<unsafe extern "C" fn(ctx: *mut c_void) -> c_int>,
    /// In place: `values[i]` becomes the maximum over ranks of `values[i]`.
    pub allreduce_max: Option<unsafe extern "C" fn(ctx: *mut c_void, values: *mut u64, n: usize) -> c_int>,
    /// Sends `send_counts[r]` bytes of `send` (in rank order) to each rank `r`; receives into a
    /// buffer the shim allocates (`*recv`, freed with `free_buf`), `recv_counts[r]` bytes from `r`.
    pub alltoallv: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            send: *const u8,
            send_counts: *const u64,
            recv: *mut *mut u8,
            recv_counts: *mut u64,
        ) -> c_int,
    >,
    pub free_buf: Option<unsafe extern "C" fn(buf: *mut u8)>,
    /// Frees the duplicated communicator (called once, at close).
    pub release: Option<unsafe extern "C" fn(ctx: *mut c_void)>,
}

/// A communicator the dataset owns; released when dropped.
pub struct Comm {
    raw: NczParComm,
}

// SAFETY: the shim's context is only used from the thread holding the dataset's lock; MPI is
// initialised by the application (MPI_THREAD_SINGLE programs call us from one thread).
unsafe impl Send for Comm {}

impl Comm {
    /// Takes ownership of the shim's table after checking it is complete.
    pub fn new(raw: NczParComm) -> Result<Comm> {
        if raw.barrier.is_none() || raw.allreduce_max.is_none() || raw.alltoallv.is_none() || raw.free_buf.is_none() {
            return Err(Error::new(Kind::ParInit, "incomplete MPI shim table"));
        }
        if raw.size < 1 || raw.rank < 0 || raw.rank >= raw.size {
            return Err(Error::new(Kind::ParInit, format!("rank {} of {}", raw.rank, raw.size)));
        }
        Ok(Comm { raw })
    }

    pub(crate) fn rank(&self) -> usize {
        self.raw.rank as usize
    }

    pub(crate) fn size(&self) -> usize {
        self.raw.size as usize
    }

    fn mpi(code: c_int, what: &str) -> Result<()> {
        if code == 0 { Ok(()) } else { Err(Error::new(Kind::Mpi, format!("{what} failed with MPI error {code}"))) }
    }

    pub(crate) fn barrier(&self) -> Result<()> {
        let f = self.raw.barrier.expect("checked in new");
        // SAFETY: the shim's function with its own context.
        Self::mpi(unsafe { f(self.raw.ctx) }, "MPI_Barrier")
    }

    /// Element-wise maximum over all ranks, in place.
    pub(crate) fn max(&self, values: &mut [u64]) -> Result<()> {
        let f = self.raw.allreduce_max.expect("checked in new");
        // SAFETY: `values` is valid for `len` u64s.
        Self::mpi(unsafe { f(self.raw.ctx, values.as_mut_ptr(), values.len()) }, "MPI_Allreduce")
    }

    /// One outcome for all ranks: the local result if every rank succeeded, else the error of
    /// the lowest-numbered failing rank's kind for all (Kind::Mpi where only others failed).
    pub(crate) fn agree<T>(&self, local: Result<T>) -> Result<T> {
        let code = match &local {
            Ok(_) => 0,
            Err(e) => e.code().unsigned_abs() as u64 | 1 << 40,
        };
        let mut v = [code];
        self.max(&mut v)?;
        match (local, v[0]) {
            (local, 0) => local,
            (Err(e), _) => Err(e),
            (Ok(_), other) => {
                let code = -((other & 0xffff_ffff) as i64) as i32;
                Err(Error::new(Kind::Mpi, format!("another rank failed this collective call (status {code})")))
            }
        }
    }

    /// Sends `outgoing[r]` to rank `r`; returns what each rank sent here, by rank.
    pub(crate) fn exchange(&self, outgoing: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        assert_eq!(outgoing.len(), self.size());
        let counts: Vec<u64> = outgoing.iter().map(|b| b.len() as u64).collect();
        // Never an empty buffer's dangling pointer: OpenMPI's MPI_IN_PLACE is (void *)1.
        let mut send: Vec<u8> = outgoing.concat();
        send.reserve(1);
        let mut recv: *mut u8 = std::ptr::null_mut();
        let mut recv_counts = vec![0u64; self.size()];
        let f = self.raw.alltoallv.expect("checked in new");
        // SAFETY: buffers sized as the shim expects (size() counts each).
        let code = unsafe { f(self.raw.ctx, send.as_ptr(), counts.as_ptr(), &mut recv, recv_counts.as_mut_ptr()) };
        Self::mpi(code, "MPI_Alltoallv")?;
        let total: u64 = recv_counts.iter().sum();
        let mut out = Vec::with_capacity(self.size());
        let mut at = 0usize;
        for &n in &recv_counts {
            let n = n as usize;
            out.push(if n == 0 {
                Vec::new()
            } else {
                // SAFETY: the shim allocated `total` bytes at `recv`.
                unsafe { std::slice::from_raw_parts(recv.add(at), n) }.to_vec()
            });
            at += n;
        }
        debug_assert_eq!(at as u64, total);
        if !recv.is_null() {
            // SAFETY: the shim's buffer, freed by the shim's function.
            unsafe { (self.raw.free_buf.expect("checked in new"))(recv) };
        }
        Ok(out)
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        if let Some(release) = self.raw.release {
            // SAFETY: the shim's release, called once.
            unsafe { release(self.raw.ctx) }
        }
    }
}

/// One process simulating `size` ranks over threads, for unit tests of the collective logic.
#[cfg(test)]
pub mod fake {
    use super::*;
    use std::sync::{Arc, Barrier, Mutex};

    pub(crate) struct World {
        pub size: usize,
        barrier: Barrier,
        slots: Mutex<Vec<Vec<u64>>>,
        mail: Mutex<Vec<Vec<Vec<u8>>>>,
    }

    struct Ctx {
        world: Arc<World>,
        rank: usize,
    }

    pub(crate) fn world(size: usize) -> Arc<World> {
        Arc::new(World {
            size,
            barrier: Barrier::new(size),
            slots: Mutex::new(vec![Vec::new(); size]),
            mail: Mutex::new(vec![vec![Vec::new(); size]; size]),
        })
    }

    unsafe extern "C" fn barrier(ctx: *mut c_void) -> c_int {
        // SAFETY: `ctx` is the `Ctx` this fake's `comm` made.
        let c = unsafe { &*(ctx as *const Ctx) };
        c.world.barrier.wait();
        0
    }

    unsafe extern "C" fn max(ctx: *mut c_void, values: *mut u64, n: usize) -> c_int {
        // SAFETY: `ctx` is the `Ctx` this fake's `comm` made.
        let c = unsafe { &*(ctx as *const Ctx) };
        // SAFETY: the caller's `n` values.
        let mine = unsafe { std::slice::from_raw_parts_mut(values, n) };
        c.world.slots.lock().unwrap()[c.rank] = mine.to_vec();
        c.world.barrier.wait();
        {
            let slots = c.world.slots.lock().unwrap();
            for (i, v) in mine.iter_mut().enumerate() {
                *v = slots.iter().map(|s| s[i]).max().unwrap();
            }
        }
        c.world.barrier.wait();
        0
    }

    unsafe extern "C" fn alltoallv(
        ctx: *mut c_void,
        send: *const u8,
        counts: *const u64,
        recv: *mut *mut u8,
        recv_counts: *mut u64,
    ) -> c_int {
        // SAFETY: `ctx` is the `Ctx` this fake's `comm` made.
        let c = unsafe { &*(ctx as *const Ctx) };
        let n = c.world.size;
        // SAFETY: one count per rank.
        let counts = unsafe { std::slice::from_raw_parts(counts, n) };
        let mut at = 0;
        {
            let mut mail = c.world.mail.lock().unwrap();
            for (to, &k) in counts.iter().enumerate() {
                // SAFETY: `send` holds the sum of `counts` bytes.
                mail[to][c.rank] = unsafe { std::slice::from_raw_parts(send.add(at), k as usize) }.to_vec();
                at += k as usize;
            }
        }
        c.world.barrier.wait();
        let mine: Vec<Vec<u8>> = std::mem::take(&mut c.world.mail.lock().unwrap()[c.rank]);
        c.world.mail.lock().unwrap()[c.rank] = vec![Vec::new(); n];
        c.world.barrier.wait();
        let all: Vec<u8> = mine.concat();
        for (r, m) in mine.iter().enumerate() {
            // SAFETY: room for one count per rank.
            unsafe { *recv_counts.add(r) = m.len() as u64 };
        }
        let buf = Box::leak(all.into_boxed_slice());
        // SAFETY: the caller's out-pointer.
        unsafe { *recv = buf.as_mut_ptr() };
        // Remember the length for free_buf.
        LENS.lock().unwrap().push((buf.as_mut_ptr() as usize, buf.len()));
        0
    }

    static LENS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

    unsafe extern "C" fn free_buf(buf: *mut u8) {
        let mut lens = LENS.lock().unwrap();
        if let Some(i) = lens.iter().position(|(p, _)| *p == buf as usize) {
            let (_, len) = lens.swap_remove(i);
            // SAFETY: a buffer `alltoallv` leaked, with its length.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(buf, len)) });
        }
    }

    unsafe extern "C" fn release(ctx: *mut c_void) {
        // SAFETY: the `Ctx` `comm` boxed, released once.
        drop(unsafe { Box::from_raw(ctx as *mut Ctx) });
    }

    pub(crate) fn comm(world: &Arc<World>, rank: usize) -> NczParComm {
        let ctx = Box::into_raw(Box::new(Ctx { world: world.clone(), rank })) as *mut c_void;
        NczParComm {
            ctx,
            rank: rank as c_int,
            size: world.size as c_int,
            barrier: Some(barrier),
            allreduce_max: Some(max),
            alltoallv: Some(alltoallv),
            free_buf: Some(free_buf),
            release: Some(release),
        }
    }

    #[test]
    fn agree_and_exchange() {
        let w = world(3);
        let handles: Vec<_> = (0..3)
            .map(|r| {
                let w = w.clone();
                std::thread::spawn(move || {
                    let c = Comm::new(comm(&w, r)).unwrap();
                    let local: Result<()> = if r == 1 { Err(Error::new(Kind::Invalid, "x")) } else { Ok(()) };
                    let agreed = c.agree(local).unwrap_err();
                    let out: Vec<Vec<u8>> = (0..3).map(|to| vec![r as u8; to + 1]).collect();
                    let got = c.exchange(&out).unwrap();
                    (agreed.code(), got)
                })
            })
            .collect();
        for (r, h) in handles.into_iter().enumerate() {
            let (code, got) = h.join().unwrap();
            assert_eq!(code, if r == 1 { -36 } else { -131 });
            assert_eq!(got, (0..3).map(|from| vec![from as u8; r + 1]).collect::<Vec<_>>());
        }
    }
}
