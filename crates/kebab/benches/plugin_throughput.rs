//! Markdown ingest throughput through the WASM plugin vs the same parser
//! crate called natively, per-call overhead of a warm plugin call, and
//! whole-pipeline ingest (walk + WASM + SQLite) throughput.
//!
//! Run: `cargo bench -p kebab --bench plugin_throughput`
//! Prints figures; it asserts nothing (speed is measured, not tested).

// Build scripts, benches and tests print freely; the rule that output is
// escaped (crates/clippy.toml) is for what the kebab binary shows a person.
#![allow(clippy::disallowed_macros)]

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use kebab::app::{App, Paths};
use kebab::config::Config;
use kebab::document::ChunkPolicy;
use kebab::plugin::registry::BUILT_IN;
use kebab::plugin::runtime::{Limits, Runtime};

/// Files in the synthetic corpus.
const FILES: usize = 400;
/// Warm calls timed for the per-call overhead.
const CALLS: usize = 2000;

/// A deterministic markdown note of a few KB with headings, lists, code and
/// a table.
fn note(i: usize) -> String {
    let mut s = format!(
        "---\ntitle: Note {i}\ntags: [bench, n{}]\n---\n# Note {i}\n\n",
        i % 7
    );
    for section in 0..6 {
        s.push_str(&format!("## Section {section} of note {i}\n\n"));
        for p in 0..3 {
            s.push_str(&format!(
                "Paragraph {p} talks about topic {} with words like raft, bloom, sourdough and \
                 espresso so that the text looks like prose. It wraps over a second line to be \
                 realistic about line spans in note {i}.\n\n",
                (i * 31 + section * 7 + p) % 97
            ));
        }
        s.push_str("- first item\n- second item with `code`\n- third item\n\n");
        if section % 2 == 0 {
            s.push_str("```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\n");
        } else {
            s.push_str("| key | value |\n|-----|-------|\n| a | 1 |\n| b | 2 |\n\n");
        }
    }
    s
}

fn figures(label: &str, bytes: usize, files: usize, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    println!(
        "{label:<28} {:>8.2} MB/s {:>9.0} files/s  ({files} files, {:.2} MB, {:.3} s)",
        bytes as f64 / 1e6 / secs,
        files as f64 / secs,
        bytes as f64 / 1e6,
        secs
    );
    secs
}

fn main() {
    let notes: Vec<String> = (0..FILES).map(note).collect();
    let bytes: usize = notes.iter().map(String::len).sum();
    let policy = ChunkPolicy {
        target_tokens: 500,
        overlap_tokens: 80,
    };
    println!(
        "corpus: {FILES} synthetic notes, {:.2} MB",
        bytes as f64 / 1e6
    );

    // Native: the plugin crate called directly.
    let native_policy = kebab_plugin_sdk::ChunkPolicy {
        target_tokens: policy.target_tokens,
        overlap_tokens: policy.overlap_tokens,
    };
    let start = Instant::now();
    let mut native_chunks = 0;
    for n in &notes {
        let doc = kebab_plugin_markdown::parser::parse(n.as_bytes()).expect("native parse");
        native_chunks += kebab_plugin_markdown::chunker::chunk(&doc, &native_policy).len();
    }
    let native = figures("native parse+chunk", bytes, FILES, start.elapsed());

    // WASM: the embedded component through the sandboxed runtime.
    let runtime = Runtime::new(None).expect("runtime");
    let markdown = BUILT_IN
        .iter()
        .find(|(n, _)| *n == "markdown")
        .expect("markdown")
        .1;
    let text = BUILT_IN.iter().find(|(n, _)| *n == "text").expect("text").1;
    let compile = Instant::now();
    let md = runtime.load(markdown).expect("load markdown");
    println!(
        "markdown component compile+load: {:.0} ms",
        compile.elapsed().as_secs_f64() * 1e3
    );
    let limits = Limits::default();
    let start = Instant::now();
    let mut wasm_chunks = 0;
    for (i, n) in notes.iter().enumerate() {
        let out = runtime
            .parse_and_chunk(
                &md,
                &limits,
                &Default::default(),
                &format!("n{i}.md"),
                n.as_bytes(),
                policy,
            )
            .expect("wasm parse");
        wasm_chunks += out.chunks.len();
    }
    let wasm = figures("wasm parse+chunk", bytes, FILES, start.elapsed());
    assert_eq!(
        native_chunks, wasm_chunks,
        "both paths must do the same work"
    );
    println!("wasm/native time ratio: {:.2}x", wasm / native);

    // Per-call overhead: a one-line file through the text plugin.
    let tp = runtime.load(text).expect("load text");
    let tiny = b"one line\n";
    for _ in 0..100 {
        runtime
            .parse_and_chunk(&tp, &limits, &Default::default(), "t.txt", tiny, policy)
            .expect("warm-up");
    }
    let start = Instant::now();
    for _ in 0..CALLS {
        runtime
            .parse_and_chunk(&tp, &limits, &Default::default(), "t.txt", tiny, policy)
            .expect("tiny call");
    }
    let per_call = start.elapsed() / CALLS as u32;
    let start = Instant::now();
    for _ in 0..CALLS {
        let doc = kebab_plugin_text::parse("t.txt", tiny).expect("native tiny");
        std::hint::black_box(kebab_plugin_text::chunk(&doc));
    }
    let native_call = start.elapsed() / CALLS as u32;
    println!(
        "warm call (fresh instance + parse + chunk-document, 1-line file): {:.1} µs (native: {:.2} µs)",
        per_call.as_secs_f64() * 1e6,
        native_call.as_secs_f64() * 1e6
    );

    where_wasm_time_goes(&runtime, &md, &tp, &limits, policy);
    code_throughput(&runtime, &limits, policy);

    // Whole pipeline: walk + WASM + validation + SQLite, as `kebab ingest`.
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus");
    for (i, n) in notes.iter().enumerate() {
        let sub = corpus.join(format!("d{}", i % 10));
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(sub.join(format!("note{i}.md")), n).expect("write");
    }
    let paths = Paths {
        config_file: dir.path().join("config.toml"),
        data_dir: dir.path().join("data"),
        cache_dir: dir.path().join("cache"),
    };
    let mut app = App::open(Config::default(), paths).expect("open");
    let plugins = app.plugins().expect("plugins");
    let cancel = AtomicBool::new(false);
    let start = Instant::now();
    let report = kebab::ingest::ingest(
        &mut app,
        &plugins,
        &mut Default::default(),
        &corpus,
        None,
        &cancel,
        &mut |_| {},
    )
    .expect("ingest");
    figures(
        "kebab ingest (2 workers)",
        bytes,
        report.counts.new,
        start.elapsed(),
    );
    let start = Instant::now();
    let again = kebab::ingest::ingest(
        &mut app,
        &plugins,
        &mut Default::default(),
        &corpus,
        None,
        &cancel,
        &mut |_| {},
    )
    .expect("re-ingest");
    println!(
        "re-ingest, all unchanged: {:.0} ms for {} files",
        start.elapsed().as_secs_f64() * 1e3,
        again.skipped_unchanged
    );
}

/// Time per file of `run` over `reps` calls, in µs.
fn micros_per_call(reps: usize, mut run: impl FnMut()) -> f64 {
    run();
    let start = Instant::now();
    for _ in 0..reps {
        run();
    }
    start.elapsed().as_secs_f64() * 1e6 / reps as f64
}

/// Where the WASM markdown time goes: the same documents at 1× and 8× the
/// size of a note, natively and through the sandbox, split into a fixed
/// cost per file (instantiation, calls) and a cost per KB (the parser's
/// code, the copies of the text and the returned blocks/chunks across the
/// boundary); the text plugin on the same documents bounds the boundary
/// share (it does almost no work per byte).
fn where_wasm_time_goes(
    runtime: &Runtime,
    md: &kebab::plugin::runtime::LoadedPlugin,
    tp: &kebab::plugin::runtime::LoadedPlugin,
    limits: &Limits,
    policy: ChunkPolicy,
) {
    let native_policy = kebab_plugin_sdk::ChunkPolicy {
        target_tokens: policy.target_tokens,
        overlap_tokens: policy.overlap_tokens,
    };
    let mut rows = Vec::new();
    for copies in [1usize, 8] {
        let doc: String = (0..copies).map(note).collect();
        let kb = doc.len() as f64 / 1024.0;
        let reps = 400 / copies;
        let native = micros_per_call(reps, || {
            let d = kebab_plugin_markdown::parser::parse(doc.as_bytes()).expect("native");
            std::hint::black_box(kebab_plugin_markdown::chunker::chunk(&d, &native_policy));
        });
        let wasm = |plugin: &kebab::plugin::runtime::LoadedPlugin, path: &str| {
            micros_per_call(reps, || {
                let out = runtime
                    .parse_and_chunk(
                        plugin,
                        limits,
                        &Default::default(),
                        path,
                        doc.as_bytes(),
                        policy,
                    )
                    .expect("wasm");
                std::hint::black_box(out);
            })
        };
        let md_us = wasm(md, "n.md");
        let text_us = wasm(tp, "n.txt");
        println!(
            "{copies} note(s), {kb:.1} KB: native markdown {native:.0} µs · WASM markdown {md_us:.0} µs · WASM text {text_us:.0} µs"
        );
        rows.push((kb, native, md_us, text_us));
    }
    let (small, large) = (rows[0], rows[1]);
    let slope = |a: f64, b: f64| (b - a) / (large.0 - small.0);
    let fixed = |a: f64, b: f64| a - slope(a, b) * small.0;
    println!(
        "per KB: native {:.1} µs · WASM markdown {:.1} µs · WASM text {:.1} µs; fixed per file: native {:.0} µs · WASM markdown {:.0} µs · WASM text {:.0} µs",
        slope(small.1, large.1),
        slope(small.2, large.2),
        slope(small.3, large.3),
        fixed(small.1, large.1),
        fixed(small.2, large.2),
        fixed(small.3, large.3),
    );
}

/// A deterministic Rust or Python source file of a few KB.
fn source(i: usize) -> (String, String) {
    if i.is_multiple_of(2) {
        let mut s = format!("//! Module {i}.\nuse std::collections::HashMap;\n\n");
        for f in 0..8 {
            s.push_str(&format!(
                "/// Function {f}.\npub fn func_{i}_{f}(input: &[u32]) -> HashMap<u32, usize> {{\n    let mut m = HashMap::new();\n    for v in input {{\n        *m.entry(*v).or_insert(0) += 1;\n    }}\n    m\n}}\n\n"
            ));
        }
        s.push_str(&format!("pub struct S{i} {{\n    v: u32,\n}}\n\nimpl S{i} {{\n    pub fn get(&self) -> u32 {{\n        self.v\n    }}\n}}\n"));
        (format!("src/m{i}.rs"), s)
    } else {
        let mut s = format!("\"\"\"Module {i}.\"\"\"\nimport os\n\n\n");
        for f in 0..8 {
            s.push_str(&format!("def func_{i}_{f}(path):\n    \"\"\"Join.\"\"\"\n    return os.path.join(path, '{f}')\n\n\n"));
        }
        s.push_str(&format!(
            "class C{i}:\n    def method(self):\n        return {i}\n"
        ));
        (format!("pkg/m{i}.py"), s)
    }
}

/// The code plugin (tree-sitter) natively vs as a component.
fn code_throughput(runtime: &Runtime, limits: &Limits, policy: ChunkPolicy) {
    let files: Vec<(String, String)> = (0..FILES).map(source).collect();
    let bytes: usize = files.iter().map(|(_, s)| s.len()).sum();
    println!(
        "code corpus: {FILES} generated Rust/Python files, {:.2} MB",
        bytes as f64 / 1e6
    );
    let start = Instant::now();
    let mut native_chunks = 0;
    for (path, text) in &files {
        let doc =
            kebab_plugin_code::items::parse(path, text.as_bytes()).expect("native code parse");
        native_chunks += kebab_plugin_code::items::chunk(&doc).len();
    }
    let native = figures("native code parse+chunk", bytes, FILES, start.elapsed());
    let code = BUILT_IN.iter().find(|(n, _)| *n == "code").expect("code").1;
    let compile = Instant::now();
    let plugin = runtime.load(code).expect("load code");
    println!(
        "code component compile+load: {:.0} ms",
        compile.elapsed().as_secs_f64() * 1e3
    );
    let start = Instant::now();
    let mut wasm_chunks = 0;
    for (path, text) in &files {
        let out = runtime
            .parse_and_chunk(
                &plugin,
                limits,
                &Default::default(),
                path,
                text.as_bytes(),
                policy,
            )
            .expect("wasm code parse");
        wasm_chunks += out.chunks.len();
    }
    let wasm = figures("wasm code parse+chunk", bytes, FILES, start.elapsed());
    assert_eq!(
        native_chunks, wasm_chunks,
        "both paths must do the same work"
    );
    println!("code wasm/native time ratio: {:.2}x", wasm / native);
}
