//! Identical texts searched once: chunks whose indexed text is the same
//! (a file copied into another folder, a second checkout of a tree, a
//! licence header in every file) form a group, and only one entry of each
//! group holds its words where search looks for them.
//!
//! Every chunk keeps an entry of its own (its rowid, its group, its role).
//! The group's *searched* entry holds the words in the searched field;
//! the others, *copies*, hold them in a field that is never searched but
//! counts in BM25's statistics, so a chunk's score is what it would be
//! with an entry per chunk. Search prunes over the searched entries only,
//! so a query's cost follows the distinct texts, not the copies; a
//! searched entry that has copies is marked *shared*, and its hit is
//! handed on to the group's entries (all score the same, so only the `k`
//! lowest rowids among them can be kept), so the hits and their order are
//! the ones an entry per chunk gives.
//!
//! A write keeps one searched entry per group, found by its own indexed
//! field (a chunk added to a group reads one entry, not the group): when
//! the searched entry's chunk is removed, a copy takes its place; when a
//! group alone gains a copy, its searched entry is rewritten with the
//! mark (the entry replaced counts in the statistics until a merge drops
//! it, as any replaced chunk does). A mark stays when the copies go: such
//! a hit looks its group up for nothing until the next rebuild. A build
//! from nothing counts the groups first and rewrites nothing.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use tantivy::columnar::Column;
use tantivy::fastfield::AliveBitSet;
use tantivy::index::InvertedIndexReader;
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Searcher, TERMINATED, Term};

use crate::lexical_schema::{Fields, GROUP, ROLE, ROWID, Role};

/// The group of an indexed text: the first eight bytes of its BLAKE3
/// hash (two texts of a million chunks share one by chance with a
/// probability near 3·10⁻⁸).
pub(crate) fn group_of(text: &str) -> u64 {
    let hash = blake3::hash(text.as_bytes());
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("eight bytes"))
}

/// One segment's lookups by rowid and by group.
struct SegmentEntries {
    by_rowid: std::sync::Arc<InvertedIndexReader>,
    by_group: std::sync::Arc<InvertedIndexReader>,
    by_searched: std::sync::Arc<InvertedIndexReader>,
    rowids: Column<i64>,
    groups: Column<u64>,
    roles: Column<u64>,
    alive: Option<AliveBitSet>,
}

impl SegmentEntries {
    /// `f` of each live document `term` names, in order, until it says
    /// to stop.
    fn each_doc(
        &self,
        index: &InvertedIndexReader,
        term: &Term,
        mut f: impl FnMut(DocId) -> ControlFlow<()>,
    ) -> tantivy::Result<()> {
        if let Some(mut postings) = index.read_postings(term, IndexRecordOption::Basic)? {
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if self.alive.as_ref().is_none_or(|a| a.is_alive(doc)) && f(doc).is_break() {
                    return Ok(());
                }
                doc = postings.advance();
            }
        }
        Ok(())
    }

    /// The rowid and role of the entry `doc`.
    fn entry(&self, doc: DocId) -> Option<(i64, Role)> {
        let rowid = self.rowids.first(doc)?;
        let role = Role::from_column(self.roles.first(doc).unwrap_or_default());
        Some((rowid, role))
    }

    /// The first live document `term` names.
    fn first_doc(
        &self,
        index: &InvertedIndexReader,
        term: &Term,
    ) -> tantivy::Result<Option<DocId>> {
        let mut first = None;
        self.each_doc(index, term, |doc| {
            first = Some(doc);
            ControlFlow::Break(())
        })?;
        Ok(first)
    }
}

/// The live entries of one view of the index, looked up by rowid or by
/// group.
pub(crate) struct IndexedEntries {
    fields: Fields,
    segments: Vec<SegmentEntries>,
    /// No entry has a higher rowid (new chunks are not looked up).
    max_rowid: i64,
}

impl IndexedEntries {
    /// The entries `searcher` sees.
    pub(crate) fn of(searcher: &Searcher, fields: Fields) -> tantivy::Result<IndexedEntries> {
        let mut segments = Vec::new();
        for reader in searcher.segment_readers() {
            let fast = reader.fast_fields();
            segments.push(SegmentEntries {
                by_rowid: reader.inverted_index(fields.rowid)?,
                by_group: reader.inverted_index(fields.group)?,
                by_searched: reader.inverted_index(fields.searched)?,
                rowids: fast.i64(ROWID)?,
                groups: fast.u64(GROUP)?,
                roles: fast.u64(ROLE)?,
                alive: reader.alive_bitset().cloned(),
            });
        }
        let max_rowid = segments
            .iter()
            .filter(|s| s.rowids.num_docs() > 0)
            .map(|s| s.rowids.max_value())
            .max()
            .unwrap_or(i64::MIN);
        Ok(IndexedEntries {
            fields,
            segments,
            max_rowid,
        })
    }

    /// The group of the chunk `rowid`'s entry, if there is one.
    fn group_of_rowid(&self, rowid: i64) -> tantivy::Result<Option<u64>> {
        if rowid > self.max_rowid {
            return Ok(None);
        }
        let term = Term::from_field_i64(self.fields.rowid, rowid);
        for segment in &self.segments {
            if let Some(doc) = segment.first_doc(&segment.by_rowid, &term)? {
                return Ok(segment.groups.first(doc));
            }
        }
        Ok(None)
    }

    /// The searched entry of `group` (rowid, role), if it has one.
    fn searched_of(&self, group: u64) -> tantivy::Result<Option<(i64, Role)>> {
        let term = Term::from_field_u64(self.fields.searched, group);
        for segment in &self.segments {
            if let Some(doc) = segment.first_doc(&segment.by_searched, &term)?
                && let Some(entry) = segment.entry(doc)
            {
                return Ok(Some(entry));
            }
        }
        Ok(None)
    }

    /// `f` of the rowid and role of each entry of `group`.
    pub(crate) fn each_of_group(
        &self,
        group: u64,
        mut f: impl FnMut(i64, Role),
    ) -> tantivy::Result<()> {
        let term = Term::from_field_u64(self.fields.group, group);
        for segment in &self.segments {
            segment.each_doc(&segment.by_group, &term, |doc| {
                if let Some((rowid, role)) = segment.entry(doc) {
                    f(rowid, role);
                }
                ControlFlow::Continue(())
            })?;
        }
        Ok(())
    }
}

/// Where a write's entries go ([`crate::lexical::LexicalWriter`]).
pub(crate) trait EntrySink {
    /// Remove the entry of the chunk `rowid`, if any (entries added
    /// earlier in the same write included).
    fn remove(&self, rowid: i64);
    /// Add an entry.
    fn put(&self, rowid: i64, group: u64, role: Role, text: &str) -> tantivy::Result<()>;

    /// Write the entry of the chunk `rowid` again, with `role`.
    fn rewrite(&self, rowid: i64, group: u64, role: Role, text: &str) -> tantivy::Result<()> {
        self.remove(rowid);
        self.put(rowid, group, role, text)
    }
}

/// The groups of a build from nothing: each group's entries, counted
/// before any is written, and whether its searched entry is written.
#[derive(Debug, Default)]
pub(crate) struct CountedGroups(HashMap<u64, (u32, bool)>);

impl CountedGroups {
    /// Count a chunk of indexed `text`.
    pub(crate) fn count(&mut self, text: &str) {
        self.0.entry(group_of(text)).or_default().0 += 1;
    }

    /// Add a counted chunk: its group's first is the searched entry.
    pub(crate) fn add(
        &mut self,
        sink: &impl EntrySink,
        rowid: i64,
        text: &str,
    ) -> tantivy::Result<()> {
        let key = group_of(text);
        let (entries, written) = self.0.entry(key).or_insert((1, false));
        let role = match std::mem::replace(written, true) {
            false => Role::searched(*entries as usize),
            true => Role::Copy,
        };
        sink.put(rowid, key, role, text)
    }
}

/// A group as the write leaves it so far.
#[derive(Debug, Default)]
struct Group {
    /// Its searched entry (rowid, role written), if it has one.
    searched: Option<(i64, Role)>,
    /// The copies the index has and the write keeps, once read (a group
    /// without a searched entry: one of them takes that place).
    kept_copies: Option<Vec<i64>>,
}

/// The groups one write touches, kept one searched entry each.
pub(crate) struct GroupedWrite {
    /// The index as the write found it.
    indexed: IndexedEntries,
    /// Chunks whose entries the write removed.
    removed: HashSet<i64>,
    groups: HashMap<u64, Group>,
}

impl GroupedWrite {
    /// A write to an index whose entries are `indexed`.
    pub(crate) fn new(indexed: IndexedEntries) -> GroupedWrite {
        GroupedWrite {
            indexed,
            removed: HashSet::new(),
            groups: HashMap::new(),
        }
    }

    /// The group `group` as the index has it, less the removed entries.
    fn touch(&mut self, group: u64) -> tantivy::Result<&mut Group> {
        if !self.groups.contains_key(&group) {
            let searched = self
                .indexed
                .searched_of(group)?
                .filter(|(rowid, _)| !self.removed.contains(rowid));
            let found = Group {
                searched,
                kept_copies: None,
            };
            self.groups.insert(group, found);
        }
        Ok(self.groups.get_mut(&group).expect("inserted"))
    }

    /// The copies of `group` the index has, less the removed ones.
    fn kept_copies(&self, group: u64) -> tantivy::Result<Vec<i64>> {
        let mut copies = Vec::new();
        self.indexed.each_of_group(group, |rowid, role| {
            if role == Role::Copy && !self.removed.contains(&rowid) {
                copies.push(rowid);
            }
        })?;
        Ok(copies)
    }

    /// Remove the chunk `rowid`'s entry as the index has it.
    pub(crate) fn remove(&mut self, sink: &impl EntrySink, rowid: i64) -> tantivy::Result<()> {
        if !self.removed.insert(rowid) {
            return Ok(());
        }
        sink.remove(rowid);
        let Some(group) = self.indexed.group_of_rowid(rowid)? else {
            return Ok(());
        };
        let known = self.touch(group)?;
        if known.searched.is_some_and(|(r, _)| r == rowid) {
            known.searched = None;
        }
        if let Some(copies) = &mut known.kept_copies {
            copies.retain(|r| *r != rowid);
        }
        Ok(())
    }

    /// Add the chunk `rowid` with its indexed `text`.
    pub(crate) fn add(
        &mut self,
        sink: &impl EntrySink,
        rowid: i64,
        text: &str,
    ) -> tantivy::Result<()> {
        let key = group_of(text);
        let known = self.touch(key)?;
        if known.searched.is_none() && known.kept_copies.is_none() {
            let copies = self.kept_copies(key)?;
            self.touch(key)?.kept_copies = Some(copies);
        }
        let group = self.groups.get_mut(&key).expect("touched");
        match group.searched {
            None => {
                let others = group.kept_copies.as_ref().is_some_and(|c| !c.is_empty());
                let role = Role::searched(1 + usize::from(others));
                sink.put(rowid, key, role, text)?;
                group.searched = Some((rowid, role));
            }
            Some((searched, role)) => {
                sink.put(rowid, key, Role::Copy, text)?;
                if role != Role::Shared {
                    sink.rewrite(searched, key, Role::Shared, text)?;
                    group.searched = Some((searched, Role::Shared));
                }
            }
        }
        Ok(())
    }

    /// The entries to write again so that every touched group that lost
    /// its searched entry has one: a copy the index keeps takes the place
    /// (as rowid, group and role; the index has these chunks' texts, for
    /// the write did not change them).
    pub(crate) fn settle(self) -> tantivy::Result<Vec<(i64, u64, Role)>> {
        let mut rewrites = Vec::new();
        for (key, group) in &self.groups {
            if group.searched.is_some() {
                continue;
            }
            let copies = match &group.kept_copies {
                Some(copies) => copies.clone(),
                None => self.kept_copies(*key)?,
            };
            if let Some(&first) = copies.first() {
                rewrites.push((first, *key, Role::searched(copies.len())));
            }
        }
        Ok(rewrites)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::tests::{doc, lexical_hits, open_with_root, terms};
    use crate::{ChunkFilter, Store};

    const TEXTS: [&str; 6] = [
        "otter river moss",
        "otter otter heron",
        "river heron pike stone",
        "moss moss moss reed",
        "kingfisher otter reed river",
        "stone",
    ];

    /// The best `k` as (path, score) through the lexical index, which
    /// must answer.
    fn ranked(
        store: &Store,
        query: &[String],
        k: usize,
        filter: &ChunkFilter,
    ) -> Vec<(String, f64)> {
        assert!(store.with_lexical_index(|_| Ok(())).unwrap().is_some());
        lexical_hits(store, query, k, filter)
            .unwrap()
            .into_iter()
            .map(|(row, score)| (row.workspace_path, score))
            .collect()
    }

    #[test]
    fn chunks_of_one_text_are_each_found_and_scored_as_their_own_entry() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open_with_root(&dir.path().join("k.sqlite"));
        // A group of 300 no query matches: a filter on the notes n/1*
        // admits fewer than a twentieth of the chunks (applied by
        // intersection, each admitted chunk scored by its own entry).
        for i in 0..300 {
            store
                .replace_document(&doc(&format!("m/{i}.md"), "unrelated words only"))
                .unwrap();
        }
        let mut seed = 11u64;
        let mut pick = |n: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % n
        };
        let queries = [
            terms(&["otter"]),
            terms(&["river", "heron"]),
            terms(&["moss", "stone", "kingfisher"]),
        ];
        let notes = ChunkFilter {
            path_glob: Some("n/1*".into()),
            ..Default::default()
        };
        let mut texts: BTreeMap<String, &str> = BTreeMap::new();
        for round in 0..15 {
            // Notes written, rewritten and removed: searched entries and
            // copies come and go, within a write and across writes.
            for _ in 0..12 {
                let path = format!("n/{}.md", pick(20));
                if pick(4) == 0 && texts.remove(&path).is_some() {
                    store.remove_documents(1, &[path]).unwrap();
                } else {
                    let text = TEXTS[pick(TEXTS.len())];
                    store.replace_document(&doc(&path, text)).unwrap();
                    texts.insert(path, text);
                }
            }
            // Every third round's changes are held beside the index.
            if round % 3 != 2 {
                store.sync_lexical().unwrap();
            }
            for query in &queries {
                for filter in [ChunkFilter::default(), notes.clone()] {
                    let hits = ranked(&store, query, 300, &filter);
                    let mut found: Vec<&str> = hits.iter().map(|(p, _)| p.as_str()).collect();
                    found.sort_unstable();
                    let glob = filter
                        .path_glob
                        .as_deref()
                        .unwrap_or("n/*")
                        .trim_end_matches('*');
                    let expected: Vec<&str> = texts
                        .iter()
                        .filter(|(path, text)| {
                            path.starts_with(glob)
                                && query.iter().any(|w| text.split(' ').any(|t| t == w))
                        })
                        .map(|(path, _)| path.as_str())
                        .collect();
                    assert_eq!(found, expected, "round {round}, {query:?}, {filter:?}");
                    assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1), "{hits:?}");
                    // One text, one score.
                    let mut by_text: BTreeMap<&str, f64> = BTreeMap::new();
                    for (path, score) in &hits {
                        let first = *by_text.entry(texts[path]).or_insert(*score);
                        assert!((first - score).abs() < 1e-9, "{path}: {first} {score}");
                    }
                    // The best few are the best of all.
                    let top = ranked(&store, query, 3, &filter);
                    let scores = |h: &[(String, f64)]| h.iter().map(|x| x.1).collect::<Vec<_>>();
                    assert_eq!(scores(&top), scores(&hits[..top.len()]));
                }
            }
        }
        // Built afresh, the index scores each chunk by BM25 over every
        // chunk (FTS5's idf, k1 1.2, b 0.75; lengths this short are exact):
        // copies count in the statistics as chunks of their own.
        store.sync_lexical().unwrap();
        std::fs::remove_dir_all(dir.path().join("lexical")).unwrap();
        assert!(store.sync_lexical().unwrap().rebuilt.is_some());
        let mut all: Vec<&str> = texts.values().copied().collect();
        all.extend(["unrelated words only"; 300]);
        let length = |text: &str| text.split(' ').count() as f64;
        let chunks = all.len() as f64;
        let average = all.iter().map(|t| length(t)).sum::<f64>() / chunks;
        let bm25 = |text: &str, query: &[String]| -> f64 {
            query
                .iter()
                .map(|word| {
                    let tf = text.split(' ').filter(|t| t == word).count() as f64;
                    let with = all
                        .iter()
                        .filter(|t| t.split(' ').any(|x| x == word))
                        .count();
                    let idf = ((chunks - with as f64 + 0.5) / (with as f64 + 0.5)).ln();
                    let norm = 1.2 * (0.25 + 0.75 * length(text) / average);
                    idf * tf * 2.2 / (tf + norm)
                })
                .sum()
        };
        for query in &queries {
            for filter in [ChunkFilter::default(), notes.clone()] {
                for (path, score) in ranked(&store, query, 300, &filter) {
                    let expected = bm25(texts[&path], query);
                    assert!(
                        (expected - score).abs() <= 1e-4 * expected,
                        "{path}: {expected} {score}"
                    );
                }
            }
        }
    }
}
