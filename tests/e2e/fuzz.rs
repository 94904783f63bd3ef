//! Seeded fuzzing of every built-in plugin through the real host: at least
//! 1 000 mutated inputs per plugin — markdown, code in each language, YAML,
//! PDF, text — ingested by the `kebab` binary in one run. The host must not
//! panic, the run must finish, and every input must end as one report
//! item; a plugin failing on an input is that file's error or fallback.
//!
//! The generator is a fixed-seed xorshift, so a failure reproduces. Inputs
//! that ever broke the host are kept in `tests/fixtures/fuzz/` and ingested
//! with every run; on failure the whole generated corpus is left in the
//! test's temp dir to pick the culprit from.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::pdf::{make_pdf, paragraph, save};
use crate::support::{Kb, sample_corpus};

/// Mutated inputs per plugin, and per language for the code plugin.
const PER_TARGET: usize = 1000;

/// Deterministic xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens that matter to some parser: structure, quoting, nesting, odd
/// bytes.
const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\n\n",
    b"\r\n",
    b"\t",
    b"#",
    b"## ",
    b"```",
    b"~~~",
    b"---\n",
    b"...\n",
    b"- ",
    b"* ",
    b"> ",
    b"|",
    b"[",
    b"]",
    b"(",
    b")",
    b"{",
    b"}",
    b"<",
    b">",
    b"\"",
    b"'",
    b"`",
    b"\\",
    b"/*",
    b"*/",
    b"//",
    b"fn ",
    b"def ",
    b"class ",
    b"impl ",
    b"mod ",
    b"func ",
    b"function ",
    b"=>",
    b":",
    b": ",
    b"&anchor ",
    b"*anchor",
    b"!!binary ",
    b"%YAML 1.2\n",
    b"{{",
    b"obj",
    b"endobj",
    b"stream\n",
    b"endstream",
    b"xref",
    b"trailer",
    b"%%EOF",
    "한국어 ".as_bytes(),
    "\u{feff}".as_bytes(),
    "\u{202e}".as_bytes(),
    b"\xff",
    b"\xc3",
    b"\x1b[2J",
];

/// One mutation of `input`, using `other` for splices.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(8) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 | 2 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                let burst = if rng.below(10) == 0 { 200 } else { 3 };
                let times = 1 + rng.below(burst);
                for _ in 0..times {
                    out.splice(at..at, token.iter().copied());
                }
            }
            3 => {
                let end = (at + rng.below(64)).min(out.len());
                out.drain(at..end);
            }
            4 if !out.is_empty() => {
                let from = rng.below(out.len());
                let end = (from + rng.below(256)).min(out.len());
                let piece = out[from..end].to_vec();
                out.splice(at..at, piece);
            }
            5 => out.truncate(at),
            6 if !other.is_empty() => {
                let from = rng.below(other.len());
                let end = (from + rng.below(512)).min(other.len());
                out.splice(at..at, other[from..end].iter().copied());
            }
            _ => {
                let n = rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                out.splice(at..at, bytes);
            }
        }
    }
    out.truncate(64 << 10);
    out
}

/// Seed files by target: `(extension, seeds)`.
fn seeds() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let read_all = |dir: &Path, ext: &str| -> Vec<Vec<u8>> {
        let mut files = Vec::new();
        files_with(dir, ext, &mut files);
        files.sort();
        files.iter().map(|p| std::fs::read(p).unwrap()).collect()
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let code = root.join("plugins/code/tests/fixtures");
    let mut pdfs = Vec::new();
    for text in [
        "Pages cite their numbers.\nA second line of prose.",
        "Two\ncolumns\nof words that wrap.",
    ] {
        pdfs.push(save(&mut make_pdf(
            &[paragraph(72, 720, text), paragraph(72, 700, "page two")],
            Some("Seed"),
        )));
    }
    vec![
        ("md", read_all(&sample_corpus(), "md")),
        ("txt", read_all(&sample_corpus(), "txt")),
        (
            "log",
            vec![b"2026-01-01 INFO start\n\n2026-01-01 WARN slow\n".to_vec()],
        ),
        ("yaml", read_all(&root.join("tests/fixtures/k8s"), "yaml")),
        ("pdf", pdfs),
        ("rs", read_all(&root.join("crates/plugin-host/src"), "rs")),
        ("py", read_all(&root.join("sdk/examples/csv-python"), "py")),
        ("go", read_all(&code, "go")),
        ("js", read_all(&code, "js")),
        ("ts", read_all(&code, "ts")),
        ("tsx", read_all(&code, "ts")),
        ("java", read_all(&code, "java")),
        ("kt", read_all(&code, "kt")),
        ("c", read_all(&code, "c")),
        ("cpp", read_all(&code, "cpp")),
    ]
}

/// Files under `dir` (recursively) ending in `.ext`.
fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_with(&path, ext, out);
        } else if path.extension().is_some_and(|x| x == ext) {
            out.push(path);
        }
    }
}

#[test]
fn mutated_inputs_for_every_plugin_never_break_the_host() {
    let kb = Kb::with_config(
        "[models.embedding]\nmodel = \"\"\n[plugins]\ntimeout_ms = 3000\n[indexing]\nmax_parallel_extractors = 2\n",
    );
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let mut rng = Rng(0x6b65_6261_625f_6675);
    let mut written = HashSet::new();
    for (ext, seeds) in seeds() {
        assert!(!seeds.is_empty(), "no seeds for .{ext}");
        let dir = corpus.join(ext);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..PER_TARGET {
            let seed = &seeds[rng.below(seeds.len())];
            let other = &seeds[rng.below(seeds.len())];
            let input = mutate(&mut rng, seed, other);
            let name = format!("{ext}/m{i:04}.{ext}");
            std::fs::write(corpus.join(&name), input).unwrap();
            written.insert(name);
        }
    }
    let regressions = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/fuzz");
    for entry in std::fs::read_dir(&regressions).unwrap().flatten() {
        if entry.file_name() == "README.md" {
            continue;
        }
        let name = format!("regressions/{}", entry.file_name().to_string_lossy());
        std::fs::create_dir_all(corpus.join("regressions")).unwrap();
        std::fs::copy(entry.path(), corpus.join(&name)).unwrap();
        written.insert(name);
    }

    let out = kb.run(&["--json", "ingest", corpus.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "host panic: {stderr}");
    assert_eq!(out.status.code(), Some(0), "ingest died: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value =
        serde_json::from_str(stdout.lines().last().expect("report")).unwrap();
    let items = report["items"].as_array().unwrap();
    let reported: HashSet<String> = items
        .iter()
        .map(|i| i["doc_path"].as_str().unwrap().to_string())
        .collect();
    let missing: Vec<&String> = written.difference(&reported).collect();
    assert!(
        missing.is_empty(),
        "inputs without a report item: {missing:?}"
    );
    for item in items {
        match item["kind"].as_str().unwrap() {
            "new" => assert!(item["chunk_count"].as_u64().unwrap() > 0, "{item}"),
            "error" => assert!(!item["error"].as_str().unwrap_or("").is_empty(), "{item}"),
            "skipped" => assert!(item["reason"].is_string(), "{item}"),
            other => panic!("unexpected item kind {other}: {item}"),
        }
    }
    // Per plugin, most mutated inputs are still indexed (by the plugin or
    // its text fallback): the run really exercised the parsers.
    let new = items.iter().filter(|i| i["kind"] == "new").count();
    let count = |k: &str| items.iter().filter(|i| i["kind"] == k).count();
    let fallbacks = items.iter().filter(|i| i["fallback"].is_string()).count();
    eprintln!(
        "fuzz: {} inputs: {new} indexed ({fallbacks} by the text fallback), {} skipped, {} errors",
        written.len(),
        count("skipped"),
        count("error")
    );
    assert!(
        new > written.len() / 2,
        "{new} of {} indexed",
        written.len()
    );
}
