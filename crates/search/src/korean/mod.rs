//! Korean morphology for full-text search: lindera with the mecab-ko-dic
//! dictionary splits eojeol (서울특별시에서) into morphemes (서울 특별시 에서)
//! so that FTS5's unicode61 tokens match two-syllable query words.
//!
//! The dictionary is loaded at run time from a directory built once by
//! [`build_dictionary`] (`kebab models import-ko-dic`).

pub mod mecab;

use std::path::{Path, PathBuf};

use lindera::dictionary::load_fs_dictionary;
use lindera::mode::Mode;
use lindera::segmenter::Segmenter;
use lindera::tokenizer::Tokenizer;
use serde::{Deserialize, Serialize};

/// Name of the analyzer, recorded with what it produced.
pub const ANALYZER: &str = "lindera-ko-dic";

/// lindera's schema for mecab-ko-dic sources (`metadata.json` of lindera's
/// ko-dic crate, with flexible CSV so unusual rows do not stop a build).
const KO_DIC_METADATA: &str = r#"{
  "name": "ko-dic",
  "encoding": "UTF-8",
  "default_word_cost": -10000,
  "default_left_context_id": 0,
  "default_right_context_id": 0,
  "default_field_value": "*",
  "flexible_csv": true,
  "skip_invalid_cost_or_id": false,
  "normalize_details": false,
  "dictionary_schema": { "fields": ["surface", "left_context_id", "right_context_id", "cost",
    "part_of_speech_tag", "meaning", "presence_absence", "reading", "type",
    "first_part_of_speech", "last_part_of_speech", "expression"] },
  "user_dictionary_schema": { "fields": ["surface", "part_of_speech_tag", "reading"] }
}"#;

/// `[models.korean]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct KoreanConfig {
    /// Built lindera ko-dic directory; default: `models/ko-dic` under the
    /// data directory, then under the user cache (`kebab models
    /// import-ko-dic` writes it there).
    pub dictionary: Option<String>,
}

/// Problems loading or building the Korean dictionary.
#[derive(Debug, thiserror::Error)]
pub enum KoreanError {
    #[error("Korean dictionary not found at {0}")]
    Missing(PathBuf),
    #[error("cannot load the Korean dictionary at {path}: {message}")]
    Load { path: PathBuf, message: String },
    #[error(transparent)]
    Mecab(#[from] mecab::MecabError),
    #[error("Korean analysis failed: {0}")]
    Analyze(String),
}

/// A loaded morphological analyzer.
pub struct KoreanAnalyzer {
    tokenizer: Tokenizer,
    dir: PathBuf,
}

impl std::fmt::Debug for KoreanAnalyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KoreanAnalyzer")
            .field("dir", &self.dir)
            .finish()
    }
}

/// Whether `text` holds Hangul syllables or jamo.
pub fn has_hangul(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c, '\u{AC00}'..='\u{D7A3}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}')
    })
}

impl KoreanAnalyzer {
    /// Load the built dictionary in `dir`.
    pub fn load(dir: &Path) -> Result<KoreanAnalyzer, KoreanError> {
        if !dir.join("metadata.json").is_file() {
            return Err(KoreanError::Missing(dir.to_path_buf()));
        }
        let dictionary = load_fs_dictionary(dir).map_err(|e| KoreanError::Load {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(KoreanAnalyzer {
            tokenizer: Tokenizer::new(Segmenter::new(Mode::Normal, dictionary, None)),
            dir: dir.to_path_buf(),
        })
    }

    /// Where the dictionary was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The morphemes of every Hangul run in `text`, space-separated; `None`
    /// when the text has no Hangul (nothing to add to the index).
    pub fn morphemes(&self, text: &str) -> Result<Option<String>, KoreanError> {
        if !has_hangul(text) {
            return Ok(None);
        }
        let mut out: Vec<String> = Vec::new();
        // Only Hangul-bearing words are analysed: Latin words and code are
        // already tokenized well by unicode61 and are in the raw text.
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if !has_hangul(word) {
                continue;
            }
            let mut tokens = self
                .tokenizer
                .tokenize(word)
                .map_err(|e| KoreanError::Analyze(e.to_string()))?;
            for token in &mut tokens {
                let surface = token.surface.trim().to_string();
                // Compound and inflected entries name their parts in the
                // `expression` field (서울/NNP/*+특별시/NNG/*): index those
                // too, so 서울 finds 서울특별시.
                let parts = token
                    .get("expression")
                    .map(expression_parts)
                    .unwrap_or_default();
                out.extend(parts.into_iter().filter(|p| *p != surface));
                if !surface.is_empty() {
                    out.push(surface);
                }
            }
        }
        Ok(Some(out.join(" ")))
    }
}

/// The surfaces in a mecab-ko-dic `expression` (`서울/NNP/*+특별시/NNG/*` →
/// 서울, 특별시); nothing for `*`.
pub fn expression_parts(expression: &str) -> Vec<String> {
    if expression == "*" {
        return Vec::new();
    }
    expression
        .split('+')
        .filter_map(|part| part.split('/').next())
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "*")
        .map(String::from)
        .collect()
}

/// Build a lindera dictionary in `out_dir` from the compiled MeCab
/// mecab-ko-dic in `mecab_dir` (as shipped by the PyPI package
/// `python-mecab-ko-dic`). Returns the number of lexicon entries.
pub fn build_dictionary(mecab_dir: &Path, out_dir: &Path) -> Result<usize, KoreanError> {
    Ok(mecab::build_lindera(mecab_dir, out_dir, KO_DIC_METADATA)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hangul_detection() {
        assert!(has_hangul("서울 is a city"));
        assert!(has_hangul("ㅎㅎ"));
        assert!(!has_hangul("Seoul 東京 123"));
    }

    #[test]
    fn compound_expressions_name_their_parts() {
        assert_eq!(
            expression_parts("서울/NNP/지명+특별시/NNG/*"),
            vec!["서울", "특별시"]
        );
        assert!(expression_parts("*").is_empty());
    }

    #[test]
    fn a_missing_dictionary_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let err = KoreanAnalyzer::load(&dir.path().join("ko-dic")).unwrap_err();
        assert!(matches!(err, KoreanError::Missing(_)), "{err}");
        assert!(err.to_string().contains("ko-dic"));
    }
}
