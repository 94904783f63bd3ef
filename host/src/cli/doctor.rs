//! `kebab doctor`: health checks (`doctor.v1`), exit 3 when unhealthy.

use super::prelude::*;

/// One `doctor.v1` check.
#[derive(Serialize)]
pub(crate) struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

pub(crate) fn doctor(config: Config, paths: Paths, json: bool) -> Result<u8> {
    let mut checks = Vec::new();
    let mut check = |name, result: Result<String, (String, String)>| {
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
    check(
        "config_loaded",
        Ok(if paths.config_file.exists() {
            paths.config_file.display().to_string()
        } else {
            format!("{} (absent: defaults in use)", paths.config_file.display())
        }),
    );
    let probe = paths.data_dir.join(".kebab-doctor-probe");
    check(
        "data_dir_writable",
        std::fs::create_dir_all(&paths.data_dir)
            .and_then(|_| std::fs::write(&probe, b"ok"))
            .and_then(|_| std::fs::remove_file(&probe))
            .map(|_| paths.data_dir.display().to_string())
            .map_err(|e| {
                (
                    format!("{}: {e}", paths.data_dir.display()),
                    "pass --data-dir DIR to a writable place".into(),
                )
            }),
    );
    let llm_config = config.models.llm.clone();
    match App::open(config, paths.clone()) {
        Ok(app) => {
            check(
                "sqlite_open",
                app.store
                    .schema_version()
                    .and_then(|v| {
                        app.store
                            .counts()
                            .map(|(docs, chunks, _)| (v, docs, chunks))
                    })
                    .map(|(v, docs, chunks)| {
                        format!(
                            "{} (schema v{v}, {docs} documents, {chunks} chunks)",
                            paths.sqlite().display()
                        )
                    })
                    .map_err(|e| (e.to_string(), "move the file aside and re-ingest".into())),
            );
            check(
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
            );
            for (name, result) in search_index_checks(&app) {
                check(name, result);
            }
        }
        Err(e) => check(
            "sqlite_open",
            Err((
                e.to_string(),
                "pass --data-dir DIR to a writable place".into(),
            )),
        ),
    }
    let llm = LlmClient::new(llm_config.clone())?;
    match llm.models() {
        Ok(models) => {
            check(
                "llm_reachable",
                Ok(format!(
                    "{} ({})",
                    llm_config.endpoint,
                    llm_config.provider.as_str()
                )),
            );
            let wanted = &llm_config.model;
            let found = models
                .iter()
                .any(|m| m == wanted || m.strip_suffix(":latest") == Some(wanted.as_str()));
            check(
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
            );
        }
        Err(e) => check(
            "llm_reachable",
            Err((
                e.to_string(),
                "start the model server (Ollama: `ollama serve`) or fix [models.llm] endpoint"
                    .into(),
            )),
        ),
    }
    let ok = checks.iter().all(|c| c.ok);
    if json {
        print_json(
            &serde_json::json!({ "schema_version": "doctor.v1", "ok": ok, "checks": checks }),
        )?;
    } else {
        for c in &checks {
            println!(
                "{} {:<20} {}",
                if c.ok { "✓" } else { "✗" },
                c.name,
                c.detail
            );
            if let Some(h) = &c.hint {
                println!("  hint: {h}");
            }
        }
        let failed = checks.iter().filter(|c| !c.ok).count();
        if failed > 0 {
            println!(
                "{failed} check{} failed.",
                if failed == 1 { "" } else { "s" }
            );
        }
    }
    Ok(if ok { EXIT_OK } else { EXIT_UNHEALTHY })
}

type CheckResult = Result<String, (String, String)>;

/// ONNX Runtime, the embedding model with its vector table, and the
/// Korean dictionary.
fn search_index_checks(app: &App) -> Vec<(&'static str, CheckResult)> {
    let mut out = Vec::new();
    let embedding = &app.config.models.embedding;
    if embedding.model.trim().is_empty() {
        out.push((
            "embedding_model",
            Ok("off ([models.embedding] model is empty): lexical search only".to_string()),
        ));
    } else {
        let candidates = kebab::embed::runtime::candidates(
            embedding.runtime.as_deref(),
            &app.paths.data_dir,
            &app.paths.cache_dir,
        );
        out.push((
            "onnx_runtime",
            kebab::embed::runtime::locate(&candidates)
                .map(|p| p.display().to_string())
                .map_err(|e| (e.to_string(), e.hint())),
        ));
        out.push((
            "embedding_model",
            match app.embedder() {
                Ok(Some(e)) => {
                    let spec = e.spec();
                    let rows = app
                        .vectors(spec)
                        .and_then(|v| v.count().map(|n| (v.name().to_string(), n)));
                    match rows {
                        Ok((table, n)) => Ok(format!(
                            "{} ({}d) from {}; {n} vectors in {table}",
                            spec.id(),
                            spec.dimensions,
                            spec.dir.display()
                        )),
                        Err(err) => Err((err.to_string(), "re-run `kebab ingest`".into())),
                    }
                }
                Ok(None) => Ok("off".into()),
                Err(e) => Err((e.to_string(), e.hint())),
            },
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
    out
}
