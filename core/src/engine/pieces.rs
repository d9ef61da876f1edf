//! Partly written chunks of a parallel dataset ("pieces"): the elements one rank wrote into a
//! chunk, with a mask saying which. Pieces travel to the chunk's owner rank, which reads the
//! stored chunk once, lays every rank's piece over it in rank order and stores it once, so two
//! ranks writing parts of one chunk never lose each other's update (two-phase I/O).
//!
//! Wire form of one piece (little-endian): group u32, variable u32, rank count of the index
//! u32, index u64 × n, elements u64, mask u64 × ⌈elements/64⌉, kind u8 (0 fixed, 1 strings),
//! payload length u64, payload: the masked elements in order (fixed: `item` bytes each;
//! strings: u32 length or u32::MAX for a missing string, then the bytes).

use super::chunk::{ChunkBuf, Layout};

use super::flush::DirtyChunk;
use super::flush::write_chunks;
use crate::error::{Error, Kind, Result};
use crate::model::VarKey;
use crate::zmap::{Key, Zmap};
use rayon::prelude::*;

/// Which elements of a chunk a rank wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mask {
    words: Vec<u64>,
    len: usize,
}

impl Mask {
    pub(crate) fn new(len: usize) -> Mask {
        Mask { words: vec![0; len.div_ceil(64)], len }
    }

    pub(crate) fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    pub(crate) fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    pub(crate) fn full(&self) -> bool {
        let whole = self.len / 64;
        self.words[..whole].iter().all(|&w| w == u64::MAX)
            && (self.len.is_multiple_of(64) || self.words[whole] == (1u64 << (self.len % 64)) - 1)
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).filter(|&i| self.get(i))
    }
}

/// One rank's part of one chunk, ready to travel.
pub(crate) struct Piece {
    pub var: VarKey,
    pub idx: Vec<u64>,
    pub mask: Mask,
    pub buf: ChunkBuf,
}

impl Piece {
    pub(crate) fn encode(&self, item: usize, out: &mut Vec<u8>) {
        out.extend((self.var.gid as u32).to_le_bytes());
        out.extend((self.var.varid as u32).to_le_bytes());
        out.extend((self.idx.len() as u32).to_le_bytes());
        self.idx.iter().for_each(|i| out.extend(i.to_le_bytes()));
        out.extend((self.mask.len as u64).to_le_bytes());
        self.mask.words.iter().for_each(|w| out.extend(w.to_le_bytes()));
        let mut payload = Vec::new();
        let kind = match &self.buf {
            ChunkBuf::Fixed(b) => {
                for i in self.mask.iter() {
                    payload.extend_from_slice(&b[i * item..(i + 1) * item]);
                }
                0u8
            }
            ChunkBuf::Strings(s) => {
                for i in self.mask.iter() {
                    match &s[i] {
                        Some(x) => {
                            payload.extend((x.len() as u32).to_le_bytes());
                            payload.extend_from_slice(x.as_bytes());
                        }
                        None => payload.extend(u32::MAX.to_le_bytes()),
                    }
                }
                1u8
            }
        };
        out.push(kind);
        out.extend((payload.len() as u64).to_le_bytes());
        out.extend(payload);
    }
}

/// A received piece: the elements still in wire form.
pub(crate) struct WirePiece {
    pub var: VarKey,
    pub idx: Vec<u64>,
    mask: Mask,
    strings: bool,
    payload: Vec<u8>,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end =
            self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| Error::new(Kind::Mpi, "truncated chunk piece"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
}

/// Splits what one rank sent into its pieces.
pub(crate) fn decode_pieces(bytes: &[u8]) -> Result<Vec<WirePiece>> {
    let mut r = Reader { bytes, at: 0 };
    let mut out = Vec::new();
    while r.at < bytes.len() {
        let var = VarKey::new(r.u32()? as usize, r.u32()? as usize);
        let n = r.u32()? as usize;
        let idx = (0..n).map(|_| r.u64()).collect::<Result<Vec<u64>>>()?;
        let len = r.u64()? as usize;
        if len > bytes.len() * 8 {
            return Err(Error::new(Kind::Mpi, "chunk piece mask larger than its message"));
        }
        let words = (0..len.div_ceil(64)).map(|_| r.u64()).collect::<Result<Vec<u64>>>()?;
        let strings = r.take(1)?[0] == 1;
        let plen = r.u64()? as usize;
        let payload = r.take(plen)?.to_vec();
        out.push(WirePiece { var, idx, mask: Mask { words, len }, strings, payload });
    }
    Ok(out)
}

impl WirePiece {
    /// Lays this piece's elements over `buf`.
    fn apply(&self, layout: &Layout, buf: &mut ChunkBuf) -> Result<()> {
        if self.mask.len != layout.nelems {
            return Err(Error::new(Kind::Mpi, "chunk piece of another chunk shape (ranks disagree on the variable)"));
        }
        let mut r = Reader { bytes: &self.payload, at: 0 };
        match (buf, self.strings) {
            (ChunkBuf::Fixed(b), false) => {
                let item = layout.item;
                for i in self.mask.iter() {
                    b[i * item..(i + 1) * item].copy_from_slice(r.take(item)?);
                }
            }
            (ChunkBuf::Strings(s), true) => {
                for i in self.mask.iter() {
                    let n = r.u32()?;
                    s[i] = if n == u32::MAX {
                        None
                    } else {
                        Some(
                            String::from_utf8(r.take(n as usize)?.to_vec())
                                .map_err(|_| Error::new(Kind::Mpi, "chunk piece string not UTF-8"))?,
                        )
                    };
                }
            }
            _ => return Err(Error::new(Kind::Mpi, "chunk piece of another type (ranks disagree on the variable)")),
        }
        Ok(())
    }
}

/// The owner's half of two-phase I/O for one variable: reads the chunks that pieces arrived
/// for a batch at a time, lays the pieces over each in the order given (rank order), and
/// stores each chunk once.
pub(crate) fn merge(store: &dyn Zmap, layout: &Layout, chunks: Vec<(Vec<u64>, Vec<WirePiece>)>) -> Result<()> {
    if chunks.is_empty() {
        return Ok(());
    }
    let keys: Vec<Key> = chunks.iter().map(|(idx, _)| layout.chunk_key(idx)).collect::<Result<_>>()?;
    for (batch, batch_keys) in chunks.chunks(store.caps().batch_size.max(1)).zip(keys.chunks(store.caps().batch_size.max(1))) {
        let fetched = store.get_many_limited(batch_keys, layout.stored_limit())?;
        let done: Vec<Result<(Vec<u64>, ChunkBuf)>> = crate::parallel::run(|| {
            batch
                .par_iter()
                .zip(fetched)
                .map(|((idx, pieces), stored)| {
                    let mut buf = layout.decode(stored)?;
                    for p in pieces {
                        p.apply(layout, &mut buf)?;
                    }
                    Ok((idx.clone(), buf))
                })
                .collect()
        });
        let merged = done.into_iter().collect::<Result<Vec<_>>>()?;
        let dirty: Vec<DirtyChunk<'_>> = merged.iter().map(|(idx, buf)| (idx, buf, None)).collect();
        write_chunks(store, layout, &dirty)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_wire_form_round_trip() {
        let mut m = Mask::new(70);
        assert!(!m.full());
        (0..70).for_each(|i| m.set(i));
        assert!(m.full());
        let mut m = Mask::new(5);
        m.set(1);
        m.set(3);
        let p = Piece { var: VarKey::new(1, 2), idx: vec![3, 4], mask: m.clone(), buf: ChunkBuf::Fixed((0..20).collect()) };
        let mut wire = Vec::new();
        p.encode(4, &mut wire);
        let s =
            Piece { var: VarKey::new(0, 0), idx: vec![], mask: m, buf: ChunkBuf::Strings(vec![None, Some("é".into()), None, None, None]) };
        s.encode(8, &mut wire);
        let got = decode_pieces(&wire).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].var, got[0].idx.clone(), got[0].payload.clone()),
            (VarKey::new(1, 2), vec![3, 4], vec![4, 5, 6, 7, 12, 13, 14, 15])
        );
        assert!(got[1].strings);
        assert!(decode_pieces(&wire[..wire.len() - 1]).is_err());
    }
}
