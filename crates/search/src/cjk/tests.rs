//! Tests of the CJK analyser with the real dictionaries: IPADIC and
//! mecab-ko-dic built from the offline assets (`scripts/fetch-assets.sh`,
//! `KEBAB_ASSETS_DIR`; built once into `ja-dic/` and `ko-dic/` there when
//! missing, as `kebab models import-ja-dic` / `import-ko-dic` would), and
//! jieba's embedded dictionary.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use kebab_core::analysis;

use super::*;

/// The offline assets directory.
fn assets() -> PathBuf {
    std::env::var_os("KEBAB_ASSETS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/kebab-assets")
        })
}

/// `assets/<built>`, built from `assets/<source>` by `build` when it is
/// not there yet.
fn built(built: &str, source: &str, build: impl FnOnce(&Path, &Path)) -> PathBuf {
    let out = assets().join(built);
    if !out.join("metadata.json").is_file() {
        let source = assets().join(source);
        assert!(
            source.join("sys.dic").is_file(),
            "{} missing: run scripts/fetch-assets.sh",
            source.display()
        );
        build(&source, &out);
    }
    out
}

/// The built IPADIC directory.
fn ja_dic() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        built("ja-dic", "ipadic", |source, out| {
            let entries = build_japanese_dictionary(source, out).expect("build IPADIC");
            assert!(entries > 390_000, "{entries}");
        })
    })
    .clone()
}

/// The built mecab-ko-dic directory.
fn ko_dic() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        built("ko-dic", "mecab-ko-dic", |source, out| {
            let entries = korean::build_dictionary(source, out).expect("build ko-dic");
            assert!(entries > 500_000, "{entries}");
        })
    })
    .clone()
}

/// One analyser with every dictionary, shared by the tests.
fn all() -> &'static CjkAnalyzer {
    static ALL: OnceLock<CjkAnalyzer> = OnceLock::new();
    ALL.get_or_init(|| CjkAnalyzer::lazy(Some(ko_dic()), Some(ja_dic())))
}

fn doc(text: &str, lang: Option<&str>) -> String {
    all().morphemes(text, lang).unwrap().unwrap()
}

fn query(text: &str) -> String {
    all().query_morphemes(text).unwrap().unwrap()
}

#[test]
fn language_tags_are_read_by_their_primary_subtag() {
    assert_eq!(language("ja"), Some(Language::Japanese));
    assert_eq!(language("ja-JP"), Some(Language::Japanese));
    assert_eq!(language("zh-Hant-TW"), Some(Language::Chinese));
    assert_eq!(language("ZH_cn"), Some(Language::Chinese));
    assert_eq!(language("yue"), Some(Language::Chinese));
    assert_eq!(language("ko-KR"), Some(Language::Korean));
    assert_eq!(language("en"), None);
    assert_eq!(language(""), None);
}

#[test]
fn the_analyser_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<CjkAnalyzer>();
}

#[test]
fn japanese_sentences_are_split_into_their_words() {
    assert_eq!(doc("東京都に住んでいます", None), "東京 都 住む");
    assert_eq!(
        doc("形態素解析は難しい", None),
        "形態素 形態 素 解析 難しい"
    );
    assert_eq!(doc("カタカナ語のテスト", None), "カタカナ 語 テスト");
    // Inflections meet in the dictionary form.
    assert_eq!(doc("本を読みました", None), "本 読む");
    assert_eq!(doc("本を読んだ", None), "本 読む");
    // Half-width Katakana and full-width Latin are read normalised.
    assert_eq!(
        doc("ｶﾀｶﾅのＰｙｔｈｏｎ入門", None),
        doc("カタカナのPython入門", None)
    );
    assert_eq!(
        doc("Rustで書かれたプログラム", None),
        "Rust 書く プログラム"
    );
}

#[test]
fn compound_nouns_are_indexed_with_their_parts() {
    assert_eq!(doc("東京大学に合格した", None), "東京大学 東京 大学 合格");
    assert_eq!(
        doc("関西国際空港から出発", None),
        "関西国際空港 関西 国際 空港 出発"
    );
    // A question naming a part finds the whole, and the whole its parts.
    assert_eq!(query("空港"), "空港");
    assert_eq!(query("東京大学"), "東京大学 東京 大学");
    assert_eq!(doc("東京の大学", None), "東京 大学");
    // Kana, digits and two-character words are not split.
    assert_eq!(doc("コンピュータ", None), "コンピュータ");
    assert_eq!(doc("大学", Some("ja")), "大学");
}

#[test]
fn chinese_sentences_are_split_into_their_words() {
    assert_eq!(
        doc("我们在北京大学学习中文", Some("zh")),
        "北京 大学 北京大学 学习 中文"
    );
    assert_eq!(
        doc("自然语言处理很有趣", Some("zh-Hans")),
        "自然 语言 自然语言 处理 有趣"
    );
    // Unknown language without Kana: Chinese.
    assert_eq!(
        doc("我们在北京大学学习中文", None),
        doc("我们在北京大学学习中文", Some("zh"))
    );
}

#[test]
fn stop_words_are_left_out() {
    let ja = doc("私は昨日図書館で本を読みました", Some("ja"));
    assert_eq!(ja, "昨日 図書館 図書 館 本 読む");
    for stop in ["は", "で", "を", "ます", "た", "私"] {
        assert!(!ja.split(' ').any(|t| t == stop), "{stop} in {ja}");
    }
    let zh = doc("这是我的书，他也都在学习和工作", Some("zh"));
    assert_eq!(zh, "书 学习 工作");
}

#[test]
fn a_japanese_documents_han_words_are_read_as_japanese() {
    // A Han-only word: punctuation leaves 形態素解析 without Kana.
    let text = "形態素解析、自然言語処理";
    assert_eq!(doc(text, Some("ja")), "形態素 形態 素 解析 自然 言語 処理");
    assert_eq!(doc(text, Some("ja-JP")), doc(text, Some("ja")));
    // Unknown language: Kana elsewhere in the text makes it Japanese.
    assert_eq!(
        doc("形態素解析、それは難しい", None),
        "形態素 形態 素 解析 難しい"
    );
    // The same word in a Chinese document is jieba's.
    assert_ne!(doc(text, Some("zh")), doc(text, Some("ja")));
}

#[test]
fn a_query_reads_han_both_ways_unless_it_has_kana() {
    let both = query("東京大学");
    let ja = doc("東京大学", Some("ja"));
    let zh = doc("東京大学", Some("zh"));
    for t in ja.split(' ').chain(zh.split(' ')) {
        assert!(both.split(' ').any(|b| b == t), "{t} not in {both}");
    }
    // Each word once.
    let words: Vec<&str> = both.split(' ').collect();
    assert_eq!(words.len(), words.iter().collect::<HashSet<_>>().len());
    // Kana anywhere in the query: Japanese only.
    assert_eq!(query("東京大学、どこ"), doc("東京大学、どこ", Some("ja")));
}

#[test]
fn mixed_text_is_split_by_script() {
    let text = "서울특별시에서 東京タワーを見た。我们在北京大学学习 — Hello, world 42";
    let got = doc(text, Some("zh"));
    let korean = KoreanAnalyzer::load(&ko_dic()).unwrap();
    let ko = korean.morphemes("서울특별시에서").unwrap().unwrap();
    assert_eq!(
        got,
        format!("{ko} 東京 タワー 見る 北京 大学 北京大学 学习"),
        "Latin and digits are left to the lexical index"
    );
    assert_eq!(all().morphemes("Hello, world 42", None).unwrap(), None);
}

#[test]
fn korean_output_is_the_korean_analysers() {
    let korean = KoreanAnalyzer::load(&ko_dic()).unwrap();
    let preloaded = CjkAnalyzer::new(Some(KoreanAnalyzer::load(&ko_dic()).unwrap()), None);
    for text in [
        "한국어 형태소 분석기는 서울에서 개발되었다",
        "서울특별시에서 API를 호출했다. (2024년) kebab은 로컬 우선 지식 베이스입니다!",
        "ㅎㅎ 그래요?",
        "영어만 있는 English text도 섞여 있다",
    ] {
        let want = korean.morphemes(text).unwrap();
        for lang in [None, Some("ko"), Some("ko-KR"), Some("en")] {
            assert_eq!(
                all().morphemes(text, lang).unwrap(),
                want,
                "{text} {lang:?}"
            );
            assert_eq!(preloaded.morphemes(text, lang).unwrap(), want, "{text}");
        }
    }
    // A Korean document's Hanja stays with the lexical index, as before.
    assert_eq!(
        all().morphemes("대학교(大學校) 입학", Some("ko")).unwrap(),
        korean.morphemes("대학교(大學校) 입학").unwrap()
    );
    // Without a Korean dictionary, Hangul is not analysed.
    let none = CjkAnalyzer::new(None, None);
    assert_eq!(
        none.morphemes("서울에서", None).unwrap().as_deref(),
        Some("")
    );
}

#[test]
fn dictionaries_load_only_when_their_script_is_met() {
    let cjk = CjkAnalyzer::lazy(Some(ko_dic()), Some(ja_dic()));
    let states = |cjk: &CjkAnalyzer| -> Vec<AnalyzerState> {
        cjk.status().into_iter().map(|s| s.state).collect()
    };
    use AnalyzerState::{Available, Loaded};
    assert_eq!(
        cjk.morphemes("An English text, 100% Latin.", None).unwrap(),
        None
    );
    assert_eq!(cjk.query_morphemes("english query").unwrap(), None);
    assert_eq!(states(&cjk), [Available, Available, Available]);
    cjk.morphemes("我们在北京", Some("zh")).unwrap();
    assert_eq!(states(&cjk), [Available, Available, Loaded]);
    cjk.morphemes("東京に行く", None).unwrap();
    assert_eq!(states(&cjk), [Available, Loaded, Loaded]);
    cjk.morphemes("서울에서", None).unwrap();
    assert_eq!(states(&cjk), [Loaded, Loaded, Loaded]);
    let status = cjk.status();
    assert_eq!(status[1].analyzer, "lindera-ipadic");
    assert_eq!(status[1].source, ja_dic().display().to_string());
    assert_eq!(status[2].source, "embedded");
}

#[test]
fn a_missing_japanese_dictionary_fails_once_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let cjk = CjkAnalyzer::new(None, Some(dir.path().join("ja-dic")));
    assert_eq!(cjk.status()[1].state, AnalyzerState::Failed);
    let err = cjk.morphemes("東京に行く", None).unwrap_err();
    assert!(
        err.is_dictionary() && err.to_string().contains("ja-dic"),
        "{err}"
    );
    assert!(cjk.query_morphemes("東京に行く").is_err());
    // Chinese still works, and an English text needs no dictionary.
    assert!(cjk.morphemes("我们在北京", Some("zh")).is_ok());
    assert_eq!(cjk.morphemes("plain", None).unwrap(), None);
}

#[test]
fn without_ipadic_japanese_is_read_by_jieba() {
    let cjk = CjkAnalyzer::new(None, None);
    // jieba knows the Han words Japanese shares with Chinese; Kana is
    // not split, single Kana is dropped.
    let got = cjk
        .morphemes("機械学習モデルを訓練した", None)
        .unwrap()
        .unwrap();
    assert_eq!(got, "機械 学習 訓練");
    assert_eq!(cjk.status()[1].state, AnalyzerState::NotInstalled);
}

#[test]
fn the_version_names_the_analyser_set() {
    let bare = CjkAnalyzer::new(None, None).version();
    let ja = CjkAnalyzer::new(None, Some(ja_dic())).version();
    let both = all().version();
    assert_ne!(bare, ja);
    assert_ne!(ja, both);
    assert_eq!(
        both,
        CjkAnalyzer::lazy(Some(ko_dic()), Some(ja_dic())).version()
    );
    let preloaded = CjkAnalyzer::new(
        Some(KoreanAnalyzer::load(&ko_dic()).unwrap()),
        Some(ja_dic()),
    );
    assert_eq!(preloaded.version(), both, "loading early changes nothing");
    assert!(both.starts_with("cjk1;ko=lindera-ko-dic@"), "{both}");
    assert!(
        both.contains(";ja=lindera-ipadic@") && both.ends_with(";zh=jieba-rs-0.10.4"),
        "{both}"
    );
    let dir = tempfile::tempdir().unwrap();
    let missing = CjkAnalyzer::new(None, Some(dir.path().to_path_buf())).version();
    assert!(missing.contains("ja=lindera-ipadic@missing"), "{missing}");
}

#[test]
fn long_runs_are_analysed_in_bounded_pieces() {
    // 100 000 Han characters without punctuation.
    let sentence = "我们在北京大学学习中文自然语言处理很有趣";
    let n = sentence.chars().count();
    let text: String = sentence.repeat(100_000 / n);
    assert_eq!(text.chars().count(), 100_000);
    let started = Instant::now();
    let zh = doc(&text, Some("zh"));
    let ja = doc(&text, Some("ja"));
    let elapsed = started.elapsed();
    let per = |out: &str| out.split(' ').filter(|t| *t == "北京").count();
    assert!(per(&zh) >= 100_000 / n - 100, "{}", per(&zh));
    assert!(!ja.is_empty());
    assert!(elapsed.as_secs() < 60, "{elapsed:?}");
    // A long Japanese run (Kana and Han) as well.
    let text = "東京都に住んでいます".repeat(10_000);
    let ja = doc(&text, None);
    assert!(ja.split(' ').filter(|t| *t == "東京").count() >= 9_900);
}

/// BM25 ranks (1-based) of each question's passage among `pairs`'
/// passages, as the lexical index ranks: a passage's terms are the index
/// terms of its morphemes and its text, a question's those of its words
/// and its morphemes ([`CjkAnalyzer::query_morphemes`]); `None` for the
/// analyser is the lexical index without CJK analysis.
fn ranks(cjk: Option<&CjkAnalyzer>, pairs: &[(&str, &str)], lang: Option<&str>) -> Vec<usize> {
    let terms = |text: &str| -> Vec<String> { analysis::words(text).map(|w| w.term).collect() };
    let docs: Vec<Vec<String>> = pairs
        .iter()
        .map(|(_, passage)| {
            let morphemes = cjk
                .and_then(|c| c.morphemes(passage, lang).unwrap())
                .unwrap_or_default();
            terms(&format!("{morphemes} {passage}"))
        })
        .collect();
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let mut df: HashMap<&str, f64> = HashMap::new();
    for d in &docs {
        for t in d.iter().map(String::as_str).collect::<HashSet<_>>() {
            *df.entry(t).or_default() += 1.0;
        }
    }
    pairs
        .iter()
        .enumerate()
        .map(|(i, (question, _))| {
            let morphemes = cjk
                .and_then(|c| c.query_morphemes(question).unwrap())
                .unwrap_or_default();
            let mut q = terms(question);
            q.extend(terms(&morphemes));
            let q: HashSet<String> = q.into_iter().collect();
            let score = |d: &Vec<String>| -> f64 {
                q.iter()
                    .map(|t| {
                        let tf = d.iter().filter(|x| *x == t).count() as f64;
                        let df = df.get(t.as_str()).copied().unwrap_or(0.0);
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * d.len() as f64 / avg))
                    })
                    .sum()
            };
            let own = score(&docs[i]);
            if own == 0.0 {
                return docs.len() + 1;
            }
            1 + docs.iter().filter(|d| score(d) > own).count()
        })
        .collect()
}

#[test]
fn questions_find_their_passages_only_after_analysis() {
    for (name, pairs, lang) in [
        ("Japanese", pairs::JAPANESE, Some("ja")),
        ("Chinese", pairs::CHINESE, Some("zh")),
    ] {
        // Unanalysed, no question shares a term with its passage.
        let raw = ranks(None, pairs, lang);
        assert!(raw.iter().all(|&r| r > pairs.len()), "{name}: {raw:?}");
        // Analysed, as documents of their language and of unknown language.
        for lang in [lang, None] {
            let got = ranks(Some(all()), pairs, lang);
            let first = got.iter().filter(|&&r| r == 1).count();
            assert!(
                first * 10 >= pairs.len() * 9 && got.iter().all(|&r| r <= 3),
                "{name} {lang:?}: {got:?}"
            );
        }
    }
}
