//! Which chunks a selection touches and, for each, the runs of elements that move between
//! the chunk and user memory.

use super::chunk::Layout;
use super::selection::Selection;
/// One dimension's part of one chunk: `n` selected positions, the first at `first_off`
/// inside the chunk (then every `stride`), being the `first_k`-th..of the selection.
#[derive(Debug, Clone, Copy)]
pub(super) struct DimSpan {
    pub(super) chunk: u64,
    pub(super) first_off: u64,
    pub(super) first_k: u64,
    pub(super) n: u64,
}

pub(super) fn project(start: u64, count: u64, stride: u64, chunk_len: u64) -> Vec<DimSpan> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < count {
        let idx = start + k * stride;
        let chunk = idx / chunk_len;
        let chunk_end = (chunk + 1) * chunk_len;
        let kmax = ((chunk_end - 1 - start) / stride).min(count - 1);
        out.push(DimSpan { chunk, first_off: idx - chunk * chunk_len, first_k: k, n: kmax - k + 1 });
        k = kmax + 1;
    }
    out
}

/// One contiguous-in-loop transfer: `n` elements, chunk offset/step and memory offset/step.
pub(super) struct Run {
    pub(super) coff: usize,
    pub(super) cstep: usize,
    pub(super) moff: usize,
    pub(super) mstep: isize,
    pub(super) n: usize,
}

impl Run {
    /// Memory index of the run's `j`-th element (steps may be negative under an imap).
    pub(super) fn mem(&self, j: usize) -> usize {
        (self.moff as isize + j as isize * self.mstep) as usize
    }

    /// One past the highest memory index the run touches.
    pub(super) fn mem_end(&self) -> usize {
        self.moff.max(self.mem(self.n.saturating_sub(1))) + 1
    }
}

pub(super) struct ChunkPlan {
    pub(super) idx: Vec<u64>,
    /// Does the selection cover every in-bounds element of the chunk?
    pub(super) whole: bool,
    pub(super) runs: Vec<Run>,
}

pub(super) fn plan(layout: &Layout, shape: &[u64], sel: &Selection) -> Vec<ChunkPlan> {
    let rank = sel.count.len();
    if rank == 0 {
        return vec![ChunkPlan { idx: vec![], whole: true, runs: vec![Run { coff: 0, cstep: 1, moff: 0, mstep: 1, n: 1 }] }];
    }
    let per_dim: Vec<Vec<DimSpan>> = (0..rank).map(|d| project(sel.start[d], sel.count[d], sel.stride[d], layout.chunk_shape[d])).collect();
    let cstr = layout.chunk_strides();
    let mut plans = Vec::new();
    let mut which = vec![0usize; rank];
    'chunks: loop {
        let pieces: Vec<DimSpan> = (0..rank).map(|d| per_dim[d][which[d]]).collect();
        let whole = (0..rank).all(|d| {
            let p = pieces[d];
            let cl = layout.chunk_shape[d];
            let valid = cl.min(shape[d].saturating_sub(p.chunk * cl)).max(1);
            p.first_off == 0 && p.n >= valid && (sel.stride[d] == 1 || p.n == 1 && valid == 1)
        });
        let mut runs = Vec::new();
        let last = rank - 1;
        let mut j = vec![0u64; rank];
        loop {
            let mut coff = 0usize;
            let mut moff = sel.origin as i64;
            for d in 0..last {
                coff += ((pieces[d].first_off + j[d] * sel.stride[d]) as usize) * cstr[d];
                moff += (pieces[d].first_k + j[d]) as i64 * sel.imap[d];
            }
            coff += pieces[last].first_off as usize * cstr[last];
            moff += pieces[last].first_k as i64 * sel.imap[last];
            runs.push(Run {
                coff,
                cstep: sel.stride[last] as usize * cstr[last],
                moff: moff as usize,
                mstep: sel.imap[last] as isize,
                n: pieces[last].n as usize,
            });
            let mut d = last;
            loop {
                if d == 0 {
                    break;
                }
                d -= 1;
                j[d] += 1;
                if j[d] < pieces[d].n {
                    break;
                }
                j[d] = 0;
                if d == 0 {
                    d = usize::MAX;
                    break;
                }
            }
            if d == usize::MAX || last == 0 {
                break;
            }
        }
        plans.push(ChunkPlan { idx: pieces.iter().map(|p| p.chunk).collect(), whole, runs });
        let mut d = rank;
        loop {
            if d == 0 {
                break 'chunks;
            }
            d -= 1;
            which[d] += 1;
            if which[d] < per_dim[d].len() {
                break;
            }
            which[d] = 0;
        }
    }
    plans
}

/// `(memory offset, elements)` when a plan covers its whole chunk and the chunk's elements
/// sit contiguously and in order in memory (then chunk bytes and memory bytes coincide).
pub(super) fn contiguous_span(layout: &Layout, p: &ChunkPlan) -> Option<(usize, usize)> {
    let total: usize = p.runs.iter().map(|r| r.n).sum();
    let first = p.runs.first()?;
    let mut next = (0usize, first.moff);
    let ok = total == layout.nelems
        && p.runs.iter().all(|r| {
            let ok = r.cstep == 1 && (r.mstep == 1 || r.n == 1) && (r.coff, r.moff) == next;
            next = (r.coff + r.n, r.moff + r.n);
            ok
        });
    ok.then_some((first.moff, total))
}

/// Do the chunk's runs cover all of it in storage order, each contiguous in chunk and memory?
/// Then the chunk's bytes are the runs' memory, one after another.
pub(super) fn tiles_chunk(layout: &Layout, p: &ChunkPlan) -> bool {
    let mut next = 0;
    p.runs.iter().map(|r| r.n).sum::<usize>() == layout.nelems
        && p.runs.iter().all(|r| {
            let fits = r.coff == next && (r.cstep == 1 || r.n == 1) && (r.mstep == 1 || r.n == 1);
            next += r.n;
            fits
        })
}
