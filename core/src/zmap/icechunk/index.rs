//! Where an Icechunk session keeps each chunk: an array's chunk index, read whole at its first
//! chunk and kept until this store writes a chunk of it; the chunk keys of Zarr v3.

use crate::zmap::Key;
use futures_util::StreamExt as _;
use icechunk::format::manifest::ChunkPayload;
use icechunk::format::{ChunkIndices, Path};
use icechunk::session::{Session, SessionError, SessionErrorKind};

/// The chunks of an array the session knows where they are, keyed by their indices.
#[derive(Default)]
pub(super) struct ArrayIndex {
    chunks: std::collections::HashMap<Vec<u32>, Option<Found>>,
    /// Every chunk of the array is in `chunks` but those in `unknown` (absent otherwise).
    complete: bool,
    /// Chunks written since the index was read: ask the session again.
    unknown: std::collections::HashSet<Vec<u32>>,
}

/// How many chunks of one array the index keeps at most (about 100 bytes each).
const PREFETCH: usize = 1 << 16;

impl ArrayIndex {
    /// The array's chunk index as the session has it (its snapshot's manifests and this
    /// session's changes); an array the session does not have is complete and empty.
    pub(super) async fn read(session: &Session, path: &Path) -> std::result::Result<ArrayIndex, SessionError> {
        let mut ix = ArrayIndex::default();
        let stream = session.array_chunk_iterator(path).await;
        futures_util::pin_mut!(stream);
        while let Some(info) = stream.next().await {
            let info = match info {
                Ok(info) => info,
                Err(e) if matches!(e.kind, SessionErrorKind::NodeNotFound { .. }) => break,
                Err(e) => return Err(e),
            };
            if ix.chunks.len() == PREFETCH {
                return Ok(ix);
            }
            ix.chunks.insert(info.coord.0, found_of(Ok(Some(info.payload)))?);
        }
        ix.complete = true;
        Ok(ix)
    }

    /// `Some(found)`: known; `None`: ask the session.
    pub(super) fn get(&self, idx: &[u32]) -> Option<Option<Found>> {
        match self.chunks.get(idx) {
            Some(found) => Some(found.clone()),
            None if self.complete && !self.unknown.contains(idx) => Some(Some(Found::Absent)),
            None => None,
        }
    }

    pub(super) fn learn(&mut self, idx: Vec<u32>, found: Option<Found>) {
        self.unknown.remove(&idx);
        if self.chunks.len() < PREFETCH || self.chunks.contains_key(&idx) {
            self.chunks.insert(idx, found);
        }
    }

    pub(super) fn forget(&mut self, idx: Vec<u32>) {
        self.chunks.remove(&idx);
        self.unknown.insert(idx);
    }
}

/// A chunk location from the session's answer: `None` for a chunk read through the session (a
/// virtual chunk whose object is pinned by a checksum, which Icechunk's client verifies, or
/// named relative to a container); an array the session does not have holds no chunks.
pub(super) fn found_of(got: std::result::Result<Option<ChunkPayload>, SessionError>) -> std::result::Result<Option<Found>, SessionError> {
    Ok(match got {
        Ok(None) => Some(Found::Absent),
        Ok(Some(ChunkPayload::Ref(r))) => match Key::new(format!("chunks/{}", r.id)) {
            Ok(key) => Some(Found::Native { key, offset: r.offset, len: r.length }),
            Err(_) => None,
        },
        Ok(Some(ChunkPayload::Inline(b))) => Some(Found::Inline(b.to_vec())),
        Ok(Some(ChunkPayload::Virtual(v))) if v.checksum.is_none() && !v.location.is_relative() => {
            Some(Found::Virtual { url: v.location.url().to_string(), offset: v.offset, len: v.length })
        }
        Ok(Some(_)) => None,
        Err(e) if matches!(e.kind, SessionErrorKind::NodeNotFound { .. }) => Some(Found::Absent),
        Err(e) => return Err(e),
    })
}

/// Where a chunk's bytes are, as the session says.
#[derive(Debug, Clone)]
pub(super) enum Found {
    Absent,
    Inline(Vec<u8>),
    /// `len` bytes at `offset` of the repository's object `key` (`chunks/<id>`).
    Native {
        key: Key,
        offset: u64,
        len: u64,
    },
    /// `len` bytes at `offset` of the object at `url` (a virtual chunk: VirtualiZarr's
    /// references into netCDF/HDF5 files), read through our reference store.
    Virtual {
        url: String,
        offset: u64,
        len: u64,
    },
}

/// The array path and chunk indices of a Zarr v3 chunk key (default encoding, `/`): `c` (the
/// root array's only chunk), `c/1/2`, `a/b/c/1/2`, `a/c`.
pub(super) fn chunk_coords(key: &str) -> Option<(Path, ChunkIndices)> {
    let (array, coords) = if key == "c" {
        ("", "")
    } else if let Some(rest) = key.strip_prefix("c/") {
        ("", rest)
    } else if let Some(array) = key.strip_suffix("/c") {
        (array, "")
    } else {
        key.rsplit_once("/c/")?
    };
    let idx = if coords.is_empty() { Vec::new() } else { coords.split('/').map(|c| c.parse::<u32>().ok()).collect::<Option<Vec<_>>>()? };
    let path = Path::try_from(format!("/{array}")).ok()?;
    Some((path, ChunkIndices(idx)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_keys_name_their_array_and_indices() {
        let at = |k: &str| chunk_coords(k).map(|(p, i)| (p.to_string(), i.0));
        assert_eq!(at("t/c/0/1/2"), Some(("/t".into(), vec![0, 1, 2])));
        assert_eq!(at("g/sub/t/c/7"), Some(("/g/sub/t".into(), vec![7])));
        assert_eq!(at("c/3"), Some(("/".into(), vec![3])));
        assert_eq!(at("c"), Some(("/".into(), vec![])));
        assert_eq!(at("scalar/c"), Some(("/scalar".into(), vec![])));
        // A group named c, metadata and foreign keys are no chunks.
        assert_eq!(at("c/zarr.json"), None);
        assert_eq!(at("t/zarr.json"), None);
        assert_eq!(at("t/c/x"), None);
        assert_eq!(at(".zgroup"), None);
    }

    /// An array's chunk index: known chunks, absent ones once complete, written ones asked again.
    #[test]
    fn array_index_answers_and_forgets() {
        let mut ix = ArrayIndex { complete: true, ..Default::default() };
        ix.learn(vec![0], Some(Found::Inline(vec![1])));
        assert!(matches!(ix.get(&[0]), Some(Some(Found::Inline(_)))));
        assert!(matches!(ix.get(&[1]), Some(Some(Found::Absent))));
        ix.forget(vec![1]);
        assert!(ix.get(&[1]).is_none(), "written since: ask the session");
        ix.learn(vec![1], None);
        assert!(matches!(ix.get(&[1]), Some(None)), "a chunk read through the session");
        let partial = ArrayIndex::default();
        assert!(partial.get(&[5]).is_none());
    }

    /// A virtual chunk is read by reference, unless a checksum pins its object's version (which
    /// Icechunk's client verifies) or it is named relative to a container.
    #[test]
    fn virtual_chunks_by_reference_unless_pinned_or_relative() {
        use icechunk::format::manifest::{Checksum, SecondsSinceEpoch, VirtualChunkLocation, VirtualChunkRef};
        let chunk = |location: VirtualChunkLocation, checksum: Option<Checksum>| {
            found_of(Ok(Some(ChunkPayload::Virtual(VirtualChunkRef { location, offset: 8, length: 16, checksum })))).unwrap()
        };
        let url = VirtualChunkLocation::from_url("s3://bucket/data.nc").unwrap();
        assert!(matches!(chunk(url.clone(), None), Some(Found::Virtual { ref url, offset: 8, len: 16 }) if url == "s3://bucket/data.nc"));
        assert!(chunk(url, Some(Checksum::LastModified(SecondsSinceEpoch(1)))).is_none(), "pinned: through the session");
        let relative = VirtualChunkLocation::from_vcc_path("archive", "data.nc").unwrap();
        assert!(chunk(relative, None).is_none(), "vcc://: through the session");
    }
}
