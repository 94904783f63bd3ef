//! Word analysis for the lexical index: how a chunk's text and a query's
//! terms become index terms, in one place for both sides.
//!
//! It reproduces what SQLite's FTS5 `unicode61 remove_diacritics 2`
//! tokenizer made of kebab's text, so that search finds what it found
//! before the engine changed: a word is a run of alphanumeric characters
//! (`foo_bar` and `std::io` are two words each, `fooBar` one), folded to
//! lower case with its diacritics removed (`Café` → `cafe`). Hangul
//! syllables stay whole: they decompose into conjoining jamo, which are
//! letters rather than marks, and compose again.
//!
//! A word folded to the letters a–z only (`Café` too) is then reduced to
//! its English stem (Snowball's Porter2: `tastes`, `tasting` → `tast`), so
//! a query finds the other forms of its words, as BM25 baselines do
//! (SciFact train, lexical nDCG@10 0.6698 → 0.6993, BENCHMARKS.md "English
//! stems"). Words with digits and words of other scripts are not stemmed;
//! Korean is matched by its morphemes instead (the chunk's and the
//! query's, analysed by lindera). The FTS5 table search falls back on
//! stems with SQLite's `porter` tokenizer, Porter's original algorithm,
//! which Porter2 revises: the two agree on most words.

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Longest word indexed, in bytes; longer runs (base64 blobs, minified
/// code) are skipped, as no query names them and the lexical index keeps
/// terms shorter than 64 KiB.
pub const MAX_WORD_BYTES: usize = 255;

/// A word of a text: where it stands (byte offsets) and its index term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Byte offset of the word's first character.
    pub from: usize,
    /// Byte offset just past the word.
    pub to: usize,
    /// The word as the index holds it ([`term`]).
    pub term: String,
}

/// The words of `text`, in order (see the module doc); words longer than
/// [`MAX_WORD_BYTES`] are left out.
pub fn words(text: &str) -> impl Iterator<Item = Word> + '_ {
    runs(text).filter_map(|(from, run)| {
        let term = term(run);
        (!term.is_empty()).then(|| Word {
            from,
            to: from + run.len(),
            term,
        })
    })
}

/// The runs of letters and digits of `text` that [`words`] analyses, with
/// their byte offsets, before analysis (for a caller that analyses only
/// some of them); runs longer than [`MAX_WORD_BYTES`] are left out.
pub fn runs(text: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        loop {
            let (from, _) = chars.find(|(_, c)| c.is_alphanumeric())?;
            let mut to = text.len();
            while let Some(&(i, c)) = chars.peek() {
                if !c.is_alphanumeric() {
                    to = i;
                    break;
                }
                chars.next();
            }
            if to - from <= MAX_WORD_BYTES {
                return Some((from, &text[from..to]));
            }
        }
    })
}

/// One word (a run of letters and digits) as the index holds it: folded,
/// then stemmed when that leaves the letters a–z only (see the module doc).
pub fn term(word: &str) -> String {
    let folded = fold(word);
    if !folded.bytes().all(|b| b.is_ascii_lowercase()) {
        return folded;
    }
    match Stemmer::create(Algorithm::English).stem(&folded) {
        std::borrow::Cow::Borrowed(_) => folded,
        std::borrow::Cow::Owned(stem) => stem,
    }
}

/// One word folded: lower case, diacritics removed (NFD, combining marks
/// dropped, NFC again so that Hangul recomposes).
fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    word.to_lowercase()
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .nfc()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        words(text).map(|w| w.term).collect()
    }

    #[test]
    fn words_split_on_everything_but_letters_and_digits() {
        assert_eq!(
            terms("foo_bar std::io fooBar x2 — end."),
            ["foo", "bar", "std", "io", "foobar", "x2", "end"]
        );
        let w: Vec<Word> = words("  ab-cd").collect();
        assert_eq!((w[0].from, w[0].to, w[1].from, w[1].to), (2, 4, 5, 7));
    }

    #[test]
    fn diacritics_fold_away_and_hangul_stays_whole() {
        assert_eq!(terms("Café NAÏVE Ångström"), ["cafe", "naiv", "angstrom"]);
        assert_eq!(terms("한국어 형태소 분석"), ["한국어", "형태소", "분석"]);
        assert_eq!(fold("İstanbul"), "istanbul");
    }

    #[test]
    fn latin_words_are_stemmed_and_others_kept_as_folded() {
        assert_eq!(terms("Tastes tasting TASTED taste"), ["tast"; 4]);
        assert_eq!(
            terms("parsers parsing elections élections"),
            ["parser", "pars", "elect", "elect"]
        );
        // Digits, other scripts and short words stay as they are.
        assert_eq!(
            terms("covid19 x86 is Ελλάδα 서울에서"),
            ["covid19", "x86", "is", "ελλαδα", "서울에서"]
        );
        // A word's term is the term of the same word in a text.
        for word in ["Running", "café", "ÉLECTIONS", "서울"] {
            assert_eq!(vec![term(word)], terms(word));
        }
    }

    #[test]
    fn overlong_runs_are_skipped_not_cut() {
        let blob = "a".repeat(MAX_WORD_BYTES + 1);
        assert_eq!(terms(&format!("start {blob} end")), ["start", "end"]);
        assert_eq!(terms(&"b".repeat(MAX_WORD_BYTES)).len(), 1);
    }
}
