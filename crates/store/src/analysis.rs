//! The words of Korean, Japanese and Chinese text kept beside each chunk
//! (`chunks.tokenized_korean_text`, a name from when only Korean was
//! analysed): which chunks still wait for analysis, storing what the
//! analyser found, and which analyser produced what is stored, so that
//! another one (a dictionary installed, a new rule set) analyses every
//! chunk again.
//!
//! `NULL` means "not analysed yet", `''` "analysed, nothing found". The
//! triggers of V003 and V005 rewrite a chunk's full-text row and log it
//! for the lexical index only when its words change, so analysing again
//! costs an `UPDATE` per chunk and a re-index only of chunks whose words
//! differ.

use crate::db::{Optional, params};

use crate::{Store, StoreError};

/// `schema_meta` key of the analyser version the stored words came from.
const ANALYZER_KEY: &str = "cjk_analyzer";

/// A chunk waiting for analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingAnalysis {
    pub chunk_id: String,
    pub text: String,
    /// Its document's language (BCP-47), when known: it decides how Han
    /// characters are read (Japanese or Chinese).
    pub lang: Option<String>,
}

impl Store {
    /// Up to `limit` chunks not yet analysed.
    pub fn chunks_missing_analysis(
        &self,
        limit: usize,
    ) -> Result<Vec<PendingAnalysis>, StoreError> {
        let stmt = self.conn.prepare(
            "SELECT c.chunk_id, c.text, d.lang FROM chunks c
               JOIN documents d ON d.doc_id = c.doc_id
              WHERE c.tokenized_korean_text IS NULL LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |r| {
            Ok(PendingAnalysis {
                chunk_id: r.get(0)?,
                text: r.get(1)?,
                lang: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Store the analysed words (`""`: none) of chunks.
    pub fn set_analysed_words(&mut self, words: &[(String, String)]) -> Result<(), StoreError> {
        let tx = self.write_tx()?;
        {
            let stmt =
                tx.prepare("UPDATE chunks SET tokenized_korean_text = ?2 WHERE chunk_id = ?1")?;
            for (id, w) in words {
                stmt.execute(params![id, w])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The version of the analyser whose words are stored (`None` for an
    /// index from before versions were recorded).
    pub fn analyzer_version(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT value FROM schema_meta WHERE key = ?1",
                params![ANALYZER_KEY],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Make `version` the analyser of record when it is not: every chunk
    /// waits for analysis again. Returns whether anything changed.
    pub fn adopt_analyzer(&mut self, version: &str) -> Result<bool, StoreError> {
        if self.analyzer_version()?.as_deref() == Some(version) {
            return Ok(false);
        }
        let tx = self.write_tx()?;
        tx.execute(
            "UPDATE chunks SET tokenized_korean_text = NULL
              WHERE tokenized_korean_text IS NOT NULL",
            [],
        )?;
        tx.execute(
            "INSERT INTO schema_meta (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![ANALYZER_KEY, version],
        )?;
        tx.commit()?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_analyzer_analyses_every_chunk_again_relogging_only_chunks_with_words() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = crate::tests::open_with_root(&dir.path().join("k.sqlite"));
        let mut doc = crate::tests::doc("ja.md", "東京都に住んでいます");
        doc.lang = Some("ja".into());
        store.replace_document(&doc).unwrap();
        store
            .replace_document(&crate::tests::doc("en.md", "plain words"))
            .unwrap();
        assert!(store.adopt_analyzer("a").unwrap());
        assert!(
            !store.adopt_analyzer("a").unwrap(),
            "same version: nothing to do"
        );
        let pending = store.chunks_missing_analysis(10).unwrap();
        assert_eq!(pending.len(), 2);
        let japanese = pending.iter().find(|p| p.text.contains('東')).unwrap();
        assert_eq!(japanese.lang.as_deref(), Some("ja"));
        let words: Vec<(String, String)> = pending
            .iter()
            .map(|p| {
                let w = if p.text.contains('東') {
                    "東京 都 住む"
                } else {
                    ""
                };
                (p.chunk_id.clone(), w.to_string())
            })
            .collect();
        store.set_analysed_words(&words).unwrap();
        assert!(store.chunks_missing_analysis(10).unwrap().is_empty());
        let english = pending.iter().find(|p| !p.text.contains('東')).unwrap();
        let logged = |store: &Store, id: &str| -> i64 {
            store
                .conn
                .query_row(
                    "SELECT count(*) FROM lexical_log l JOIN chunks c ON c.rowid = l.chunk_rowid
                      WHERE c.chunk_id = ?1",
                    params![id],
                    |r| r.get(0),
                )
                .unwrap()
        };
        let (english_before, japanese_before) = (
            logged(&store, &english.chunk_id),
            logged(&store, &japanese.chunk_id),
        );

        // Another analyser: both wait again; a chunk without words is not
        // logged for the lexical index again, one with words is.
        assert!(store.adopt_analyzer("b").unwrap());
        assert_eq!(store.analyzer_version().unwrap().as_deref(), Some("b"));
        assert_eq!(store.chunks_missing_analysis(10).unwrap().len(), 2);
        store.set_analysed_words(&words).unwrap();
        assert_eq!(logged(&store, &english.chunk_id), english_before);
        assert!(logged(&store, &japanese.chunk_id) > japanese_before);
    }
}
