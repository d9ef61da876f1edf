//! Directory-tree store: one file per object, one directory per key prefix.
//!
//! Every object is replaced atomically (temp file in the same directory, then rename), so a
//! reader or a crash never sees half an object. Symlinks inside the store are refused
//! (`NC_EACCESS`): a store must never make us read or write outside its root. The root itself
//! may be reached through a symlink: that is the user's choice.

use super::{ByteRange, Caps, Key, Ranges, Zmap};
use crate::error::{Error, Kind, Result, err};
use std::fs;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Temp files carry this marker; listings skip them and they are never valid Zarr keys.
const TMP_MARK: &str = ".nczarr-tmp-";

fn temp_name(name: &str) -> String {
    format!("{name}{TMP_MARK}{}-{}", std::process::id(), TMP_COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Writes `parts` (in order) into an unnamed file (`O_TMPFILE`) and links it in as `path`: a new object
/// costs one directory operation where temp-file-and-rename costs two, and is still never seen
/// half written. The directory lock is what many writers contend on (perf: `rename` spinning
/// on the directory's rwsem with 8 writers). `false`: no `O_TMPFILE` here (or no /proc), the
/// caller writes through a named temp file. Used where `openat2` is missing.
fn put_linked(dir: &Path, path: &Path, parts: &[&[u8]]) -> Result<bool> {
    use std::os::fd::AsFd;
    let Ok(dir_fd) = fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC).open(dir) else {
        return Ok(false);
    };
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| Error::new(Kind::BadName, "object name is not UTF-8"))?;
    put_at(dir_fd.as_fd(), dir, name, parts)
}

fn c_string(s: &str) -> Result<std::ffi::CString> {
    std::ffi::CString::new(s).map_err(|_| Error::new(Kind::BadName, "key contains NUL"))
}

/// `put_linked` in the folder `dir_fd` (opened beneath the root, so nothing between the root
/// and the object is resolved again): an unnamed file in the folder, filled, then linked in as
/// `name`; an existing object is replaced by linking under a temp name and renaming that over
/// it. `dir` names the folder in messages. `false`: no `O_TMPFILE` here or no /proc.
fn put_at(dir_fd: std::os::fd::BorrowedFd<'_>, dir: &Path, name: &str, parts: &[&[u8]]) -> Result<bool> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let fd_of = dir_fd.as_raw_fd();
    // SAFETY: a live directory descriptor and a NUL-terminated path.
    let fd = unsafe { libc::openat(fd_of, c".".as_ptr(), libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC, 0o666) };
    if fd < 0 {
        return Ok(false);
    }
    // SAFETY: a fresh descriptor we own.
    let mut f = unsafe { fs::File::from_raw_fd(fd) };
    super::write_vectored_all(&mut f, parts)?;
    let proc = c_string(&format!("/proc/self/fd/{}", f.as_raw_fd()))?;
    let link = |to: &std::ffi::CStr| -> std::io::Result<()> {
        // SAFETY: NUL-terminated paths and a live directory descriptor; the linked fd stays
        // open until `f` drops.
        let rc = unsafe { libc::linkat(libc::AT_FDCWD, proc.as_ptr(), fd_of, to.as_ptr(), libc::AT_SYMLINK_FOLLOW) };
        if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
    };
    let c_name = c_string(name)?;
    match link(&c_name) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            // Replacing a symlink would be harmless, but a store holding one is refused
            // everywhere else too.
            // SAFETY: `stat` is plain old data, for which all-zero bytes are a valid value.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: a live directory descriptor, a NUL-terminated name, a stat buffer we own.
            let rc = unsafe { libc::fstatat(fd_of, c_name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
            if rc == 0 && st.st_mode & libc::S_IFMT == libc::S_IFLNK {
                return err(Kind::Access, format!("symlink inside store: {}", dir.join(name).display()));
            }
            let tmp = c_string(&temp_name(name))?;
            link(&tmp)?;
            // SAFETY: a live directory descriptor and two NUL-terminated names in it.
            if unsafe { libc::renameat(fd_of, tmp.as_ptr(), fd_of, c_name.as_ptr()) } != 0 {
                let e = std::io::Error::last_os_error();
                // SAFETY: as above.
                unsafe { libc::unlinkat(fd_of, tmp.as_ptr(), 0) };
                return Err(e.into());
            }
            Ok(true)
        }
        // /proc missing or linking refused: the named temp file path still works.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::EPERM) | Some(libc::EXDEV) | Some(libc::EOPNOTSUPP)) => {
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

pub(crate) struct FileStore {
    root: PathBuf,
    /// The root directory opened once: reads resolve keys beneath it with one `openat2`
    /// that refuses symlinks, instead of an `lstat` per path segment.
    root_dir: Option<fs::File>,
}

fn open_root_dir(root: &Path) -> Option<fs::File> {
    fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(root).ok()
}

/// `struct open_how` of linux/openat2.h (libc's is non-exhaustive).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// Kernels before 5.6 lack openat2: remembered so the fallback is taken without a retry.
static OPENAT2_MISSING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `openat2(dirfd, rel, {flags, mode, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS})`: the descriptor,
/// or -1 with errno set.
fn openat2_beneath(dirfd: i32, rel: &std::ffi::CStr, flags: i32, mode: u64) -> i64 {
    let how = OpenHow { flags: flags as u64, mode, resolve: libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_BENEATH };
    // SAFETY: openat2(int dirfd, const char *path, struct open_how *how, size_t size) with a
    // live directory fd, a NUL-terminated path and a correctly sized open_how.
    unsafe { libc::syscall(libc::SYS_openat2, dirfd, rel.as_ptr(), &how as *const OpenHow, std::mem::size_of::<OpenHow>()) }
}

/// Objects of one folder a `put_many` task stores in one go (the folder opened once).
const PUT_TASK_OBJECTS: usize = 16;

impl FileStore {
    /// Opens an existing directory store.
    pub(crate) fn open(root: &Path) -> Result<FileStore> {
        match fs::metadata(root) {
            Ok(m) if m.is_dir() => Ok(FileStore { root: root.to_path_buf(), root_dir: open_root_dir(root) }),
            Ok(_) => err(Kind::NotNetcdf, format!("{} is not a directory", root.display())),
            Err(e) if e.kind() == ErrorKind::NotFound => err(Kind::NoObject, format!("{} does not exist", root.display())),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates (or, with `clobber`, empties and re-creates) a directory store.
    pub(crate) fn create(root: &Path) -> Result<FileStore> {
        if fs::symlink_metadata(root).is_ok() {
            remove_tree(root)?;
        }
        fs::create_dir_all(root)?;
        Ok(FileStore { root: root.to_path_buf(), root_dir: open_root_dir(root) })
    }

    /// Path of a key, refusing any symlink between the root and the object.
    fn path(&self, key: &Key) -> Result<PathBuf> {
        let mut path = self.root.clone();
        for seg in key.split('/').filter(|s| !s.is_empty()) {
            path.push(seg);
            match fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_symlink() => {
                    return err(Kind::Access, format!("symlink inside store: {}", path.display()));
                }
                _ => {}
            }
        }
        Ok(path)
    }
}

impl FileStore {
    /// Opens an object for reading without following symlinks; `None` when absent or a
    /// directory (a key prefix).
    fn open_object(&self, key: &Key) -> Result<Option<fs::File>> {
        if let Some(found) = self.open_beneath(key)? {
            return Ok(found);
        }
        let path = self.path(key)?;
        let file = match fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return err(Kind::Access, format!("symlink: {}", path.display())),
            Err(e) => return Err(e.into()),
        };
        object_or_folder(key, file)
    }
}

/// An opened object: `None` for a folder (a key prefix); a FIFO, socket or device in a
/// store is refused (reading one could block forever or never end).
fn object_or_folder(key: &Key, file: fs::File) -> Result<Option<fs::File>> {
    let kind = file.metadata()?.file_type();
    if kind.is_dir() {
        return Ok(None);
    }
    if !kind.is_file() {
        return err(Kind::Access, format!("{key}: not a regular file"));
    }
    Ok(Some(file))
}

impl FileStore {
    /// An object of at most `limit` bytes, refused from its size before anything is read.
    fn get_limited(&self, key: &Key, limit: super::Limit) -> Result<Option<Vec<u8>>> {
        let Some(mut file) = self.open_object(key)? else { return Ok(None) };
        let len = file.metadata()?.len();
        limit.check(key, len)?;
        // Sized up front: one allocation, no regrowth copies (chunks are megabytes). Read
        // through `take` so std's File::read_to_end does not stat and seek once more, and
        // a file growing under us cannot push the read past the limit.
        let mut buf = super::with_room(len.saturating_add(1))?;
        (&mut file).take(limit.bytes.saturating_add(1)).read_to_end(&mut buf)?;
        limit.check(key, buf.len() as u64)?;
        Ok(Some(buf))
    }

    /// The folder `folder` of the store ("" is the root) as an `O_PATH` descriptor, opened
    /// with `openat2` beneath the root, which also proves no symlink lies on the way: objects
    /// are then made in it without resolving the path again (no stat per key segment). A
    /// missing folder is made, with the folders above it. `None`: take the general way (no
    /// `openat2`, a seccomp filter, or something that the general way reports better).
    fn folder_beneath(&self, folder: &str) -> Result<Option<std::os::fd::OwnedFd>> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let Some(root) = &self.root_dir else { return Ok(None) };
        if OPENAT2_MISSING.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let c_folder = c_string(if folder.is_empty() { "." } else { folder })?;
        let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
        let mut fd = openat2_beneath(root.as_raw_fd(), &c_folder, flags, 0);
        if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) && !folder.is_empty() && self.make_folder(folder)
        {
            fd = openat2_beneath(root.as_raw_fd(), &c_folder, flags, 0);
        }
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOSYS) => {
                    OPENAT2_MISSING.store(true, Ordering::Relaxed);
                    Ok(None)
                }
                Some(libc::ELOOP) | Some(libc::EXDEV) => err(Kind::Access, format!("symlink inside store: {folder}")),
                _ => Ok(None),
            };
        }
        // SAFETY: a fresh descriptor we own.
        Ok(Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) }))
    }

    /// `put_parts` of `key`, made in its folder's descriptor `folder_fd` when there is one
    /// (`folder_beneath`), else (or without `O_TMPFILE` or /proc) the general way.
    fn put_via(&self, folder_fd: Option<&std::os::fd::OwnedFd>, key: &Key, parts: &[&[u8]]) -> Result<()> {
        use std::os::fd::AsFd;
        let (folder, name) = split_key(key);
        if let Some(fd) = folder_fd
            && !matches!(name, "" | "." | "..")
            && put_at(fd.as_fd(), &self.root.join(folder), name, parts)?
        {
            return Ok(());
        }
        self.put_general(key, parts)
    }

    /// Makes the folder `folder` (and, through `folder_beneath` of its parent, the folders above
    /// it) beneath the root, never through a symlink: `mkdirat` in the parent's descriptor.
    /// `false`: not made this way (the general way decides).
    fn make_folder(&self, folder: &str) -> bool {
        use std::os::fd::AsRawFd;
        let (parent, name) = folder.rsplit_once('/').unwrap_or(("", folder));
        let Ok(c_name) = std::ffi::CString::new(name) else { return false };
        let Ok(Some(parent_fd)) = self.folder_beneath(parent) else { return false };
        // SAFETY: a live directory descriptor and a NUL-terminated name.
        let rc = unsafe { libc::mkdirat(parent_fd.as_raw_fd(), c_name.as_ptr(), 0o777) };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST)
    }

    /// One-syscall open of `key` beneath the root, refusing symlinks anywhere on the way.
    /// `Ok(None)`: openat2 is unavailable, use the portable path walk.
    fn open_beneath(&self, key: &Key) -> Result<Option<Option<fs::File>>> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let Some(dir) = &self.root_dir else { return Ok(None) };
        if OPENAT2_MISSING.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let rel = key.trim_start_matches('/');
        let rel = if rel.is_empty() { "." } else { rel };
        let Ok(c_rel) = std::ffi::CString::new(rel) else { return err(Kind::Invalid, "key contains NUL") };
        // O_NONBLOCK: opening a FIFO planted as an object must not wait for a writer.
        let fd = openat2_beneath(dir.as_raw_fd(), &c_rel, libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NONBLOCK, 0);
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOSYS) | Some(libc::EPERM) => {
                    OPENAT2_MISSING.store(true, Ordering::Relaxed);
                    Ok(None)
                }
                Some(libc::ENOENT) | Some(libc::ENOTDIR) => Ok(Some(None)),
                Some(libc::ELOOP) | Some(libc::EXDEV) => err(Kind::Access, format!("symlink inside store: {key}")),
                _ => Err(e.into()),
            };
        }
        // SAFETY: a fresh descriptor we own.
        let file = unsafe { fs::File::from_raw_fd(fd as i32) };
        object_or_folder(key, file).map(Some)
    }
}

impl FileStore {
    /// The portable way to store an object, where `openat2` is missing: each key segment
    /// checked for a symlink with a stat, folders made with `create_dir_all`, then an unnamed
    /// file linked in (or, without `O_TMPFILE`, a named temp file renamed over the object).
    fn put_general(&self, key: &Key, parts: &[&[u8]]) -> Result<()> {
        let path = self.path(key)?;
        let dir = path.parent().ok_or_else(|| Error::new(Kind::Internal, "key without parent"))?;
        // A stat is far cheaper than a failing mkdir on journaling file systems.
        if !dir.is_dir() {
            fs::create_dir_all(dir)?;
        }
        if put_linked(dir, &path, parts)? {
            return Ok(());
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("obj");
        let tmp = dir.join(temp_name(name));
        let result = (|| -> Result<()> {
            let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o666).open(&tmp)?;
            super::write_vectored_all(&mut f, parts)?;
            drop(f);
            fs::rename(&tmp, &path)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// The folder of a key ("" at the root) and the object's name in it.
fn split_key(key: &str) -> (&str, &str) {
    let rel = key.trim_start_matches('/');
    rel.rsplit_once('/').unwrap_or(("", rel))
}

fn remove_tree(path: &Path) -> Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() {
        fs::remove_dir_all(path)?
    } else {
        fs::remove_file(path)?
    }
    Ok(())
}

/// `copy_prefix` of one file or folder: folders made, files hard-linked (copied where a link
/// cannot be made); a symlink inside the store is refused, as everywhere else.
fn link_tree(src: &Path, dst: &Path, meta: &fs::Metadata) -> Result<()> {
    if meta.file_type().is_symlink() {
        return err(Kind::Access, format!("symlink inside store: {}", src.display()));
    }
    if meta.is_dir() {
        fs::create_dir(dst)?;
        for entry in fs::read_dir(src)? {
            let entry = entry?;
            let name = entry.file_name();
            link_tree(&src.join(&name), &dst.join(&name), &fs::symlink_metadata(entry.path())?)?;
        }
        return Ok(());
    }
    if fs::hard_link(src, dst).is_err() {
        fs::copy(src, dst)?;
    }
    Ok(())
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Zmap for FileStore {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        self.get_limited(key, super::Limit::NONE)
    }

    fn get_many_limited(&self, keys: &[Key], limit: super::Limit) -> Result<Vec<Option<Vec<u8>>>> {
        use rayon::prelude::*;
        if keys.len() < 8 {
            return keys.iter().map(|k| self.get_limited(k, limit)).collect();
        }
        crate::parallel::run(|| keys.par_iter().with_min_len(4).map(|k| self.get_limited(k, limit)).collect())
    }

    /// Metadata of a whole group level arrives as one batch: read it on every core (each
    /// object costs open/stat/read/close system calls, which dominate opening a dataset).
    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        use rayon::prelude::*;
        if keys.len() < 8 {
            return keys.iter().map(|k| self.get(k)).collect();
        }
        crate::parallel::run(|| keys.par_iter().with_min_len(4).map(|k| self.get(k)).collect())
    }

    /// Whole chunks straight into the caller's array, on every core.
    fn read_many_into(&self, keys: &[Key], outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        use rayon::prelude::*;
        if keys.len() < 2 {
            return keys.iter().zip(outs).map(|(k, out)| self.read_into(k, out)).collect();
        }
        crate::parallel::run(|| keys.par_iter().zip(outs).map(|(k, out)| self.read_into(k, out)).collect())
    }

    /// Objects are independent files written through unique temp names and renamed.
    fn caps(&self) -> Caps {
        Caps { concurrent_puts: true, ..Caps::default() }
    }

    fn read_into(&self, key: &Key, out: &mut [u8]) -> Result<bool> {
        let Some(mut file) = self.open_object(key)? else { return Ok(false) };
        let len = file.metadata()?.len();
        if len != out.len() as u64 {
            return err(Kind::NcZarr, format!("{key}: {len} bytes, expected {}", out.len()));
        }
        super::read_vectored_exact(key, &mut file, 0, &mut [out])?;
        Ok(true)
    }

    /// One `readv` per object (a 1 MiB chunk into 64 rows of the caller's array is one call).
    fn read_scatter(&self, key: &Key, parts: &mut [&mut [u8]]) -> Result<bool> {
        let Some(mut file) = self.open_object(key)? else { return Ok(false) };
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let len = file.metadata()?.len();
        if len != total as u64 {
            return err(Kind::NcZarr, format!("{key}: {len} bytes, expected {total}"));
        }
        super::read_vectored_exact(key, &mut file, 0, parts)?;
        Ok(true)
    }

    fn get_ranges(&self, key: &Key, ranges: &[ByteRange], size: Option<u64>) -> Result<Option<Ranges>> {
        use std::os::unix::fs::FileExt;
        let Some(file) = self.open_object(key)? else { return Ok(None) };
        let len = file.metadata()?.len();
        super::check_size(key, len, size)?;
        let parts = ranges
            .iter()
            .map(|r| {
                let (off, n) = r.within(key, len)?;
                let mut b = super::zeroed(n as u64)?;
                file.read_exact_at(&mut b, off)?;
                Ok(b)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Ranges { parts, size: len }))
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        self.put_parts(key, &[value])
    }

    /// One `writev` per object: a chunk gathered from 64 rows of the caller's array is one call.
    fn put_parts(&self, key: &Key, parts: &[&[u8]]) -> Result<()> {
        if key.is_empty() {
            return err(Kind::BadName, "empty key");
        }
        self.put_via(self.folder_beneath(split_key(key).0)?.as_ref(), key, parts)
    }

    /// Objects are independent files, written on the worker pool (a thread per core).
    /// Creating a file is kernel CPU work (path lookups, inode and directory updates) plus, on
    /// a journaling disk, waits for the journal; more threads than cores only contend for
    /// directory locks (meta workload, 2000 objects on 2 cores: 2 threads 20 ms on tmpfs and
    /// 105 ms on ext4, 8 threads 24-31 ms and 125-145 ms). The objects of one folder go
    /// together, a few to a task, so a folder is opened (or made) once per task rather than
    /// once per object.
    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        if items.len() < 4 {
            return items.iter().try_for_each(|(k, v)| self.put(k, v));
        }
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by(|&a, &b| split_key(&items[a].0).0.cmp(split_key(&items[b].0).0));
        let mut tasks: Vec<&[usize]> = Vec::new();
        for run in order.chunk_by(|&a, &b| split_key(&items[a].0).0 == split_key(&items[b].0).0) {
            tasks.extend(run.chunks(PUT_TASK_OBJECTS));
        }
        let put_task = |task: &[usize]| -> Result<()> {
            let folder_fd = self.folder_beneath(split_key(&items[task[0]].0).0)?;
            task.iter().try_for_each(|&i| self.put_via(folder_fd.as_ref(), &items[i].0, &[&items[i].1]))
        };
        if tasks.len() < 2 {
            return tasks.iter().try_for_each(|t| put_task(t));
        }
        use rayon::prelude::*;
        crate::parallel::run(|| tasks.par_iter().with_max_len(1).try_for_each(|t| put_task(t)))
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        let path = self.path(prefix)?;
        let entries = match fs::read_dir(&path) {
            Ok(e) => e,
            Err(e) if e.kind() == ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                return err(Kind::BadName, "file name is not UTF-8");
            };
            if name.contains(TMP_MARK) {
                continue;
            }
            out.push(name.to_string());
        }
        out.sort();
        Ok(out)
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        let path = self.path(prefix)?;
        if prefix.is_empty() {
            for child in self.list_dir(&Key::new("")?)? {
                remove_tree(&path.join(child))?;
            }
            return Ok(());
        }
        match remove_tree(&path) {
            Err(e) if matches!(e.kind, Kind::Errno(libc::ENOENT)) => Ok(()),
            other => other,
        }
    }

    /// Hard links, not copies: a renamed variable's chunks cost a directory entry each, and
    /// every later write replaces a file (a new inode, `put_at`), so the old tree never sees
    /// it. Where links cannot be made (another file system, a file system without them) the
    /// bytes are copied.
    fn copy_prefix(&self, from: &Key, to: &Key) -> Result<()> {
        let src = self.path(from)?;
        let dst = self.path(to)?;
        if fs::symlink_metadata(&dst).is_ok() {
            remove_tree(&dst)?;
        }
        match fs::symlink_metadata(&src) {
            Err(_) => Ok(()),
            Ok(meta) => {
                if let Some(parent) = dst.parent() {
                    fs::create_dir_all(parent)?;
                }
                link_tree(&src, &dst, &meta)
            }
        }
    }

    fn rename_prefix(&self, from: &Key, to: &Key) -> Result<()> {
        let src = self.path(from)?;
        let dst = self.path(to)?;
        if fs::symlink_metadata(&src).is_err() {
            return Ok(());
        }
        if let Some(parent) = dst.parent() {
            fs::create_dir_all(parent)?;
        }
        if fs::symlink_metadata(&dst).is_ok() {
            remove_tree(&dst)?;
        }
        fs::rename(&src, &dst)?;
        Ok(())
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zmap::Key;

    #[test]
    fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::create(&dir.path().join("x.file")).unwrap();
        crate::zmap::conformance::run(&store);
    }

    #[test]
    fn refuses_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("secret");
        fs::write(&outside, b"secret").unwrap();
        let store = FileStore::create(&dir.path().join("s.file")).unwrap();
        store.put(&Key::new("v/.zarray").unwrap(), b"{}").unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("s.file/v/0")).unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("s.file/w")).unwrap();
        assert_eq!(store.get(&Key::new("v/0").unwrap()).unwrap_err().kind, Kind::Access);
        assert_eq!(store.get(&Key::new("w/secret").unwrap()).unwrap_err().kind, Kind::Access);
    }
}
