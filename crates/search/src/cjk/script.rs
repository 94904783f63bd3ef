//! Which script a character or a word is written in, as far as CJK
//! analysis cares: Hangul (Korean), Kana (Japanese only), Han (Chinese
//! characters, read as Chinese or Japanese) — and how a text is cut into
//! the words those analysers are given.
//!
//! A word here is what the lexical index calls one (a run of letters and
//! digits, [`kebab_core::analysis::runs`]), without its length limit: a
//! Japanese or Chinese sentence without punctuation is one such run, and
//! the longer it is, the more its analysis matters.

/// Whether `c` is Hangul, by the same ranges as
/// [`crate::korean::has_hangul`] (syllables, jamo, compatibility jamo), so
/// that a word goes to the Korean analyser exactly when it did before.
pub fn is_hangul(c: char) -> bool {
    matches!(c, '\u{AC00}'..='\u{D7A3}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}')
}

/// Whether `c` is Kana: Hiragana, Katakana (with its phonetic extensions
/// and the prolonged sound mark), half-width Katakana, and the historic
/// and small Kana of the supplementary planes. Kana is written in Japanese
/// only, so a word holding any is Japanese.
pub fn is_kana(c: char) -> bool {
    matches!(c,
        '\u{3041}'..='\u{309F}'     // Hiragana (and the (han)dakuten marks)
        | '\u{30A1}'..='\u{30FA}'   // Katakana (not ゠ and ・, punctuation)
        | '\u{30FC}'..='\u{30FF}'   // ー, ヽ, ヾ, ヿ
        | '\u{31F0}'..='\u{31FF}'   // Katakana phonetic extensions
        | '\u{FF66}'..='\u{FF9F}'   // half-width Katakana, ｰ, ﾞ, ﾟ
        | '\u{1AFF0}'..='\u{1B16F}' // Kana extended-B, supplement, extended-A, small Kana
    )
}

/// Whether `c` is a Han character (CJK unified ideographs and their
/// extensions, compatibility ideographs, and the ideographic iteration and
/// closing marks 々 〆 〇 that live among them in text).
pub fn is_han(c: char) -> bool {
    matches!(c,
        '\u{4E00}'..='\u{9FFF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{3005}'..='\u{3007}'
        | '\u{20000}'..='\u{2FA1F}'
        | '\u{30000}'..='\u{323AF}'
    )
}

/// Whether `c` is Han or Kana (what Japanese and Chinese analysis reads).
pub fn is_cjk(c: char) -> bool {
    is_han(c) || is_kana(c)
}

/// The scripts present in a word or a text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scripts {
    pub hangul: bool,
    pub kana: bool,
    pub han: bool,
}

impl Scripts {
    /// The scripts of `text`, in one pass.
    pub fn of(text: &str) -> Scripts {
        let mut s = Scripts::default();
        for c in text.chars() {
            if c.is_ascii() {
                continue;
            }
            s.hangul |= is_hangul(c);
            s.kana |= is_kana(c);
            s.han |= is_han(c);
        }
        s
    }

    /// Whether any of the scripts CJK analysis handles is present.
    pub fn any(self) -> bool {
        self.hangul || self.kana || self.han
    }
}

/// The words of `text`: maximal runs of alphanumeric characters (as the
/// lexical index cuts words, and as the Korean analyser always has), of
/// any length.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// `text` cut into pieces of at most `max_chars` characters, each ending
/// where the script changes (Kana to Han, say) when there is such a place
/// in its second half, so that a long run is analysed in bounded pieces
/// with few words cut in two.
pub fn pieces(text: &str, max_chars: usize) -> impl Iterator<Item = &str> {
    let max_chars = max_chars.max(2);
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let ends: Vec<usize> = rest
            .char_indices()
            .map(|(i, _)| i)
            .skip(1)
            .take(max_chars)
            .collect();
        if ends.len() < max_chars {
            let piece = rest;
            rest = "";
            return Some(piece);
        }
        // `ends[k]` is where character k + 1 starts: cutting there leaves
        // k + 1 characters in the piece.
        let class = |at: usize| rest[at..].chars().next().map(is_kana);
        let cut = (max_chars / 2..max_chars)
            .rev()
            .map(|k| ends[k - 1])
            .find(|&at| {
                let before = rest[..at].chars().next_back().map(is_kana);
                before != class(at)
            })
            .unwrap_or(ends[max_chars - 1]);
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

/// Whether an analyser's `token` goes into the index: not one of
/// `stop_words`, holding a letter or digit, and not a single Kana (a stray
/// particle or okurigana); a single Han character is kept (都, 駅, 书 are
/// words).
pub fn is_index_word(token: &str, stop_words: &[&str]) -> bool {
    let mut chars = token.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if chars.next().is_none() && is_kana(first) {
        return false;
    }
    token.chars().any(char::is_alphanumeric) && !stop_words.contains(&token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_told_apart() {
        let s = Scripts::of("東京タワーに行く");
        assert!(s.kana && s.han && !s.hangul);
        let s = Scripts::of("我们在北京");
        assert!(s.han && !s.kana && !s.hangul);
        let s = Scripts::of("서울 大學");
        assert!(s.hangul && s.han && !s.kana);
        assert!(!Scripts::of("plain ascii 123 Ελλάδα").any());
        assert!(is_kana('ｶ') && is_kana('ー') && is_kana('ゞ'));
        assert!(is_han('々') && is_han('〇') && is_han('𠮷'));
        assert!(!is_han('。') && !is_kana('・') && !is_kana('。'));
    }

    #[test]
    fn hangul_ranges_are_the_korean_analysers() {
        for c in ['가', '힣', 'ᄀ', 'ㅎ', 'ㆎ'] {
            assert_eq!(is_hangul(c), crate::korean::has_hangul(&c.to_string()));
        }
        for c in ['a', '東', 'ア', 'ꥠ'] {
            assert_eq!(is_hangul(c), crate::korean::has_hangul(&c.to_string()));
        }
    }

    #[test]
    fn words_split_on_punctuation_only() {
        let w: Vec<&str> = words("東京、大阪の天気。Rustで書く — ok").collect();
        assert_eq!(w, ["東京", "大阪の天気", "Rustで書く", "ok"]);
    }

    #[test]
    fn pieces_are_bounded_and_lossless() {
        let text = "あいうえお漢字漢字かきくけこ".repeat(50);
        let parts: Vec<&str> = pieces(&text, 16).collect();
        assert_eq!(parts.concat(), text);
        assert!(parts.iter().all(|p| p.chars().count() <= 16), "{parts:?}");
        // Cut where Kana meets Han when it can.
        assert!(
            parts[0].ends_with("漢字漢字") || parts[0].ends_with('お'),
            "{parts:?}"
        );
        let han = "漢".repeat(100);
        let parts: Vec<&str> = pieces(&han, 30).collect();
        assert_eq!(
            parts.iter().map(|p| p.chars().count()).collect::<Vec<_>>(),
            [30, 30, 30, 10]
        );
        assert_eq!(pieces("", 10).count(), 0);
        assert_eq!(pieces("短い", 10).collect::<Vec<_>>(), ["短い"]);
    }
}
