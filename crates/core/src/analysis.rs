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

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Longest word indexed, in bytes; longer runs (base64 blobs, minified
/// code) are skipped, as no query names them and the lexical index keeps
/// terms shorter than 64 KiB.
pub const MAX_WORD_BYTES: usize = 255;

/// A word of a text: where it stands (byte offsets) and its folded form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Byte offset of the word's first character.
    pub from: usize,
    /// Byte offset just past the word.
    pub to: usize,
    /// The word folded: lower case, diacritics removed.
    pub folded: String,
}

/// The words of `text`, in order (see the module doc); words longer than
/// [`MAX_WORD_BYTES`] are left out.
pub fn words(text: &str) -> impl Iterator<Item = Word> + '_ {
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
                let folded = fold(&text[from..to]);
                if !folded.is_empty() {
                    return Some(Word { from, to, folded });
                }
            }
        }
    })
}

/// One word folded: lower case, diacritics removed (NFD, combining marks
/// dropped, NFC again so that Hangul recomposes).
pub fn fold(word: &str) -> String {
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

    fn folded(text: &str) -> Vec<String> {
        words(text).map(|w| w.folded).collect()
    }

    #[test]
    fn words_split_on_everything_but_letters_and_digits() {
        assert_eq!(
            folded("foo_bar std::io fooBar x2 — end."),
            ["foo", "bar", "std", "io", "foobar", "x2", "end"]
        );
        let w: Vec<Word> = words("  ab-cd").collect();
        assert_eq!((w[0].from, w[0].to, w[1].from, w[1].to), (2, 4, 5, 7));
    }

    #[test]
    fn diacritics_fold_away_and_hangul_stays_whole() {
        assert_eq!(folded("Café NAÏVE Ångström"), ["cafe", "naive", "angstrom"]);
        assert_eq!(folded("한국어 형태소 분석"), ["한국어", "형태소", "분석"]);
        assert_eq!(fold("İstanbul"), "istanbul");
    }

    #[test]
    fn overlong_runs_are_skipped_not_cut() {
        let blob = "a".repeat(MAX_WORD_BYTES + 1);
        assert_eq!(folded(&format!("start {blob} end")), ["start", "end"]);
        assert_eq!(folded(&"b".repeat(MAX_WORD_BYTES)).len(), 1);
    }
}
