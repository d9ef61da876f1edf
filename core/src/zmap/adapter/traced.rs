//! A store wrapper that logs every storage operation (NCTRACING ≥ 2). Installed only when
//! tracing is on, so untraced programs pay nothing.

use crate::error::Result;
use crate::trace;
use crate::zmap::{ByteRange, Caps, Key, Limit, Ranges, Zmap};

pub(crate) struct Traced(pub Box<dyn Zmap>);

fn outcome<T>(r: &Result<T>, ok: impl FnOnce(&T) -> String) -> String {
    match r {
        Ok(v) => ok(v),
        Err(e) => format!("error {e}"),
    }
}

// A decorator must forward every method: a default one would silently replace the driver's
// own (a missing `put_many` made S3 flushes sequential under NCTRACING=2).
#[deny(clippy::missing_trait_methods)]
impl Zmap for Traced {
    fn caps(&self) -> Caps {
        self.0.caps()
    }

    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        let r = self.0.get(key);
        trace::emit(
            2,
            &format!("storage: get {key} -> {}", outcome(&r, |v| v.as_ref().map_or("absent".into(), |b| format!("{} bytes", b.len())))),
        );
        r
    }

    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        let r = self.0.get_many(keys);
        trace::emit(2, &format!("storage: get_many {keys:?} -> {}", outcome(&r, |v| format!("{} present", v.iter().flatten().count()))));
        r
    }

    fn get_many_limited(&self, keys: &[Key], limit: Limit) -> Result<Vec<Option<Vec<u8>>>> {
        let r = self.0.get_many_limited(keys, limit);
        trace::emit(2, &format!("storage: get_many {keys:?} -> {}", outcome(&r, |v| format!("{} present", v.iter().flatten().count()))));
        r
    }

    fn read_scatter(&self, key: &Key, parts: &mut [&mut [u8]]) -> Result<bool> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let r = self.0.read_scatter(key, parts);
        trace::emit(
            2,
            &format!(
                "storage: read {key} ({total} bytes in {} parts) -> {}",
                parts.len(),
                outcome(&r, |f| if *f { "ok".into() } else { "absent".into() })
            ),
        );
        r
    }

    fn read_into(&self, key: &Key, out: &mut [u8]) -> Result<bool> {
        let r = self.0.read_into(key, out);
        trace::emit(
            2,
            &format!("storage: read {key} ({} bytes) -> {}", out.len(), outcome(&r, |f| if *f { "ok".into() } else { "absent".into() })),
        );
        r
    }

    fn read_many_into(&self, keys: &[Key], outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        let bytes: usize = outs.iter().map(|o| o.len()).sum();
        let r = self.0.read_many_into(keys, outs);
        let found = |f: &Vec<bool>| format!("{} present", f.iter().filter(|p| **p).count());
        trace::emit(2, &format!("storage: read {} objects ({bytes} bytes) -> {}", keys.len(), outcome(&r, found)));
        r
    }

    fn get_ranges(&self, key: &Key, ranges: &[ByteRange], size: Option<u64>) -> Result<Option<Ranges>> {
        let r = self.0.get_ranges(key, ranges, size);
        let found = outcome(&r, |v| if v.is_some() { "ok".into() } else { "absent".into() });
        let line = match ranges {
            [ByteRange::Suffix(n)] => format!("storage: get suffix {key} last {n} -> {found}"),
            _ => {
                let list: Vec<String> = ranges
                    .iter()
                    .map(|r| match r {
                        ByteRange::At { offset, len } => format!("{offset}+{len}"),
                        ByteRange::Suffix(n) => format!("-{n}"),
                    })
                    .collect();
                format!("storage: get ranges {key} [{}] -> {found}", list.join(" "))
            }
        };
        trace::emit(2, &line);
        r
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        let r = self.0.put(key, value);
        trace::emit(2, &format!("storage: put {key} ({} bytes) -> {}", value.len(), outcome(&r, |_| "ok".into())));
        r
    }

    fn put_parts(&self, key: &Key, parts: &[&[u8]]) -> Result<()> {
        let r = self.0.put_parts(key, parts);
        let total: usize = parts.iter().map(|p| p.len()).sum();
        trace::emit(2, &format!("storage: put {key} ({total} bytes in {} parts) -> {}", parts.len(), outcome(&r, |_| "ok".into())));
        r
    }

    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        let (n, bytes) = (items.len(), items.iter().map(|(_, v)| v.len()).sum::<usize>());
        let r = self.0.put_many(items);
        trace::emit(2, &format!("storage: put {n} objects ({bytes} bytes) -> {}", outcome(&r, |_| "ok".into())));
        r
    }

    fn put_chunks(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        let (n, bytes) = (items.len(), items.iter().map(|(_, v)| v.len()).sum::<usize>());
        let r = self.0.put_chunks(items);
        trace::emit(2, &format!("storage: put {n} chunks ({bytes} bytes) -> {}", outcome(&r, |_| "ok".into())));
        r
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        let r = self.0.list_dir(prefix);
        trace::emit(2, &format!("storage: list {prefix:?} -> {}", outcome(&r, |v| format!("{} entries", v.len()))));
        r
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        let r = self.0.delete_prefix(prefix);
        trace::emit(2, &format!("storage: delete {prefix:?} -> {}", outcome(&r, |_| "ok".into())));
        r
    }

    fn copy_prefix(&self, from: &Key, to: &Key) -> Result<()> {
        let r = self.0.copy_prefix(from, to);
        trace::emit(2, &format!("storage: copy {from:?} -> {to:?}: {}", outcome(&r, |_| "ok".into())));
        r
    }

    fn rename_prefix(&self, from: &Key, to: &Key) -> Result<()> {
        let r = self.0.rename_prefix(from, to);
        trace::emit(2, &format!("storage: rename {from:?} -> {to:?}: {}", outcome(&r, |_| "ok".into())));
        r
    }

    fn flush(&self) -> Result<()> {
        let r = self.0.flush();
        trace::emit(2, &format!("storage: flush {} -> {}", self.0.describe(), outcome(&r, |_| "ok".into())));
        r
    }

    fn locate(&self, key: &Key) -> Result<Option<crate::zmap::Located>> {
        self.0.locate(key)
    }

    fn put_located(&self, key: &Key, at: &crate::zmap::Located) -> Result<bool> {
        let r = self.0.put_located(key, at);
        trace::emit(
            2,
            &format!(
                "storage: put {key} as {at:?} -> {}",
                outcome(&r, |stored| if *stored { "referenced".into() } else { "not here".into() })
            ),
        );
        r
    }

    fn describe(&self) -> String {
        self.0.describe()
    }
}

#[cfg(test)]
mod tests {
    /// Forwarding changes no answer: the shared suite through the wrapper.
    #[test]
    fn conformance() {
        crate::zmap::conformance::run(&super::Traced(Box::new(crate::zmap::memory::MemoryStore::new())));
    }
}
