//! Plugin platform figures: start-up with a cold vs warm compiled-code cache,
//! and re-index time after upgrading one plugin that owns 10 % of a corpus
//! vs a full re-index.
//!
//! Run: `cargo bench -p kebab --bench plugin_platform`
//! (with `KEBAB_EXAMPLE_PLUGINS=<dir>` holding csv.wasm and ipynb.wasm from
//! `scripts/build-example-plugins.sh`, those are installed too).

// Build scripts, benches and tests print freely; the rule that output is
// escaped (crates/clippy.toml) is for what the kebab binary shows a person.
#![allow(clippy::disallowed_macros)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use kebab::app::{App, Paths};
use kebab::config::Config;
use kebab::plugin::install;
use kebab::plugin::runtime::Runtime;

const FILES: usize = 1000;

fn open(dir: &Path, config: Config) -> App {
    let paths = Paths {
        config_file: dir.join("config.toml"),
        data_dir: dir.join("data"),
        cache_dir: dir.join("cache"),
    };
    App::open(config, paths).expect("open")
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = open(dir.path(), Config::default());
    // Installed copies of the pdf and yaml components override the built-ins.
    let read = |path: PathBuf| {
        let bytes = std::fs::read(&path).expect("component");
        (path.display().to_string(), bytes)
    };
    let built_in = |name: &str| {
        let (_, bytes) = kebab::plugin::registry::BUILT_IN
            .iter()
            .find(|(n, _)| *n == name)
            .expect("a built-in plugin");
        (format!("{name}.wasm"), bytes.to_vec())
    };
    let mut components = vec![
        read(PathBuf::from(kebab_test_artifacts::HOSTILE_WASM)),
        read(PathBuf::from(kebab_test_artifacts::MARKDOWN_NEXT_WASM)),
        built_in("pdf"),
        built_in("yaml"),
    ];
    if let Some(examples) = std::env::var_os("KEBAB_EXAMPLE_PLUGINS") {
        components.push(read(Path::new(&examples).join("csv.wasm")));
        components.push(read(Path::new(&examples).join("ipynb.wasm")));
    }
    // Install without touching the cache the measurement starts from.
    let installer = Runtime::new(None).expect("runtime");
    for (source, bytes) in &components {
        let (current, _) = kebab::plugin::registry::Registry::load(
            &installer,
            &app.paths.data_dir,
            &app.config.plugins,
            &mut || {},
        )
        .expect("registry");
        install::install(
            &installer,
            &current,
            &app.paths.data_dir,
            source,
            bytes,
            install::InstallOptions {
                replace_builtin: true,
                ..Default::default()
            },
        )
        .expect("install");
    }
    let start = Instant::now();
    let plugins = app.plugins().expect("cold load");
    let cold = start.elapsed();
    let total = plugins.registry.plugins().len();
    drop(plugins);
    let start = Instant::now();
    let plugins = app.plugins().expect("warm load");
    let warm = start.elapsed();
    println!(
        "start-up, {total} plugins ({} installed): cold cache {:.0} ms, warm cache {:.1} ms",
        components.len(),
        cold.as_secs_f64() * 1e3,
        warm.as_secs_f64() * 1e3
    );
    drop(plugins);

    // Re-index after an upgrade: 10 % markdown, 90 % text.
    let corpus_dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus_dir.path();
    for i in 0..FILES {
        let body = format!(
            "# Note {i}\n\nSome words about topic {} and more.\n\nA second paragraph {i}.\n",
            i % 37
        );
        let name = if i % 10 == 0 {
            format!("n{i}.md")
        } else {
            format!("n{i}.txt")
        };
        std::fs::write(corpus.join(name), body).expect("write");
    }
    let fresh = tempfile::tempdir().expect("tempdir");
    let mut app = open(fresh.path(), Config::default());
    let cancel = AtomicBool::new(false);
    let plugins = app.plugins().expect("plugins");
    let start = Instant::now();
    let first = kebab::ingest::ingest(
        &mut app,
        &plugins,
        &mut Default::default(),
        corpus,
        None,
        &cancel,
        &mut |_| {},
    )
    .expect("ingest");
    let full = start.elapsed();
    drop(plugins);
    let next = &components[1].1;
    let (current, _) = kebab::plugin::registry::Registry::load(
        &installer,
        &app.paths.data_dir,
        &app.config.plugins,
        &mut || {},
    )
    .expect("registry");
    install::install(
        &installer,
        &current,
        &app.paths.data_dir,
        "markdown-next",
        next,
        install::InstallOptions {
            replace_builtin: true,
            ..Default::default()
        },
    )
    .expect("upgrade");
    let plugins = app.plugins().expect("plugins");
    let start = Instant::now();
    let upgrade = kebab::ingest::ingest(
        &mut app,
        &plugins,
        &mut Default::default(),
        corpus,
        None,
        &cancel,
        &mut |_| {},
    )
    .expect("re-ingest");
    let partial = start.elapsed();
    drop(plugins);
    let mut changed = Config::default();
    changed.chunking.target_tokens = 400;
    let mut app = open(fresh.path(), changed);
    let plugins = app.plugins().expect("plugins");
    let start = Instant::now();
    let everything = kebab::ingest::ingest(
        &mut app,
        &plugins,
        &mut Default::default(),
        corpus,
        None,
        &cancel,
        &mut |_| {},
    )
    .expect("policy change");
    let all = start.elapsed();
    println!(
        "corpus {FILES} files: first ingest {} new in {:.0} ms",
        first.counts.new,
        full.as_secs_f64() * 1e3
    );
    println!(
        "after upgrading markdown (10 %): {} re-indexed, {} unchanged, {:.0} ms",
        upgrade.counts.reindexed,
        upgrade.skipped_unchanged,
        partial.as_secs_f64() * 1e3
    );
    println!(
        "full re-index (chunk policy changed): {} re-indexed in {:.0} ms ({:.1}x the upgrade)",
        everything.counts.reindexed,
        all.as_secs_f64() * 1e3,
        all.as_secs_f64() / partial.as_secs_f64()
    );
}
