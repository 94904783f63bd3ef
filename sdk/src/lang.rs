//! A document's language told from its letters, for plugins whose format
//! does not say (a Markdown file without `lang` in its frontmatter): the
//! script decides, since Korean, Japanese and Chinese are each written in
//! their own mix of scripts and kebab analyses each script's words.

/// BCP-47 tag of `text`'s language when its letters make it plain: `ko`
/// when Hangul is a fifth of the letters; `ja` when Kana and Han are a
/// fifth and Kana a tenth of those; `zh` when Han is a fifth without
/// that much Kana; `en` when four fifths are ASCII; otherwise `None`.
pub fn detect(text: &str) -> Option<String> {
    let (mut hangul, mut kana, mut han, mut ascii, mut letters) = (0usize, 0usize, 0, 0, 0);
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        letters += 1;
        match c {
            '\u{AC00}'..='\u{D7A3}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}' => {
                hangul += 1
            }
            '\u{3040}'..='\u{30FF}' | '\u{31F0}'..='\u{31FF}' | '\u{FF66}'..='\u{FF9D}' => {
                kana += 1
            }
            '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' => han += 1,
            c if c.is_ascii() => ascii += 1,
            _ => {}
        }
    }
    let share = |n: usize, of: usize, parts: usize| of > 0 && n * parts >= of;
    let lang = if letters == 0 {
        return None;
    } else if share(hangul, letters, 5) {
        "ko"
    } else if share(kana + han, letters, 5) && share(kana, kana + han, 10) {
        "ja"
    } else if share(han, letters, 5) {
        "zh"
    } else if ascii * 10 >= letters * 8 {
        "en"
    } else {
        return None;
    };
    Some(lang.to_string())
}

#[cfg(test)]
mod tests {
    use super::detect;

    #[test]
    fn each_script_mix_names_its_language() {
        assert_eq!(detect("서울에서 열린 회의").as_deref(), Some("ko"));
        assert_eq!(
            detect("昨年の夏、私たちは京都の古い寺院を訪ねました。").as_deref(),
            Some("ja")
        );
        assert_eq!(
            detect("我们在北京大学学习中文，老师每天布置很多作业。").as_deref(),
            Some("zh")
        );
        assert_eq!(detect("Plain English words.").as_deref(), Some("en"));
        // English notes quoting a little Chinese stay English.
        assert_eq!(
            detect("The word 学习 means to study; we practised it all week long.").as_deref(),
            Some("en")
        );
        assert_eq!(detect("Привет, как дела у тебя сегодня?"), None);
        assert_eq!(detect("123 456"), None);
    }
}
