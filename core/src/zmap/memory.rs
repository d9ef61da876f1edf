//! In-memory store, for tests: clones share their objects, so a test keeps one clone to look
//! at (or tamper with) what a dataset stored through another, and reopens it afterwards.

use super::{Key, Zmap};
use crate::error::Result;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default, Clone)]
pub struct MemoryStore {
    objects: Arc<Mutex<BTreeMap<String, Vec<u8>>>>,
    /// Objects read so far (every read the engine makes of this store ends in `get`).
    reads: Arc<AtomicUsize>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// How many objects were read so far, by all clones: what a test counts to see the cache.
    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    /// Every key stored, in order.
    pub fn keys(&self) -> Vec<String> {
        self.objects().keys().cloned().collect()
    }

    fn objects(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.objects.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Zmap for MemoryStore {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(self.objects().get(key.as_str()).cloned())
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        self.objects().insert(key.to_string(), value.to_vec());
        Ok(())
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        let lead = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
        let mut out: Vec<String> = Vec::new();
        for key in self.objects().keys() {
            if let Some(rest) = key.strip_prefix(&lead) {
                let child = rest.split('/').next().unwrap_or("").to_string();
                if !child.is_empty() && out.last() != Some(&child) && !out.contains(&child) {
                    out.push(child);
                }
            }
        }
        Ok(out)
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        let lead = format!("{prefix}/");
        self.objects().retain(|k, _| !(prefix.is_empty() || k == prefix.as_str() || k.starts_with(&lead)));
        Ok(())
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn conformance() {
        crate::zmap::conformance::run(&super::MemoryStore::new());
    }
}
