//! Vector-side figures: embedding throughput of the real ONNX model,
//! hybrid query latency (query embedding included) at 10k and 100k chunks,
//! and an ingest of the sample corpus split into parse / embed / store.
//!
//! Needs the offline assets (`scripts/fetch-assets.sh`; `KEBAB_ASSETS_DIR`).
//! Run: `cargo bench -p kebab --bench hybrid_search`
//! The large corpora are synthetic: random words in SQLite and random unit
//! vectors in LanceDB (embedding 100k chunks with the model would take
//! hours here); queries are real text embedded by the real model.
//! Prints figures; asserts nothing.

// Build scripts, benches and tests print freely; the rule that output is
// escaped (crates/clippy.toml) is for what the kebab binary shows a person.
#![allow(clippy::disallowed_macros)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use kebab::app::{App, Paths};
use kebab::config::Config;
use kebab::embed::{Embedder, EmbeddingConfig, ModelSpec};
use kebab::indexes::Indexes;
use kebab::search::{Mode, Request, VectorChannel};
use kebab::store::{NewChunk, NewDocument, Store};
use kebab::vector::{VectorPlace, VectorRow, VectorStore};

const WORDS: &[&str] = &[
    "raft",
    "leader",
    "log",
    "bloom",
    "filter",
    "hash",
    "sourdough",
    "starter",
    "oven",
    "espresso",
    "grind",
    "crema",
    "kubernetes",
    "deployment",
    "replica",
    "vacuum",
    "tuple",
    "cache",
    "etag",
    "tcp",
    "window",
    "garden",
    "tomato",
    "marathon",
    "tempo",
    "aperture",
    "shutter",
    "budget",
    "index",
    "fund",
    "rust",
    "borrow",
    "lifetime",
    "wasm",
    "component",
    "plugin",
    "vector",
    "search",
    "ranking",
    "fusion",
];

/// A deterministic pseudo-random generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit_vector(&mut self, dims: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dims)
            .map(|_| (self.next() % 2001) as f32 / 1000.0 - 1.0)
            .collect();
        kebab_core::vecmath::normalise(v)
    }
    fn sentence(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| WORDS[(self.next() % WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn assets() -> PathBuf {
    std::env::var_os("KEBAB_ASSETS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/kebab-assets")
        })
}

fn embedding_config() -> EmbeddingConfig {
    let a = assets();
    EmbeddingConfig {
        model: "all-minilm-l6-v2".into(),
        path: Some(a.join("models/all-minilm-l6-v2").display().to_string()),
        runtime: Some(a.join("onnxruntime").display().to_string()),
        ..Default::default()
    }
}

fn load_embedder(dir: &Path) -> Embedder {
    let config = embedding_config();
    let spec = ModelSpec::resolve(&config, dir, dir)
        .expect("model assets (run scripts/fetch-assets.sh)")
        .expect("model configured");
    let runtimes = kebab::embed::runtime::candidates(config.runtime.as_deref(), dir, dir);
    Embedder::load(spec, &runtimes, kebab::embed::Workload::Many).expect("load model")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn embedding_throughput(embedder: &Embedder, rng: &mut Rng) {
    let texts: Vec<String> = (0..512)
        .map(|_| embedder.passage_text(&rng.sentence(60)))
        .collect();
    embedder.embed_passages(&texts[..32]).unwrap(); // warm-up
    let start = Instant::now();
    embedder.embed_passages(&texts).unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "embedding throughput        {:>8.1} chunks/s  (512 chunks of ~60 words, batch {}, {:.2} s)",
        texts.len() as f64 / secs,
        embedder.spec().batch_size,
        secs
    );
}

/// SQLite + LanceDB with `n` synthetic chunks (100 per document).
fn synthetic_index(dir: &Path, n: usize, dims: usize, rng: &mut Rng) -> (Store, VectorStore) {
    let mut store = Store::open(&dir.join("kebab.sqlite")).unwrap();
    let root = store.add_root("bench", Path::new("/bench"), &[]).unwrap();
    let vectors =
        VectorStore::open(&VectorPlace::Dir(dir.join("lancedb")), "bench@v1", dims).unwrap();
    for d in 0..n / 100 {
        let doc_id = format!("doc{d:06}");
        let chunks: Vec<NewChunk> = (0..100)
            .map(|c| NewChunk {
                chunk_id: format!("{doc_id}-{c:03}"),
                text: rng.sentence(40),
                heading_path: vec![format!("Section {c}")],
                section_label: None,
                spans: vec![kebab::spans::SourceSpan::Line {
                    start: c * 3 + 1,
                    end: c * 3 + 3,
                }],
                token_estimate: 60,
                block_ids: vec![],
            })
            .collect();
        let rows: Vec<VectorRow> = chunks
            .iter()
            .map(|c| VectorRow {
                chunk_id: c.chunk_id.clone(),
                doc_id: doc_id.clone(),
                vector: rng.unit_vector(dims),
            })
            .collect();
        store
            .replace_document(&NewDocument {
                asset_id: format!("asset{d}"),
                checksum: format!("sum{d}"),
                byte_len: 1000,
                media_type: "markdown".into(),
                doc_id: doc_id.clone(),
                root_id: root.root_id,
                workspace_path: format!("notes/{doc_id}.md"),
                source_uri: format!("/bench/notes/{doc_id}.md"),
                title: None,
                lang: None,
                source_type: "markdown".into(),
                trust_level: "primary".into(),
                parser_version: "bench".into(),
                chunker_version: "bench".into(),
                plugin_name: "markdown".into(),
                plugin_version: "1.0.0".into(),
                policy_hash: "p".into(),
                fallback_reason: None,
                metadata: serde_json::json!({}),
                provenance: serde_json::json!([]),
                tags: vec![],
                blocks: vec![],
                chunks,
            })
            .unwrap();
        vectors.add(&rows).unwrap();
    }
    (store, vectors)
}

fn hybrid_latency(embedder: &Embedder, n: usize, rng: &mut Rng) {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let (store, vectors) = synthetic_index(dir.path(), n, embedder.spec().dimensions, rng);
    let built = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let ann = vectors
        .ensure_index(Config::default().search.ann_min_rows, n)
        .unwrap();
    let index_secs = start.elapsed().as_secs_f64();
    let channel = VectorChannel {
        embedder,
        table: &vectors,
        min_score: 0.0,
    };
    let filter = Default::default();
    let queries: Vec<String> = (0..60).map(|_| rng.sentence(4)).collect();
    let mut times = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        let request = Request {
            query: q,
            k: 10,
            mode: Mode::Hybrid,
            filter: &filter,
            snippet_chars: 220,
            fusion: Config::default().search.fusion(),
            candidates: 100,
            cjk: None,
            rerank: None,
        };
        let start = Instant::now();
        let hits = kebab::search::retrieve(&store, Some(channel), &request).unwrap();
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        assert!(!hits.is_empty());
        if i >= 10 {
            times.push(ms); // the first 10 warm caches
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "hybrid query {:>6} chunks   p50 {:>6.1} ms  p95 {:>6.1} ms  ({} queries; {}; load {:.1} s, index {:.1} s)",
        n,
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        times.len(),
        if ann {
            "IVF-HNSW-SQ index"
        } else {
            "flat scan"
        },
        built,
        index_secs
    );
}

fn ingest_split() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.models.embedding = embedding_config();
    let ko_dic = assets().join("ko-dic");
    if ko_dic.join("metadata.json").is_file() {
        config.models.korean.dictionary = Some(ko_dic.display().to_string());
    }
    let paths = Paths {
        config_file: dir.path().join("config.toml"),
        data_dir: dir.path().join("data"),
        cache_dir: dir.path().join("cache"),
    };
    let mut app = App::open(config, paths).unwrap();
    let plugins = app.plugins().unwrap();
    let mut indexes = Indexes::open(&app, true);
    assert!(indexes.vectors.is_some(), "{:?}", indexes.warnings);
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/notes");
    let cancel = AtomicBool::new(false);
    let start = Instant::now();
    let report = kebab::ingest::ingest(
        &mut app,
        &plugins,
        &mut indexes,
        &corpus,
        None,
        &cancel,
        &mut |_| {},
    )
    .unwrap();
    let t = &report.timings;
    println!(
        "ingest samples/notes        {} files, {} chunks in {:.2} s: parse {:.0} ms · store {:.0} ms · Korean {:.0} ms · embed {:.0} ms · vector store {:.0} ms",
        report.counts.new,
        report.counts.chunks_indexed,
        start.elapsed().as_secs_f64(),
        t.parse_ms,
        t.store_ms,
        t.korean_ms,
        t.embed_ms,
        t.vector_store_ms
    );
}

fn main() {
    let scratch = tempfile::tempdir().unwrap();
    let embedder = load_embedder(scratch.path());
    let mut rng = Rng(0x9e3779b97f4a7c15);
    embedding_throughput(&embedder, &mut rng);
    ingest_split();
    // `KEBAB_BENCH_SIZES=10000` runs only the smaller corpus.
    let sizes = std::env::var("KEBAB_BENCH_SIZES").unwrap_or_else(|_| "10000,100000".into());
    for n in sizes
        .split(',')
        .filter_map(|s| s.trim().parse::<usize>().ok())
    {
        hybrid_latency(&embedder, n, &mut rng);
    }
}
