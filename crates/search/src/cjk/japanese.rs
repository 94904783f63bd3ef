//! Japanese morphology for full-text search: lindera with the IPADIC
//! dictionary splits a run of Japanese (東京都に住んでいます, one word to
//! the lexical index) into its words (東京 都 住む), leaving out
//! particles, auxiliaries and the other function words, so that a
//! question's words meet a passage's.
//!
//! IPADIC is loaded at run time from a directory built once by
//! [`build_japanese_dictionary`] (`kebab models import-ja-dic`) from the
//! compiled MeCab IPADIC 2.7.0 that the PyPI package `ipadic` ships
//! (`ipadic/dicdir/`, compiled as UTF-8), decompiled by
//! [`crate::korean::mecab`].
//!
//! Measured choices (the tests' 20 question → passage pairs, 20 pairs of
//! one verb or adjective inflected two ways, 18 pairs of a word and a
//! compound holding it):
//! - IPADIC rather than UniDic (`unidic-lite` 1.0.8, built the same way):
//!   56 MB built against 255 MB, loaded in ~50–70 ms against ~220 ms, +54
//!   MB resident against +255 MB. Both find all 20 passages first and
//!   match 19/20 inflections; UniDic's shorter words match 18/18
//!   compounds where IPADIC's longer ones match 9/18, 17/18 once compound
//!   nouns are also indexed by their parts ([`JapaneseAnalyzer::tokens`]).
//! - Verbs and adjectives in their dictionary form only: it matches 19/20
//!   inflections, the written form 1/20 (読ん of 読んだ, 読み of 読みます),
//!   both forms 19/20 for 11 % more index terms.

use std::path::{Path, PathBuf};

use lindera::dictionary::load_fs_dictionary;
use lindera::mode::Mode;
use lindera::segmenter::Segmenter;
use lindera::tokenizer::Tokenizer;
use serde::{Deserialize, Serialize};

use super::CjkError;
use super::script::is_han;
use crate::korean::mecab;

/// Name of the analyser, recorded with what it produced.
pub const ANALYZER: &str = "lindera-ipadic";

/// lindera's schema for IPADIC sources (`metadata.json` of lindera's
/// ipadic crate, with the detail normalisation its builder applies to
/// IPADIC): the MeCab sources are UTF-8 once decompiled, whatever the
/// original dictionary's encoding.
const IPADIC_METADATA: &str = r#"{
  "name": "ipadic",
  "encoding": "UTF-8",
  "default_word_cost": -10000,
  "default_left_context_id": 0,
  "default_right_context_id": 0,
  "default_field_value": "*",
  "flexible_csv": true,
  "skip_invalid_cost_or_id": false,
  "normalize_details": true,
  "dictionary_schema": { "fields": ["surface", "left_context_id", "right_context_id", "cost",
    "part_of_speech", "part_of_speech_subcategory_1", "part_of_speech_subcategory_2",
    "part_of_speech_subcategory_3", "conjugation_type", "conjugation_form", "base_form",
    "reading", "pronunciation"] },
  "user_dictionary_schema": { "fields": ["surface", "part_of_speech", "reading"] }
}"#;

/// Words left out whatever IPADIC tags them: the light verbs and formal
/// nouns that carry no topic (する, いる, こと), demonstratives and
/// question words (この, どこ, 何), and, in case a particle or auxiliary
/// is tagged otherwise, the commonest of those (は が を に の で と も へ
/// から まで より や です ます だ た て).
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    // particles and auxiliaries (their part of speech drops them first)
    "は", "が", "を", "に", "の", "で", "と", "も", "へ", "や", "か", "な", "ね", "よ",
    "から", "まで", "より", "です", "ます", "だ", "た", "て", "ない", "ぬ", "う", "たい",
    "らしい", "れる", "られる", "せる", "させる",
    // light verbs and formal nouns
    "する", "いる", "ある", "なる", "できる", "いう", "おる", "くる", "いく", "やる",
    "こと", "もの", "よう", "ため", "とき", "ところ", "ほう",
    // demonstratives
    "これ", "それ", "あれ", "どれ", "この", "その", "あの", "どの", "ここ", "そこ",
    "あそこ", "どこ", "こちら", "そちら", "あちら", "どちら", "こう", "そう", "ああ",
    "どう", "こんな", "そんな", "あんな", "どんな",
    // question words
    "何", "なに", "なん", "誰", "だれ", "いつ", "なぜ", "どうして", "いくつ", "いくら",
    "どのくらい", "どれくらい",
];

/// Parts of speech (IPADIC's first two fields) that are function words:
/// particles, auxiliaries, symbols, fillers, interjections, conjunctions,
/// verbs and adjectives that only follow another (ている, られる, てよい),
/// formal nouns (こと, の, ん) and pronouns.
pub(crate) fn is_function(pos: &str, sub1: &str) -> bool {
    matches!(
        pos,
        "助詞" | "助動詞" | "記号" | "フィラー" | "感動詞" | "接続詞" | "BOS/EOS" | "その他"
    ) || (matches!(pos, "動詞" | "形容詞") && matches!(sub1, "非自立" | "接尾"))
        || (pos == "名詞" && matches!(sub1, "非自立" | "代名詞" | "特殊"))
}

/// Whether `token` is kept in the index ([`super::script::is_index_word`]
/// with this language's stop words).
pub(crate) fn keep(token: &str) -> bool {
    super::script::is_index_word(token, STOP_WORDS)
}

/// `[models.japanese]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct JapaneseConfig {
    /// Built lindera IPADIC directory; default: `models/ja-dic` under the
    /// data directory, then under the user cache (`kebab models
    /// import-ja-dic` writes it there). Without one, Japanese is read by
    /// jieba (its Han words are found, its Kana is not split).
    pub dictionary: Option<String>,
}

/// Longest compound noun split into its parts, in characters.
const MAX_COMPOUND_CHARS: usize = 16;

/// A loaded Japanese analyser.
pub struct JapaneseAnalyzer {
    tokenizer: Tokenizer,
    dir: PathBuf,
}

impl std::fmt::Debug for JapaneseAnalyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JapaneseAnalyzer")
            .field("dir", &self.dir)
            .finish()
    }
}

impl JapaneseAnalyzer {
    /// Load the built dictionary in `dir`.
    pub fn load(dir: &Path) -> Result<JapaneseAnalyzer, CjkError> {
        if !dir.join("metadata.json").is_file() {
            return Err(CjkError::Missing {
                language: "Japanese",
                path: dir.to_path_buf(),
            });
        }
        let dictionary = load_fs_dictionary(dir).map_err(|e| CjkError::Load {
            language: "Japanese",
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        if dictionary.metadata.name != "ipadic" {
            return Err(CjkError::Load {
                language: "Japanese",
                path: dir.to_path_buf(),
                message: format!(
                    "`{}` is not an IPADIC dictionary built by `kebab models import-ja-dic`",
                    dictionary.metadata.name
                ),
            });
        }
        Ok(JapaneseAnalyzer {
            tokenizer: Tokenizer::new(Segmenter::new(Mode::Normal, dictionary, None)),
            dir: dir.to_path_buf(),
        })
    }

    /// Where the dictionary was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Append the index words of `text` (a run of Japanese, NFKC
    /// normalised) to `out`, in order: each content word (function words
    /// and single Kana left out), verbs and adjectives in their dictionary
    /// form, a compound noun followed by its parts.
    pub fn tokens(&self, text: &str, out: &mut Vec<String>) -> Result<(), CjkError> {
        let mut tokens = self
            .tokenizer
            .tokenize(text)
            .map_err(|e| CjkError::Analyze {
                language: "Japanese",
                message: e.to_string(),
            })?;
        for token in &mut tokens {
            let surface = token.surface.trim().to_string();
            let pos = token.get("part_of_speech").unwrap_or("*").to_string();
            let sub1 = token
                .get("part_of_speech_subcategory_1")
                .unwrap_or("*")
                .to_string();
            if is_function(&pos, &sub1) {
                continue;
            }
            // An inflected word (a verb, an adjective) in its dictionary
            // form: written forms are cut before their endings (読ん, 読み,
            // 読ま of 読む), so a question and a passage rarely share them.
            let form = match token.get("base_form") {
                Some(base)
                    if base != "*"
                        && !base.is_empty()
                        && matches!(pos.as_str(), "動詞" | "形容詞") =>
                {
                    base.to_string()
                }
                _ => surface,
            };
            let parts = if pos == "名詞" {
                self.compound_parts(&form)
            } else {
                Vec::new()
            };
            if keep(&form) {
                out.push(form.clone());
            }
            out.extend(parts.into_iter().filter(|p| keep(p)).map(String::from));
        }
        Ok(())
    }

    /// The dictionary words a compound noun of Han characters is made of
    /// (東京大学 → 東京 大学, 関西国際空港 → 関西 国際 空港), indexed beside
    /// it as jieba's search mode does for Chinese, so that a question
    /// naming a part finds the whole: the tiling of `word` by the fewest
    /// nouns of the dictionary, a single character counting as two (the
    /// longest first piece among equals), when it has two pieces or more
    /// and one of them is a word of two characters or more; nothing
    /// otherwise (a word of 2 or more than [`MAX_COMPOUND_CHARS`]
    /// characters, Kana, digits).
    fn compound_parts<'w>(&self, word: &'w str) -> Vec<&'w str> {
        if !word.chars().all(is_han) {
            return Vec::new();
        }
        let starts: Vec<usize> = word
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(word.len()))
            .collect();
        let n = starts.len() - 1;
        if !(3..=MAX_COMPOUND_CHARS).contains(&n) {
            return Vec::new();
        }
        let dictionary = &self.tokenizer.segmenter.dictionary;
        // best[i]: the cost of tiling word[i..] and the end of its first
        // piece, from the end backwards.
        let mut best: Vec<(usize, usize)> = vec![(0, n); n + 1];
        for i in (0..n).rev() {
            let mut ends: Vec<usize> = dictionary
                .prefix_dictionary
                .prefix(&word[starts[i]..])
                .filter(|(_, entry)| {
                    dictionary
                        .word_details(entry.word_id.id as usize)
                        .first()
                        .is_some_and(|pos| *pos == "名詞")
                })
                .filter_map(|(len, _)| starts.iter().position(|&s| s == starts[i] + len))
                .filter(|&j| j >= i + 2 && !(i == 0 && j == n))
                .collect();
            ends.sort_unstable_by(|a, b| b.cmp(a));
            ends.dedup();
            best[i] = (2 + best[i + 1].0, i + 1);
            for j in ends {
                if 1 + best[j].0 < best[i].0 {
                    best[i] = (1 + best[j].0, j);
                }
            }
        }
        let mut parts = Vec::new();
        let mut i = 0;
        while i < n {
            let j = best[i].1;
            parts.push(&word[starts[i]..starts[j]]);
            i = j;
        }
        let has_word = parts.iter().any(|p| p.chars().nth(1).is_some());
        if parts.len() >= 2 && has_word {
            parts
        } else {
            Vec::new()
        }
    }
}

/// Build a lindera dictionary in `out_dir` from the compiled MeCab IPADIC
/// in `mecab_dir` (`ipadic/dicdir/` of the PyPI package `ipadic`: `sys.dic`,
/// `matrix.bin`, `char.bin`, `unk.dic`). Returns the number of lexicon
/// entries.
pub fn build_japanese_dictionary(mecab_dir: &Path, out_dir: &Path) -> Result<usize, CjkError> {
    let charset = dictionary_charset(&mecab_dir.join("sys.dic"))?;
    if !matches!(charset.to_ascii_lowercase().as_str(), "utf8" | "utf-8") {
        return Err(CjkError::Build(format!(
            "{} is compiled for {charset}; kebab reads UTF-8 dictionaries (PyPI: ipadic 1.0.0)",
            mecab_dir.join("sys.dic").display()
        )));
    }
    Ok(mecab::build_lindera(mecab_dir, out_dir, IPADIC_METADATA)?)
}

/// The character set a compiled MeCab `sys.dic` was compiled for (the
/// 32-byte field after its ten header words).
fn dictionary_charset(sys_dic: &Path) -> Result<String, CjkError> {
    use std::io::Read;
    let mut header = [0u8; 72];
    std::fs::File::open(sys_dic)
        .and_then(|mut f| f.read_exact(&mut header))
        .map_err(|source| mecab::MecabError::Read {
            path: sys_dic.display().to_string(),
            source,
        })?;
    let raw = &header[40..72];
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_section_reads_a_dictionary_path() {
        let c: JapaneseConfig = serde_json::from_str(r#"{"dictionary": "~/ja-dic"}"#).unwrap();
        assert_eq!(c.dictionary.as_deref(), Some("~/ja-dic"));
        let c: JapaneseConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, JapaneseConfig::default());
    }

    #[test]
    fn function_words_are_told_by_their_part_of_speech() {
        assert!(is_function("助詞", "格助詞"));
        assert!(is_function("助動詞", "*"));
        assert!(is_function("動詞", "非自立"));
        assert!(is_function("名詞", "非自立"));
        assert!(!is_function("名詞", "接尾"));
        assert!(!is_function("動詞", "自立"));
        assert!(!is_function("名詞", "固有名詞"));
    }

    #[test]
    fn single_kana_and_stop_words_are_dropped_han_singles_kept() {
        assert!(!keep("を"));
        assert!(!keep("ｶ"));
        assert!(!keep("する"));
        assert!(!keep("、"));
        assert!(!keep(""));
        assert!(keep("都"));
        assert!(keep("テスト"));
        assert!(keep("Rust"));
    }

    #[test]
    fn the_charset_is_read_from_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let mut header = vec![0u8; 72];
        header[40..44].copy_from_slice(b"utf8");
        std::fs::write(dir.path().join("sys.dic"), &header).unwrap();
        assert_eq!(
            dictionary_charset(&dir.path().join("sys.dic")).unwrap(),
            "utf8"
        );
        header[40..46].copy_from_slice(b"EUC-JP");
        std::fs::write(dir.path().join("sys.dic"), &header).unwrap();
        let err = build_japanese_dictionary(dir.path(), &dir.path().join("out")).unwrap_err();
        assert!(err.to_string().contains("EUC-JP"), "{err}");
    }

    #[test]
    fn a_missing_dictionary_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let err = JapaneseAnalyzer::load(&dir.path().join("ja-dic")).unwrap_err();
        assert!(matches!(err, CjkError::Missing { .. }), "{err}");
        assert!(err.to_string().contains("ja-dic"));
    }
}
