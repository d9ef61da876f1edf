//! The file a temp archive is written to, which goes quiet after its first error.

use std::fs::File;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The temporary archive's file. After its first I/O error (a full disk, a size limit) it
/// stands in for a file without touching the disk: the error has already reached `flush`,
/// which deletes the file, and the zip writer's destructor then finishes quietly instead of
/// printing to stderr. Positions are tracked so the writer's offset arithmetic stays sane.
pub(super) struct QuietAfterError {
    pub(super) file: File,
    pub(super) failed: bool,
    /// The position, shared with the spill that reads entries' data offsets from it.
    pub(super) pos: Arc<AtomicU64>,
    pub(super) end: u64,
}

impl QuietAfterError {
    pub(super) fn new(file: File) -> QuietAfterError {
        QuietAfterError { file, failed: false, pos: Arc::new(AtomicU64::new(0)), end: 0 }
    }

    fn at(&self) -> u64 {
        self.pos.load(Ordering::Relaxed)
    }

    fn set(&mut self, at: u64) {
        self.pos.store(at, Ordering::Relaxed);
        self.end = self.end.max(at);
    }

    fn advance(&mut self, n: usize) -> usize {
        self.set(self.at() + n as u64);
        n
    }
}

impl Write for QuietAfterError {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.failed {
            return Ok(self.advance(buf.len()));
        }
        match self.file.write(buf) {
            Ok(n) => Ok(self.advance(n)),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if self.failed { Ok(()) } else { self.file.flush() }
    }
}

impl std::io::Seek for QuietAfterError {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        use std::io::SeekFrom;
        if !self.failed {
            let at = self.file.seek(to)?;
            self.set(at);
            return Ok(at);
        }
        let at = match to {
            SeekFrom::Start(n) => n,
            SeekFrom::Current(d) => self.at().saturating_add_signed(d),
            SeekFrom::End(d) => self.end.saturating_add_signed(d),
        };
        self.set(at);
        Ok(at)
    }
}
