//! A shard of a tree: `kebab ingest DIR --shard I/N` processes the files
//! whose root-relative path hashes to `I` of `N`, so N runs — on one
//! machine or N — share one tree between them, deterministically (the same
//! file always falls to the same shard, whoever runs it and when).

use std::fmt;
use std::str::FromStr;

/// Most shards one tree may be split into.
pub const MAX_SHARDS: u32 = 65_536;

/// Shard `index` of `count` (`index` from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// Why a `--shard` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not a shard: expected I/N with 0 <= I < N <= {MAX_SHARDS} (e.g. 0/4)")]
pub struct BadShard {
    given: String,
}

impl Shard {
    /// Shard `index` of `count`, when `index < count <= MAX_SHARDS`.
    pub fn new(index: u32, count: u32) -> Option<Shard> {
        (count > 0 && count <= MAX_SHARDS && index < count).then_some(Shard { index, count })
    }

    /// Whether the file at root-relative `rel` (`notes/raft.md`) falls to
    /// this shard: the first eight bytes of its path's blake3, modulo the
    /// shard count.
    pub fn owns(&self, rel: &str) -> bool {
        let hash = blake3::hash(rel.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&hash.as_bytes()[..8]);
        u64::from_le_bytes(first) % u64::from(self.count) == u64::from(self.index)
    }

    /// The whole tree (`0/1`)?
    pub fn is_whole(&self) -> bool {
        self.count == 1
    }
}

impl FromStr for Shard {
    type Err = BadShard;

    fn from_str(s: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard {
            given: s.to_string(),
        };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let (i, n) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        Shard::new(i, n).ok_or_else(bad)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_is_not_one() {
        assert_eq!("1/4".parse(), Ok(Shard::new(1, 4).unwrap()));
        assert_eq!(" 0/1 ".parse::<Shard>().unwrap().to_string(), "0/1");
        for bad in ["4/4", "0/0", "-1/4", "1", "a/b", "1/4/2", "0/65537", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert!(
            "3/3"
                .parse::<Shard>()
                .unwrap_err()
                .to_string()
                .contains("I/N")
        );
    }

    #[test]
    fn every_file_falls_to_exactly_one_shard_and_always_the_same() {
        let files: Vec<String> = (0..2000)
            .map(|i| format!("dir{}/file{i}.md", i % 7))
            .collect();
        for n in [1, 2, 3, 8] {
            let shards: Vec<Shard> = (0..n).map(|i| Shard::new(i, n).unwrap()).collect();
            let mut sizes = vec![0usize; n as usize];
            for f in &files {
                let owners: Vec<usize> = (0..n as usize).filter(|&i| shards[i].owns(f)).collect();
                assert_eq!(owners.len(), 1, "{f} in {n} shards: {owners:?}");
                sizes[owners[0]] += 1;
            }
            // Roughly even: no shard under half its share.
            let share = files.len() / n as usize;
            assert!(sizes.iter().all(|&s| s * 2 > share), "{n}: {sizes:?}");
        }
        // Fixed by the path alone: known values, so a change of recipe
        // (which would move files between running shards) shows.
        let owner = |rel: &str| (0..4).find(|&i| Shard::new(i, 4).unwrap().owns(rel));
        let known: Vec<Option<u32>> = ["notes/raft.md", "a", "b/c.pdf", "메모.md"]
            .iter()
            .map(|r| owner(r))
            .collect();
        assert_eq!(known, [Some(1), Some(3), Some(2), Some(3)]);
        assert!(Shard::new(0, 1).unwrap().owns("anything"));
    }
}
