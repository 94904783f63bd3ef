//! `doctor`: health checks of the configuration, the index (and its
//! full-text table), the plugins, the search models and the model server
//! (`doctor.v1`).

use serde::Serialize;

use super::{ApiError, Session};
use crate::app::App;
use crate::llm::{LlmClient, Provider};

/// One `doctor.v1` check.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `doctor.v1`: every check, and whether all passed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DoctorReport {
    pub schema_version: &'static str,
    pub ok: bool,
    pub checks: Vec<Check>,
}

type CheckResult = Result<String, (String, String)>;

impl Session {
    /// `doctor` asked by a caller of `kebab serve`: the report for the
    /// server's operator; `forbidden` for a `[[serve.users]]` user, since it
    /// names every root, its directory and the model server.
    pub fn doctor_for(&self, scope: &super::Scope) -> Result<DoctorReport, ApiError> {
        match scope.user_name() {
            Some(user) => Err(ApiError::OperatorOnly {
                call: "doctor",
                user: user.to_string(),
            }),
            None => self.doctor(None),
        }
    }

    /// `kebab doctor`: run every check (a failing one never stops the
    /// others). `config_error` is why the config file did not load (the
    /// session then runs on defaults).
    pub fn doctor(
        &self,
        config_error: Option<&crate::config::ConfigError>,
    ) -> Result<DoctorReport, ApiError> {
        let paths = &self.paths;
        let mut checks = Vec::new();
        let mut check = |name, result: CheckResult| {
            checks.push(match result {
                Ok(detail) => Check {
                    name,
                    ok: true,
                    detail,
                    hint: None,
                },
                Err((detail, hint)) => Check {
                    name,
                    ok: false,
                    detail,
                    hint: Some(hint),
                },
            })
        };
        check("config_loaded", self.config_check(config_error));
        check("data_dir_writable", data_dir_check(&paths.data_dir));
        match self.app() {
            Ok(app) => {
                for (name, result) in index_checks(app) {
                    check(name, result);
                }
            }
            Err(e) => check(
                "sqlite_open",
                Err((
                    e.to_string(),
                    e.hint()
                        .unwrap_or_else(|| "pass --data-dir DIR to a writable place".into()),
                )),
            ),
        }
        for (name, result) in llm_checks(&self.config.models.llm)? {
            check(name, result);
        }
        let ok = checks.iter().all(|c| c.ok);
        Ok(DoctorReport {
            schema_version: "doctor.v1",
            ok,
            checks,
        })
    }
}

impl Session {
    /// The config file: loaded, absent (defaults), or why it did not load.
    fn config_check(&self, config_error: Option<&crate::config::ConfigError>) -> CheckResult {
        let file = &self.paths.config_file;
        match config_error {
            Some(e) => Err((
                format!("{e} (the checks below ran on defaults)"),
                e.hint().into(),
            )),
            None if !file.exists() => Ok(format!("{} (absent: defaults in use)", file.display())),
            None if self.config.warnings.is_empty() => Ok(file.display().to_string()),
            None => Ok(format!(
                "{} ({})",
                file.display(),
                self.config.warnings.join("; ")
            )),
        }
    }
}

/// The data directory: created if missing, and a probe file written and
/// removed in it.
fn data_dir_check(data_dir: &std::path::Path) -> CheckResult {
    let probe = data_dir.join(".kebab-doctor-probe");
    std::fs::create_dir_all(data_dir)
        .and_then(|_| std::fs::write(&probe, b"ok"))
        .and_then(|_| std::fs::remove_file(&probe))
        .map(|_| data_dir.display().to_string())
        .map_err(|e| {
            (
                format!("{}: {e}", data_dir.display()),
                "pass --data-dir DIR to a writable place".into(),
            )
        })
}

/// The SQLite index, the plugins, and the search models.
fn index_checks(app: &App) -> Vec<(&'static str, CheckResult)> {
    let paths = &app.paths;
    let mut out = vec![
        (
            "sqlite_open",
            app.store
                .schema_version()
                .and_then(|v| app.store.counts().map(|(docs, chunks)| (v, docs, chunks)))
                .map(|(v, docs, chunks)| {
                    format!(
                        "{} (schema v{v}, {docs} documents, {chunks} chunks{})",
                        crate::app::index_place(&app.config, paths),
                        match app.store.is_read_only() {
                            true => "; read-only: search works, ingest needs write access",
                            false => "",
                        }
                    )
                })
                .map_err(|e| {
                    let e = ApiError::from(e);
                    let hint = e
                        .hint()
                        .unwrap_or_else(|| "move the file aside and re-ingest".into());
                    (e.to_string(), hint)
                }),
        ),
        (
            "plugins_loaded",
            match app.plugins() {
                Ok(p) if p.warnings.is_empty() => Ok(p
                    .registry
                    .plugins()
                    .iter()
                    .map(|r| format!("{} {}", r.name(), r.plugin.version))
                    .collect::<Vec<_>>()
                    .join(", ")),
                Ok(p) => Err((
                    p.warnings.join("; "),
                    "reinstall or remove the plugin named above".into(),
                )),
                Err(e) => Err((e.to_string(), "reinstall kebab".into())),
            },
        ),
        ("roots_fresh", roots_check(app)),
    ];
    if let Some(objects) = &app.config.storage.objects {
        out.push(("object_storage", object_storage_check(app, objects)));
    }
    if out[0].1.is_ok() {
        // PostgreSQL has no full-text table: the lexical index answers.
        let full_text = app.store.has_full_text_table();
        if full_text {
            out.insert(1, ("full_text_index", full_text_check(app)));
        }
        out.insert(
            1 + usize::from(full_text),
            ("lexical_index", lexical_check(app)),
        );
    }
    out.extend(search_index_checks(app));
    out
}

/// `[storage] objects`: reachable with the `AWS_*` settings, and honouring
/// conditional writes (an ingest refuses to write to a store that does not).
fn object_storage_check(app: &App, objects: &str) -> CheckResult {
    app.vector_writer_place()
        .map(|_| format!("{objects} (reachable; conditional writes honoured)"))
        .map_err(|e| {
            let e = ApiError::from(e);
            let hint = e
                .hint()
                .unwrap_or_else(|| "`kebab doctor` checks the store".into());
            (e.to_string(), hint)
        })
}

/// How long a root neither watched nor synced stays healthy.
const STALE_AFTER: time::Duration = time::Duration::days(7);

/// Every root's directory exists, and each is watched, was synced within
/// [`STALE_AFTER`], or was only ever ingested in part.
fn roots_check(app: &App) -> CheckResult {
    let roots = app
        .store
        .roots()
        .map_err(|e| (e.to_string(), "`kebab doctor` checks the index".to_string()))?;
    let now = time::OffsetDateTime::now_utc();
    let mut fine = Vec::new();
    let mut stale = Vec::new();
    for root in &roots {
        let f = super::roots::freshness(root);
        let synced = f.synced_at.as_deref().and_then(|t| {
            time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
        });
        if !root.path.is_dir() {
            stale.push(format!("{} ({} is gone)", root.name, root.path.display()));
        } else if f.watched {
            fine.push(format!("{} (watched)", root.name));
        } else {
            match synced {
                Some(at) if now - at < STALE_AFTER => fine.push(format!(
                    "{} (synced {} h ago)",
                    root.name,
                    (now - at).whole_hours()
                )),
                Some(at) => stale.push(format!(
                    "{} (last synced {} days ago)",
                    root.name,
                    (now - at).whole_days()
                )),
                // Only files or folders inside it were ingested.
                None => fine.push(format!("{} (partly ingested)", root.name)),
            }
        }
    }
    if stale.is_empty() {
        Ok(if fine.is_empty() {
            "no roots yet".to_string()
        } else {
            fine.join(", ")
        })
    } else {
        Err((
            format!("stale: {}", stale.join(", ")),
            "`kebab ingest <dir>` brings a root up to date, `kebab watch` keeps every root \
             fresh; `kebab roots remove NAME` drops one that is gone for good"
                .to_string(),
        ))
    }
}

/// The full-text index holds one row per chunk and its triggers are in
/// place: the rule ingest rebuilds it by ([`kebab_store::Store::full_text_damage`]).
fn full_text_check(app: &App) -> CheckResult {
    match app.store.full_text_damage() {
        Ok(None) => Ok("chunks_fts: one row per chunk, kept in step by its triggers".into()),
        Ok(Some(damage)) => Err((
            kebab_search::search::SearchError::FullTextDamaged(damage).to_string(),
            kebab_search::search::FULL_TEXT_HINT.into(),
        )),
        Err(e) => {
            let e = ApiError::from(e);
            let hint = e
                .hint()
                .unwrap_or_else(|| "move the file aside and re-ingest".into());
            Err((e.to_string(), hint))
        }
    }
}

/// The lexical index answers searches, or says why search answers from
/// the full-text table meanwhile. Only an index that cannot be opened or is
/// out of step is a failure: one not built yet, or behind a writer mid-run
/// (search then ranks the changed chunks beside it), is the normal state
/// of an index being written.
fn lexical_check(app: &App) -> CheckResult {
    use kebab_store::LexicalState;
    let fallback = "search answers from chunks_fts meanwhile";
    match app.store.lexical_state() {
        Ok(LexicalState::InStep { chunks }) => Ok(format!("{chunks} chunks, in step")),
        Ok(LexicalState::NotBuilt) => Ok(format!(
            "not built yet: the next ingest builds it; {fallback}"
        )),
        Ok(LexicalState::Pending(n)) => Ok(format!(
            "{n} changed chunks not applied yet (a writer is running or stopped early); {}",
            match n as usize <= kebab_store::LEXICAL_MAX_PENDING {
                true => "search ranks them beside the index",
                false => fallback,
            }
        )),
        Ok(LexicalState::OutOfStep(why)) => Err((
            format!("the lexical index is out of step with the chunks ({why}); {fallback}"),
            "`kebab ingest <dir>` (any folder you indexed) rebuilds it from the chunks".into(),
        )),
        Ok(LexicalState::Unreadable(why)) => Err((
            format!("the lexical index cannot be opened ({why}); {fallback}"),
            "`kebab ingest <dir>` (any folder you indexed) rebuilds it from the chunks".into(),
        )),
        Err(e) => Err((e.to_string(), "move the file aside and re-ingest".into())),
    }
}

/// The model server answers and has the configured model.
fn llm_checks(
    llm_config: &crate::llm::LlmConfig,
) -> Result<Vec<(&'static str, CheckResult)>, ApiError> {
    let llm = LlmClient::new(llm_config.clone())?;
    Ok(match llm.models() {
        Ok(models) => {
            let wanted = &llm_config.model;
            let found = models
                .iter()
                .any(|m| m == wanted || m.strip_suffix(":latest") == Some(wanted.as_str()));
            vec![
                (
                    "llm_reachable",
                    Ok(format!(
                        "{} ({})",
                        llm_config.endpoint,
                        llm_config.provider.as_str()
                    )),
                ),
                (
                    "llm_model_available",
                    if found {
                        Ok(wanted.clone())
                    } else {
                        Err((
                            format!("{wanted} missing (server has: {})", models.join(", ")),
                            match llm_config.provider {
                                Provider::Ollama => format!("ollama pull {wanted}"),
                                Provider::OpenAi => {
                                    "set [models.llm] model to one the server lists".into()
                                }
                            },
                        ))
                    },
                ),
            ]
        }
        Err(e) => vec![(
            "llm_reachable",
            Err((
                e.to_string(),
                "start the model server (Ollama: `ollama serve`) or fix [models.llm] endpoint"
                    .into(),
            )),
        )],
    })
}

/// ONNX Runtime (when a local model needs it), the embedding model with
/// its vector table, the reranker, the verification model, and the Korean
/// dictionary.
fn search_index_checks(app: &App) -> Vec<(&'static str, CheckResult)> {
    let mut out = Vec::new();
    let embedding = &app.config.models.embedding;
    let rerank = &app.config.search.rerank;
    let verify = &app.config.rag.verify;
    let local_model = !embedding.model.trim().is_empty()
        && embedding.provider == kebab_search::embed::Provider::Onnx;
    if local_model || rerank.enabled || verify.enabled() {
        out.push((
            "onnx_runtime",
            kebab_search::embed::runtime::locate(&app.runtime_candidates())
                .map(|p| p.display().to_string())
                .map_err(|e| (e.to_string(), e.hint())),
        ));
    }
    out.push(("embedding_model", embedding_check(app)));
    if rerank.enabled {
        out.push((
            "reranker",
            kebab_search::rerank::Reranker::load(rerank, &app.runtime_candidates())
                .and_then(|r| r.probe())
                .map_err(|e| (e.to_string(), e.hint())),
        ));
    }
    if verify.enabled() {
        out.push((
            "nli_model",
            kebab_search::nli::NliModel::load(verify, &app.runtime_candidates())
                .and_then(|m| m.probe())
                .map_err(|e| (e.to_string(), e.hint())),
        ));
    }
    out.push((
        "korean_dictionary",
        match app.korean() {
            Ok(Some(k)) => Ok(k.dir().display().to_string()),
            Ok(None) => Ok(
                "not installed: Korean words glued to particles (서울에서) match only whole \
                 (`kebab models import-ko-dic <mecab-ko-dic dir>` installs it)"
                    .into(),
            ),
            Err(e) => Err((
                e.to_string(),
                "`kebab models import-ko-dic <mecab-ko-dic dir>`, or fix [models.korean] dictionary"
                    .into(),
            )),
        },
    ));
    out.push(("japanese_dictionary", japanese_check(app)));
    out
}

/// The Japanese dictionary: loaded and splitting a sample sentence, or
/// not installed (Japanese is then read by jieba, Kana unsplit).
fn japanese_check(app: &App) -> CheckResult {
    let dir = match app.japanese_dictionary() {
        Ok(Some(dir)) => dir,
        Ok(None) => {
            return Ok(
                "not installed: Japanese is read by jieba, its Kana not split \
                 (`kebab models import-ja-dic <ipadic dir>` installs it)"
                    .into(),
            );
        }
        Err(missing) => {
            return Err((
                format!("no Japanese dictionary at {}", missing.display()),
                "`kebab models import-ja-dic <ipadic dir>`, or fix [models.japanese] dictionary"
                    .into(),
            ));
        }
    };
    let sample = crate::api::models::DicLanguage::Japanese.sample();
    match kebab_search::cjk::CjkAnalyzer::new(None, Some(dir.clone())).morphemes(sample, Some("ja"))
    {
        Ok(words) => Ok(format!(
            "{} ({sample} → {})",
            dir.display(),
            words.unwrap_or_default()
        )),
        Err(e) => Err((
            e.to_string(),
            "`kebab models import-ja-dic <ipadic dir>` builds it again".into(),
        )),
    }
}

/// The embedding model: loaded, answering a probe query with vectors of
/// the configured length, its vector table readable to the last row, and
/// a vector for every chunk — recorded in SQLite and held by the table.
fn embedding_check(app: &App) -> CheckResult {
    // One probe query: no graph optimisation needed.
    let embedder = match app.embedder(kebab_search::embed::Workload::One) {
        Ok(Some(e)) => e,
        Ok(None) => {
            return Ok("off ([models.embedding] model is empty): lexical search only".into());
        }
        Err(e) => return Err((e.to_string(), e.hint())),
    };
    let spec = embedder.spec();
    embedder
        .embed_query("kebab doctor")
        .map_err(|e| (e.to_string(), e.hint()))?;
    let failed = |e: kebab_store::vector::VectorError| {
        (e.to_string(), crate::app::vector_hint(&e).to_string())
    };
    let table = app.own_vector_table(spec).map_err(failed)?;
    table.check().map_err(failed)?;
    let n = table.count().map_err(failed)?;
    let detail = format!(
        "{} ({}d) from {} ({}); {n} vectors in {}",
        spec.id(),
        spec.dimensions,
        spec.source,
        spec.provider().as_str(),
        table.name(),
    );
    let (missing, lost) = super::vectors_missing(&app.store, spec, &table)
        .map_err(|e| (e, "move the index aside and re-ingest".to_string()))?;
    if lost > 0 {
        return Err((
            format!(
                "{detail}; {lost} vectors the index records are missing from the table ({})",
                super::LOST_VECTORS_CAUSE
            ),
            "run `kebab ingest` to add them again from the embedding cache: until then vector \
             and hybrid search cannot find those chunks"
                .to_string(),
        ));
    }
    if missing > 0 {
        return Err((
            format!("{detail}; {missing} chunks have no vector for this model"),
            format!(
                "run `kebab ingest` to embed them: until then vector and hybrid search cannot \
                 find them ({})",
                super::MISSING_VECTORS_CAUSE
            ),
        ));
    }
    Ok(detail)
}
