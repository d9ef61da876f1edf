//! The chunk engine: every get/put call becomes a plan (which chunks, which part of each,
//! where in user memory), missing chunks are fetched in one batch and decoded in parallel,
//! then elements move between chunk buffers and user memory with netcdf-c's conversions.
//!
//! Decoded chunks live in a per-variable LRU cache in native byte order; writes land in the
//! cache and reach storage, encoded in parallel, when evicted or at sync/close. A chunk that
//! was only read is never written back (C7); a chunk a write covers entirely is never read.

mod cache;
mod chunk;
mod convert;
mod flush;
mod mem;
pub mod origins;
mod pieces;
mod plan;
mod read;
mod selection;
mod write;

pub(crate) use cache::Cache;
pub(crate) use chunk::Layout;
pub use convert::check_types;
pub use mem::{Mem, MemType};
pub(crate) use pieces::{Piece, WirePiece, decode_pieces, merge};
pub use selection::{Request, Selection, select};

#[cfg(test)]
mod tests {
    use super::plan::project;
    use super::selection::{Request, select};
    use crate::error::Kind;

    #[test]
    fn projections() {
        let p = project(3, 5, 1, 4);
        assert_eq!(p.iter().map(|x| (x.chunk, x.first_off, x.first_k, x.n)).collect::<Vec<_>>(), vec![(0, 3, 0, 1), (1, 0, 1, 4)]);
        let p = project(1, 4, 3, 4);
        assert_eq!(
            p.iter().map(|x| (x.chunk, x.first_off, x.first_k, x.n)).collect::<Vec<_>>(),
            vec![(0, 1, 0, 1), (1, 0, 1, 2), (2, 2, 3, 1)]
        );
    }

    #[test]
    fn selection_rules() {
        let shape = [4u64, 6];
        let req = |start: Option<&'static [usize]>, count: Option<&'static [usize]>| Request { start, count, stride: None, imap: None };
        assert_eq!(select(&shape, &[false, false], false, &req(None, Some(&[1, 1]))).unwrap_err().kind, Kind::InvalidCoords);
        assert_eq!(select(&shape, &[false, false], false, &req(Some(&[4, 0]), Some(&[1, 1]))).unwrap_err().kind, Kind::InvalidCoords);
        assert!(select(&shape, &[false, false], false, &req(Some(&[4, 0]), Some(&[0, 1]))).is_ok());
        assert_eq!(select(&shape, &[false, false], false, &req(Some(&[1, 0]), None)).unwrap_err().kind, Kind::Edge);
        assert_eq!(select(&shape, &[false, false], false, &req(Some(&[3, 0]), Some(&[2, 1]))).unwrap_err().kind, Kind::Edge);
        assert!(select(&shape, &[true, false], true, &req(Some(&[10, 0]), Some(&[2, 6]))).is_ok());
        let s = select(&shape, &[false, false], false, &req(Some(&[0, 0]), None)).unwrap();
        assert_eq!(s.imap, vec![6, 1]);
        let bad = Request { start: Some(&[0, 0]), count: Some(&[0, 0]), stride: Some(&[1, 0]), imap: None };
        assert_eq!(select(&shape, &[false, false], false, &bad).unwrap_err().kind, Kind::Stride);
    }
}
