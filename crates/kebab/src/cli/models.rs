//! `kebab models`: renders [`kebab::api::models`] (the embedding catalog,
//! downloads, the Korean dictionary import).

use super::prelude::*;
use kebab::api::models::{DicLanguage, ModelPullReport, ModelsReport};

/// `kebab models …`.
pub(crate) fn models_cmd(session: &Session, what: ModelsCmd, json: bool) -> Result<u8> {
    match what {
        ModelsCmd::List => models_list(session, json),
        ModelsCmd::Pull { name, endpoint } => models_pull(session, &name, endpoint, json),
        ModelsCmd::ImportKoDic { source, out } => {
            models_import_dic(session, DicLanguage::Korean, &source, out, json)
        }
        ModelsCmd::ImportJaDic { source, out } => {
            models_import_dic(session, DicLanguage::Japanese, &source, out, json)
        }
    }
}

/// `kebab models list`: catalog models and whether each is installed.
fn models_list(session: &Session, json: bool) -> Result<u8> {
    render(json, &session.models_list(), print_models)
}

fn print_models(report: &ModelsReport) {
    for m in &report.models {
        outln!(
            "{} {:<24} {:>5}d  {:<48} {}",
            if m.configured { "*" } else { " " },
            m.name,
            m.dimensions,
            m.languages,
            m.installed
                .as_ref()
                .map_or("not installed".to_string(), |d| d.display().to_string())
        );
    }
    outln!("* = [models.embedding] model; `kebab models pull NAME` downloads one");
}

/// `kebab models pull NAME`: download into the user cache's `models/`,
/// with a progress bar on a terminal.
fn models_pull(session: &Session, name: &str, endpoint: Option<String>, json: bool) -> Result<u8> {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if json || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{msg:20} {bar:30} {bytes}/{total_bytes} {bytes_per_sec}")
            .expect("valid template"),
    );
    let pulled = session.model_pull(name, endpoint.as_deref(), |file, done, total| {
        bar.set_message(file.to_string());
        if let Some(t) = total {
            bar.set_length(t);
        }
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    render(json, &pulled, print_pulled)
}

fn print_pulled(pulled: &ModelPullReport) {
    for f in &pulled.files {
        outln!(
            "{}  {} bytes  sha256 {}  (verified: {})",
            f.name,
            f.bytes,
            f.sha256,
            f.verified_by
        );
    }
    outln!("{} installed in {}", pulled.name, pulled.dir.display());
    if pulled.needs_config {
        outln!(
            "hint: set [models.embedding] model = \"{}\" to use it",
            pulled.name
        );
    }
}

/// `kebab models import-ko-dic DIR` / `import-ja-dic DIR`: build a
/// dictionary from a compiled MeCab dictionary.
fn models_import_dic(
    session: &Session,
    language: DicLanguage,
    source: &std::path::Path,
    out: Option<PathBuf>,
    json: bool,
) -> Result<u8> {
    if !json {
        errln!(
            "building the {language:?} dictionary from {} (about a minute)…",
            source.display()
        );
    }
    render(
        json,
        &session.import_dictionary(language, source, out)?,
        |built| {
            outln!(
                "{} entries → {} ({:.0} s)\nsample: {} → {}",
                built.entries,
                built.dir.display(),
                built.seconds,
                language.sample(),
                built.sample
            )
        },
    )
}
