//! Chinese word segmentation for full-text search: jieba (`jieba-rs`, its
//! dictionary embedded in the binary) splits a run of Chinese
//! (我们在北京大学学习中文, one word to the lexical index) into words,
//! in search mode (北京大学 also as 北京 and 大学, so a question naming
//! either finds it), leaving out the function words (的 了 是 在 …).
//!
//! Nothing to install; the dictionary is decompressed and loaded the
//! first time Chinese is met (~0.2 s and ~48 MB optimised, ~0.35 s at
//! opt-level 0).

use jieba_rs::Jieba;

/// Name of the analyser, recorded with what it produced.
pub const ANALYZER: &str = "jieba-rs";

/// The version of jieba-rs (and so of its embedded dictionary): another
/// version may cut differently, and the chunks must be analysed again.
pub const VERSION: &str = "0.10.4";

/// Function words and question words left out (simplified and
/// traditional forms): particles (的 了 着 过 吗 呢 吧), the copula and
/// the commonest prepositions and conjunctions (是 在 和 与 及 也 都 而
/// 之 于 以 把 被), demonstratives and question words (这 那 什么 怎么).
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    // particles
    "的", "地", "得", "了", "着", "著", "过", "過", "吗", "嗎", "呢", "吧", "啊", "呀", "么",
    "麼", "嘛",
    // the copula, prepositions, conjunctions, adverbs of degree and scope
    "是", "在", "和", "与", "與", "及", "或", "也", "都", "而", "之", "其", "于", "於", "以",
    "为", "為", "把", "被", "将", "將", "就", "又", "还", "還", "并", "並", "且", "但", "却",
    "卻", "从", "從", "对", "對", "向", "到", "给", "給", "让", "讓", "由", "等", "很", "有",
    "以及", "或者", "并且", "並且", "而且", "但是", "因为", "因為", "所以", "如果", "虽然",
    "雖然", "就是", "等等",
    // pronouns and demonstratives
    "个", "個", "这", "這", "那", "我", "你", "他", "她", "它", "们", "們", "我们", "我們",
    "你们", "你們", "他们", "他們", "她们", "她們", "它们", "它們", "这个", "這個", "那个",
    "那個", "这些", "這些", "那些",
    // question words
    "什么", "什麼", "怎么", "怎麼", "怎样", "怎樣", "如何", "哪", "哪里", "哪裡", "哪些",
    "谁", "誰", "多少", "为什么", "為什麼", "几", "幾",
];

/// Whether `token` is kept in the index ([`super::script::is_index_word`]
/// with this language's stop words).
pub(crate) fn keep(token: &str) -> bool {
    super::script::is_index_word(token, STOP_WORDS)
}

/// jieba with its embedded dictionary.
pub struct ChineseAnalyzer {
    jieba: Jieba,
}

impl std::fmt::Debug for ChineseAnalyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChineseAnalyzer").finish_non_exhaustive()
    }
}

impl Default for ChineseAnalyzer {
    fn default() -> Self {
        ChineseAnalyzer::new()
    }
}

impl ChineseAnalyzer {
    /// Load the embedded dictionary.
    pub fn new() -> ChineseAnalyzer {
        ChineseAnalyzer {
            jieba: Jieba::new(),
        }
    }

    /// Append the index words of `text` (a run of Chinese, NFKC
    /// normalised) to `out`: jieba's search-mode cut with its HMM for
    /// words the dictionary lacks.
    pub fn tokens(&self, text: &str, out: &mut Vec<String>) {
        out.extend(
            self.jieba
                .cut_for_search(text, true)
                .into_iter()
                .map(|t| t.word.trim())
                .filter(|w| keep(w))
                .map(str::to_string),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_and_single_kana_are_dropped() {
        assert!(!keep("的"));
        assert!(!keep("什么"));
        assert!(!keep("，"));
        assert!(!keep("の"));
        assert!(keep("书"));
        assert!(keep("北京"));
        assert!(keep("Python"));
    }
}
