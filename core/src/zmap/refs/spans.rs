//! Several keys of a reference store read at once: references into one target that lie close
//! together (gaps of at most `MOST_GAP`) are read as one span of at most `MOST_SPAN` bytes, one
//! request instead of one per small chunk, then cut; the spans and the other keys are read eight at
//! a time when the targets are remote.

use super::{Ref, RefStore};
use crate::error::{Error, Kind, Result};
use crate::zmap::Key;

/// The largest gap between two references read as one span (its bytes are read and dropped).
const MOST_GAP: u64 = 64 << 10;
/// The largest span: small chunks are gathered, big ones (a few MiB) stay apart, where reading
/// them in parallel beats one long read (bench/lazy.py: 16 MiB spans made a whole read of
/// 2.5 MB chunks 1.5x slower at low latency).
const MOST_SPAN: u64 = 4 << 20;

/// One range of one target covering the references of several keys (by their index).
struct Span {
    target: usize,
    start: u64,
    end: u64,
    members: Vec<usize>,
}

/// A key's byte range: target, offset, length, and the length it is padded to (`Ref::Short`).
fn range_of(r: &Ref) -> Option<(usize, u64, u64, Option<u64>)> {
    match r {
        Ref::Range { target, offset, len } => Some((*target, *offset, *len, None)),
        Ref::Short { target, offset, len, full } => Some((*target, *offset, *len, Some(*full))),
        Ref::Inline(_) | Ref::Whole { .. } => None,
    }
}

/// The spans the byte-range references among `refs` make.
fn plan(refs: &[Option<&Ref>]) -> Vec<Span> {
    let mut ranged: Vec<(usize, u64, u64, usize)> =
        refs.iter().enumerate().filter_map(|(i, r)| r.and_then(range_of).map(|(t, o, l, _)| (t, o, o.saturating_add(l), i))).collect();
    ranged.sort_unstable();
    let mut spans: Vec<Span> = Vec::new();
    for (target, start, end, i) in ranged {
        match spans.last_mut() {
            Some(s) if s.target == target && start <= s.end.saturating_add(MOST_GAP) && end.max(s.end) - s.start <= MOST_SPAN => {
                s.end = s.end.max(end);
                s.members.push(i);
            }
            _ => spans.push(Span { target, start, end, members: vec![i] }),
        }
    }
    spans
}

/// What one job of a batch read gives: (key index, its bytes) for every key it covers.
type Got = Vec<(usize, Option<Vec<u8>>)>;

impl RefStore {
    /// `get_many`: close ranges as spans, the rest key by key.
    pub(super) fn get_spans(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        let refs: Vec<Option<&Ref>> = keys.iter().map(|k| self.refs.get(k.as_str())).collect();
        let spans = plan(&refs);
        let mut jobs: Vec<Job<'_>> = spans.iter().filter(|s| s.members.len() > 1).map(Job::Span).collect();
        let in_spans: std::collections::HashSet<usize> = jobs.iter().flat_map(|j| j.members()).collect();
        jobs.extend((0..keys.len()).filter(|i| !in_spans.contains(i)).map(Job::Key));
        let run = |job: &Job<'_>| -> Result<Got> {
            match job {
                Job::Key(i) => Ok(vec![(*i, crate::zmap::Zmap::get(self, &keys[*i])?)]),
                Job::Span(span) => self.cut(span, &refs),
            }
        };
        let results: Vec<Result<Got>> = if self.remote && jobs.len() > 1 {
            std::thread::scope(|scope| {
                let handles: Vec<_> =
                    jobs.chunks(jobs.len().div_ceil(8)).map(|part| scope.spawn(move || part.iter().map(run).collect::<Vec<_>>())).collect();
                let mut all = Vec::with_capacity(jobs.len());
                for h in handles {
                    all.extend(h.join().unwrap_or_else(|_| vec![Err(Error::new(Kind::Internal, "a reference read stopped"))]));
                }
                all
            })
        } else {
            jobs.iter().map(run).collect()
        };
        let mut out: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
        for got in results {
            for (i, bytes) in got? {
                out[i] = bytes;
            }
        }
        Ok(out)
    }

    /// One span read, cut into its keys' bytes.
    fn cut(&self, span: &Span, refs: &[Option<&Ref>]) -> Result<Got> {
        let bytes = self.read_target(span.target, Some((span.start, span.end - span.start)))?;
        let mut got = Vec::with_capacity(span.members.len());
        for &i in &span.members {
            let Some((_, offset, len, full)) = refs[i].and_then(range_of) else { continue };
            let at = usize::try_from(offset - span.start).map_err(|_| Error::new(Kind::NoMem, "span offset"))?;
            let n = usize::try_from(len).map_err(|_| Error::new(Kind::NoMem, "span length"))?;
            let mut part = bytes.get(at..at + n).ok_or_else(|| Error::new(Kind::NcZarr, "a span read short"))?.to_vec();
            if let Some(full) = full {
                part.resize(usize::try_from(full).unwrap_or(usize::MAX).max(part.len()), 0);
            }
            got.push((i, Some(part)));
        }
        Ok(got)
    }
}

/// One read of a batch: a span of several keys, or one key.
enum Job<'s> {
    Span(&'s Span),
    Key(usize),
}

impl Job<'_> {
    fn members(&self) -> Vec<usize> {
        match self {
            Job::Span(s) => s.members.clone(),
            Job::Key(i) => vec![*i],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_ranges_of_one_target_make_one_span() {
        let r = |target, offset, len| Ref::Range { target, offset, len };
        let refs = [r(0, 100, 50), r(0, 0, 100), r(1, 0, 10), r(0, 170 + MOST_GAP + 1, 5), r(0, 160, 10)];
        let refs: Vec<Option<&Ref>> = refs.iter().map(Some).chain([None]).collect();
        let spans = plan(&refs);
        let got: Vec<(usize, u64, u64, Vec<usize>)> = spans.iter().map(|s| (s.target, s.start, s.end, s.members.clone())).collect();
        assert_eq!(got, vec![(0, 0, 170, vec![1, 0, 4]), (0, 170 + MOST_GAP + 1, 170 + MOST_GAP + 6, vec![3]), (1, 0, 10, vec![2])]);
    }

    #[test]
    fn spans_stop_at_their_largest_size() {
        let refs: Vec<Ref> = (0..5).map(|i| Ref::Range { target: 0, offset: i * (3 << 19), len: 3 << 19 }).collect();
        let refs: Vec<Option<&Ref>> = refs.iter().map(Some).collect();
        let sizes: Vec<usize> = plan(&refs).iter().map(|s| s.members.len()).collect();
        assert_eq!(sizes, vec![2, 2, 1]);
    }
}
