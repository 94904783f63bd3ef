//! The `kebab` command line.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use kebab::app::{App, Paths};
use kebab::config::Config;
use kebab::ingest::{IngestReport, Progress};
use kebab::llm::{LlmClient, LlmError, Provider};
use kebab::wire::{DocSummary, ErrorReport, SearchResponse};

/// kebab: a local-first knowledge base with sandboxed WebAssembly parsers.
#[derive(Parser)]
#[command(name = "kebab", version, about)]
struct Cli {
    /// Config file [default: $XDG_CONFIG_HOME/kebab/config.toml].
    #[arg(long, global = true, env = "KEBAB_CONFIG")]
    config: Option<PathBuf>,
    /// Data directory holding the index [default: from config, else
    /// $XDG_DATA_HOME/kebab].
    #[arg(long, global = true, env = "KEBAB_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Machine-readable output (stable `*.v1` JSON schemas).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create the config file and data directory.
    Init {
        /// Overwrite an existing config file with the defaults.
        #[arg(long)]
        force: bool,
    },
    /// Index a directory or a file.
    Ingest {
        /// Directory or file to index.
        path: PathBuf,
        /// Exit with 2 when any file errors or is skipped as bad input.
        #[arg(long)]
        strict: bool,
    },
    /// Search the index.
    Search {
        /// The query.
        query: String,
        /// Number of hits [default: [search] default_k].
        #[arg(long)]
        k: Option<usize>,
        /// Only Kubernetes resources of this kind (`Deployment`, `Service`…).
        #[arg(long)]
        kind: Option<String>,
    },
    /// List indexed items.
    List {
        #[command(subcommand)]
        what: ListWhat,
    },
    /// Ask a question; the answer cites the notes it comes from, or refuses.
    Ask {
        /// The question.
        question: String,
        /// Show the retrieval trace, token counts and latency.
        #[arg(long)]
        explain: bool,
        /// Continue (or start) a conversation with this id.
        #[arg(long)]
        session: Option<String>,
        /// Chunks to retrieve [default: [rag] k].
        #[arg(long)]
        k: Option<usize>,
    },
    /// Check the configuration, index, plugins and model server.
    Doctor,
    /// Verbatim indexed text: a chunk, a document or a line span.
    Fetch {
        #[command(subcommand)]
        what: FetchWhat,
    },
    /// Manage parser plugins.
    Plugin {
        #[command(subcommand)]
        what: PluginCmd,
    },
    /// Re-parse every document a plugin is responsible for.
    Reindex {
        /// Plugin name.
        #[arg(long)]
        plugin: String,
    },
}

#[derive(Subcommand)]
enum PluginCmd {
    /// Install a plugin component (file, directory or http(s) URL).
    Install {
        source: String,
        /// Expected blake3 hex digest of the component.
        #[arg(long)]
        blake3: Option<String>,
        /// Allow installing an older version (removes the newer ones).
        #[arg(long)]
        allow_downgrade: bool,
    },
    /// List plugins, built-in and installed.
    List,
    /// Details of one plugin.
    Info { name: String },
    /// Remove an installed plugin (all its versions).
    Remove { name: String },
    /// Which plugin handles PATH, and why.
    Which { path: String },
    /// Create a new plugin project (Rust, Python or JavaScript).
    New {
        name: String,
        #[arg(long, value_enum, default_value = "rust")]
        lang: kebab::plugin::scaffold::Lang,
        /// Parent directory [default: current directory].
        #[arg(long, default_value = ".")]
        dir: PathBuf,
    },
    /// Run a plugin (name or .wasm file) on sample files: valid, deterministic, within limits.
    Test {
        plugin: String,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Subcommand)]
enum FetchWhat {
    /// A chunk, with `--context N` neighbours on each side.
    Chunk {
        id: String,
        #[arg(long, default_value_t = 0)]
        context: u32,
    },
    /// A whole document.
    Doc {
        id: String,
        #[arg(long)]
        max_tokens: Option<usize>,
    },
    /// Lines LINE_START..=LINE_END of a document (not for PDFs).
    Span {
        doc_id: String,
        line_start: u32,
        line_end: u32,
        #[arg(long)]
        max_tokens: Option<usize>,
    },
}

#[derive(Subcommand)]
enum ListWhat {
    /// Indexed documents.
    Docs,
}

/// Exit codes (seed 001 §1.7).
const EXIT_OK: u8 = 0;
const EXIT_NO_HIT: u8 = 1;
const EXIT_ERROR: u8 = 2;
const EXIT_UNHEALTHY: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            report_error(&err, json);
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: Cli) -> Result<u8> {
    let config_path = cli
        .config
        .clone()
        .unwrap_or_else(kebab::config::default_config_path);
    let config = Config::load(&config_path)?;
    let paths = Paths::resolve(Some(config_path), cli.data_dir.clone(), &config);
    match cli.command {
        Command::Init { force } => init(&paths, force, cli.json),
        Command::Ingest { path, strict } => {
            let mut app = App::open(config, paths)?;
            ingest(&mut app, &path, strict, cli.json)
        }
        Command::Search { query, k, kind } => {
            let app = App::open(config, paths)?;
            let k = k.unwrap_or(app.config.search.default_k).max(1);
            let filter = kebab::store::ChunkFilter { kind };
            let response = kebab::search::lexical(
                &app.store,
                &query,
                k,
                app.config.search.snippet_chars,
                &filter,
            )?;
            if cli.json {
                print_json(&response)?;
            } else {
                print_hits(&response);
            }
            Ok(if response.hits.is_empty() {
                EXIT_NO_HIT
            } else {
                EXIT_OK
            })
        }
        Command::List {
            what: ListWhat::Docs,
        } => {
            let app = App::open(config, paths)?;
            list_docs(&app, cli.json)
        }
        Command::Ask {
            question,
            explain,
            session,
            k,
        } => {
            let mut app = App::open(config, paths)?;
            let opts = kebab::rag::AskOptions {
                k,
                explain,
                session,
            };
            ask(&mut app, &question, &opts, cli.json)
        }
        Command::Doctor => doctor(config, paths, cli.json),
        Command::Plugin { what } => {
            let app = App::open(config, paths)?;
            kebab_plugin_cmd(&app, what, cli.json)
        }
        Command::Reindex { plugin } => {
            let mut app = App::open(config, paths)?;
            let plugins = app.plugins().context("cannot load parser plugins")?;
            if plugins.registry.get(&plugin).is_none() {
                anyhow::bail!("no plugin named {plugin} (see `kebab plugin list`)");
            }
            let cancel = AtomicBool::new(false);
            let report = kebab::ingest::reindex(&mut app, &plugins, &plugin, &cancel, &mut |_| {})?;
            if cli.json {
                print_json(&report)?;
            } else {
                print_ingest_report(&report);
            }
            Ok(EXIT_OK)
        }
        Command::Fetch { what } => {
            let app = App::open(config, paths)?;
            let result = match what {
                FetchWhat::Chunk { id, context } => kebab::fetch::chunk(&app.store, &id, context),
                FetchWhat::Doc { id, max_tokens } => kebab::fetch::doc(&app.store, &id, max_tokens),
                FetchWhat::Span {
                    doc_id,
                    line_start,
                    line_end,
                    max_tokens,
                } => kebab::fetch::span(&app.store, &doc_id, line_start, line_end, max_tokens),
            }?;
            if cli.json {
                print_json(&result)?;
            } else {
                print_fetch(&result);
            }
            Ok(EXIT_OK)
        }
    }
}

fn init(paths: &Paths, force: bool, json: bool) -> Result<u8> {
    let existed = paths.config_file.exists();
    if !existed || force {
        Config::write_default(&paths.config_file)?;
    }
    let app = App::open(Config::load(&paths.config_file)?, paths.clone())?;
    let schema = app.store.schema_version()?;
    if json {
        print_json(&serde_json::json!({
            "schema_version": "init.v1",
            "config": paths.config_file,
            "config_written": !existed || force,
            "data_dir": paths.data_dir,
            "sqlite": paths.sqlite(),
            "db_schema_version": schema,
        }))?;
    } else {
        let verb = if !existed {
            "created"
        } else if force {
            "rewrote"
        } else {
            "kept"
        };
        println!("{verb:<8} {}", paths.config_file.display());
        println!("{:<8} {}", "data", paths.data_dir.display());
        println!(
            "{:<8} {} (schema v{schema})",
            "opened",
            paths.sqlite().display()
        );
        println!(
            "{:<8} edit {} then `kebab ingest <dir>`",
            "hint",
            paths.config_file.display()
        );
    }
    Ok(EXIT_OK)
}

fn ingest(app: &mut App, path: &std::path::Path, strict: bool, json: bool) -> Result<u8> {
    let plugins = app.plugins().context("cannot load parser plugins")?;
    for w in &plugins.warnings {
        eprintln!("warning: {w}");
    }
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        // Ctrl-C finishes the file in flight, then stops; what was written stays.
        let _ = ctrlc::set_handler(move || cancel.store(true, Ordering::Relaxed));
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if json || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{spinner} {bar:30} {pos}/{len} {wide_msg}")
            .expect("valid template"),
    );
    let mut stdout = std::io::stdout().lock();
    let mut on_progress = |event: &Progress| {
        if json {
            let line = serde_json::json!({
                "schema_version": "ingest_progress.v1",
                "ts": kebab::store::now_rfc3339(),
                "event": event,
            });
            let _ = writeln!(stdout, "{line}");
            return;
        }
        match event {
            Progress::ScanCompleted { total } => bar.set_length(*total as u64),
            Progress::AssetStarted { path, .. } => bar.set_message(path.clone()),
            Progress::AssetFinished { .. } => bar.inc(1),
            _ => {}
        }
    };
    let report = kebab::ingest::ingest(app, &plugins, path, &cancel, &mut on_progress)?;
    bar.finish_and_clear();
    if json {
        writeln!(stdout, "{}", serde_json::to_string(&report)?)?;
    } else {
        drop(stdout);
        print_ingest_report(&report);
    }
    Ok(if strict && report.has_bad_input() {
        EXIT_ERROR
    } else {
        EXIT_OK
    })
}

/// Notable report lines shown without `--json`.
const MAX_REPORT_LINES: usize = 30;

fn print_ingest_report(r: &IngestReport) {
    println!(
        "{}: {} scanned · {} new · {} updated · {} skipped · {} errors · {} removed{} ({:.1} s)",
        if r.aborted {
            "ingest aborted"
        } else {
            "ingested"
        },
        r.scanned,
        r.new,
        r.updated,
        r.skipped,
        r.errors,
        r.removed,
        if r.fallbacks > 0 {
            format!(" · {} via text fallback", r.fallbacks)
        } else {
            String::new()
        },
        r.duration_ms as f64 / 1000.0
    );
    let notable: Vec<String> = r
        .items
        .iter()
        .filter_map(|i| match (i.kind, &i.error, &i.fallback, i.reason) {
            ("error", Some(e), _, _) => Some(format!("  error    {}: {e}", i.doc_path)),
            (_, _, Some(f), _) => Some(format!("  fallback {}: {f}", i.doc_path)),
            ("skipped", _, _, Some(reason)) if !matches!(reason, "unchanged" | "unsupported") => {
                Some(format!(
                    "  skipped  {}: {reason}{}",
                    i.doc_path,
                    i.warnings
                        .first()
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default()
                ))
            }
            _ => None,
        })
        .collect();
    for line in notable.iter().take(MAX_REPORT_LINES) {
        println!("{line}");
    }
    if notable.len() > MAX_REPORT_LINES {
        println!("  … {} more (see --json)", notable.len() - MAX_REPORT_LINES);
    }
    if r.skipped_unsupported > 0 {
        println!(
            "  {} files of types no plugin handles were skipped",
            r.skipped_unsupported
        );
    }
}

fn print_hits(response: &SearchResponse) {
    if response.hits.is_empty() {
        println!("no hits for \"{}\"", response.query);
        println!("hint: try other words, or check `kebab list docs` for what is indexed");
        return;
    }
    for hit in &response.hits {
        println!("{}. {:.2} {}", hit.rank, hit.score, hit.citation.uri());
        let heading = if hit.heading_path.is_empty() {
            "—".to_string()
        } else {
            hit.heading_path.join(" › ")
        };
        println!("   {heading}");
        println!("   {}", hit.snippet);
        println!();
    }
    println!(
        "{} hits  {}  index {}  bm25/fts5",
        response.hits.len(),
        response.mode,
        kebab::search::INDEX_VERSION
    );
}

fn list_docs(app: &App, json: bool) -> Result<u8> {
    let docs: Vec<DocSummary> = app
        .store
        .list_docs()?
        .into_iter()
        .map(|d| DocSummary {
            schema_version: "doc_summary.v1",
            doc_id: d.doc_id,
            doc_path: d.workspace_path,
            title: d.title,
            lang: d.lang,
            tags: d.tags,
            trust_level: d.trust_level,
            source_type: d.source_type,
            byte_len: d.byte_len,
            chunk_count: d.chunk_count,
            created_at: d.created_at,
            updated_at: d.updated_at,
            parser_version: d.parser_version,
            chunker_version: d.chunker_version,
            plugin: d.plugin_name,
            plugin_version: d.plugin_version,
            fallback_reason: d.fallback_reason,
        })
        .collect();
    if json {
        print_json(&docs)?;
    } else if docs.is_empty() {
        println!("no documents indexed yet");
        println!("hint: `kebab ingest <dir>`");
    } else {
        for d in &docs {
            println!(
                "{}  {} chunks  {}@{}{}  {}",
                d.doc_path,
                d.chunk_count,
                d.plugin,
                d.plugin_version,
                if d.fallback_reason.is_some() {
                    " (text fallback)"
                } else {
                    ""
                },
                d.title.as_deref().unwrap_or("")
            );
        }
        println!("{} documents", docs.len());
    }
    Ok(EXIT_OK)
}

fn ask(app: &mut App, question: &str, opts: &kebab::rag::AskOptions, json: bool) -> Result<u8> {
    let llm = LlmClient::new(app.config.models.llm.clone())?;
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        // Ctrl-C stops the stream; the partial answer is kept and stored.
        let _ = ctrlc::set_handler(move || cancel.store(true, Ordering::Relaxed));
    }
    let stream = !json && std::io::stdout().is_terminal();
    let mut on_token = |t: &str| {
        if stream {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(t.as_bytes());
            let _ = out.flush();
        }
    };
    let outcome = kebab::rag::ask(
        &mut app.store,
        &llm,
        &app.config,
        question,
        opts,
        &mut on_token,
        &cancel,
    )?;
    if json {
        print_json(&outcome.answer)?;
    } else {
        print_answer(&outcome, stream, opts.explain, question);
    }
    if let Some(e) = &outcome.error {
        report_llm_error(e, &app.config.models.llm, &app.paths, json);
        return Ok(EXIT_ERROR);
    }
    Ok(if outcome.answer.grounded {
        EXIT_OK
    } else {
        EXIT_NO_HIT
    })
}

fn print_answer(outcome: &kebab::rag::AskOutcome, streamed: bool, explain: bool, question: &str) {
    let a = &outcome.answer;
    if streamed
        && a.refusal_reason
            .is_none_or(|r| matches!(r, "llm_self_judge" | "llm_stream_aborted"))
    {
        println!();
    } else if !a.answer.is_empty() {
        println!("{}", a.answer);
    }
    println!("{}", "─".repeat(57));
    for c in a.citations.iter().filter(|c| c.marker.is_some()) {
        println!("{} {}", c.marker.as_deref().unwrap_or(""), c.citation.uri());
        if let kebab::wire::CitationBody::Line {
            section: Some(s), ..
        } = &c.citation.body
        {
            println!("     {s}");
        }
    }
    let chunks = match a.refusal_reason {
        None => format!("{} chunks", a.retrieval.chunks_used),
        Some("llm_self_judge") => {
            format!("{} chunks searched, 0 grounded", a.retrieval.chunks_used)
        }
        Some(_) => format!(
            "{} chunks used",
            a.citations.iter().filter(|c| c.marker.is_some()).count()
        ),
    };
    println!(
        "grounded {}  {}  {}  {chunks}",
        if a.grounded { "✓" } else { "✗" },
        a.model.id,
        a.prompt_template_version
    );
    if explain {
        println!();
        println!("retrieval trace");
        println!("  query            {question:?}");
        println!("  mode             {}", a.retrieval.mode);
        println!("  k                {}", a.retrieval.k);
        println!(
            "  threshold (gate) {:.2} → top-1 {:.2} {}",
            a.retrieval.score_gate,
            a.retrieval.top_score,
            if a.retrieval.top_score >= a.retrieval.score_gate {
                "pass"
            } else {
                "fail"
            }
        );
        println!(
            "  chunks (used)    {} / {} returned",
            a.retrieval.chunks_used, a.retrieval.chunks_returned
        );
        for r in &outcome.retrieved {
            println!(
                "  #{} {:.2} {}  bm25={:.1}",
                r.hit.rank,
                r.coverage,
                r.hit.citation.uri(),
                r.hit.score
            );
        }
        let n = |v: Option<u32>| v.map_or("?".to_string(), |n| n.to_string());
        println!(
            "  prompt {} tokens  completion {} tokens  latency {} ms",
            n(a.usage.prompt_tokens),
            n(a.usage.completion_tokens),
            a.usage.latency_ms
        );
    }
}

fn report_llm_error(e: &LlmError, cfg: &kebab::llm::LlmConfig, paths: &Paths, json: bool) {
    let hint = match e {
        LlmError::Unreachable { .. } => format!(
            "start the model server (for Ollama: `ollama serve`) or set [models.llm] endpoint in {}",
            paths.config_file.display()
        ),
        LlmError::ModelNotPulled { .. } => match cfg.provider {
            Provider::Ollama => format!("ollama pull {}", cfg.model),
            Provider::OpenAi => {
                "set [models.llm] model to one the server lists (see `kebab doctor`)".into()
            }
        },
        LlmError::Timeout { .. } => {
            "raise [models.llm] timeout_secs, or use a smaller model".into()
        }
        LlmError::Http { .. } => "check the server's log; the request was refused".into(),
        LlmError::Stream { .. } | LlmError::Cancelled { .. } => {
            "the partial answer above was kept in the answers table; ask again".into()
        }
    };
    if json {
        let report = ErrorReport {
            schema_version: "error.v1",
            code: e.code(),
            message: e.to_string(),
            hint: Some(hint),
        };
        eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        eprintln!("error: {e}");
        eprintln!("  hint: {hint}");
    }
}

/// One `doctor.v1` check.
#[derive(Serialize)]
struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

fn doctor(config: Config, paths: Paths, json: bool) -> Result<u8> {
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
                    .map(|v| format!("{} (schema v{v})", paths.sqlite().display()))
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

fn print_fetch(r: &kebab::fetch::FetchResult) {
    if r.stale {
        eprintln!(
            "warning: {} changed since it was indexed ({}); this is the indexed text",
            r.doc_path, r.indexed_at
        );
    }
    let chunks = r
        .context_before
        .iter()
        .chain(r.chunk.iter())
        .chain(r.context_after.iter());
    for c in chunks {
        println!("── {} [{}]", c.doc_path, c.chunk_id);
        println!("{}", c.text);
    }
    if let Some(t) = &r.text {
        println!("{t}");
    }
    if r.truncated {
        eprintln!("(truncated to the token budget)");
    }
}

fn kebab_plugin_cmd(app: &App, what: PluginCmd, json: bool) -> Result<u8> {
    use kebab::plugin::install;
    use kebab::plugin::registry::{Origin, RouteReason};
    match what {
        PluginCmd::Install {
            source,
            blake3,
            allow_downgrade,
        } => {
            let runtime = kebab::plugin::runtime::Runtime::new(Some(app.paths.cache_dir.clone()))?;
            let bytes = install::fetch(&source)?;
            let done = install::install(
                &runtime,
                &app.paths.data_dir,
                &source,
                &bytes,
                blake3.as_deref(),
                allow_downgrade,
            )?;
            let plugins = app.plugins()?;
            let stale = app
                .store
                .indexed_docs()?
                .iter()
                .filter(|(path, doc)| {
                    plugins
                        .registry
                        .route(path)
                        .is_some_and(|p| p.name() == done.name)
                        && (doc.plugin_name != done.name
                            || doc.plugin_version != done.version.to_string())
                })
                .count();
            if json {
                print_json(&serde_json::json!({
                    "schema_version": "plugin_install.v1",
                    "name": done.name, "version": done.version.to_string(),
                    "api_version": done.api_version.to_string(), "path": done.path,
                    "unchanged": done.unchanged,
                    "rolled_back": done.rolled_back.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "documents_to_reindex": stale,
                }))?;
            } else {
                let verb = if done.unchanged {
                    "already installed"
                } else {
                    "installed"
                };
                println!(
                    "{verb} {} {} (plugin API {})",
                    done.name, done.version, done.api_version
                );
                for v in &done.rolled_back {
                    println!("removed {} {v} (rollback)", done.name);
                }
                println!("{stale} indexed documents will be re-indexed by the next `kebab ingest`");
            }
            Ok(EXIT_OK)
        }
        PluginCmd::List | PluginCmd::Info { .. } => {
            let plugins = app.plugins()?;
            for w in &plugins.warnings {
                eprintln!("warning: {w}");
            }
            let counts = app.store.docs_per_plugin()?;
            let only = match &what {
                PluginCmd::Info { name } => Some(name.as_str()),
                _ => None,
            };
            let rows: Vec<serde_json::Value> = plugins
                .registry
                .plugins()
                .iter()
                .filter(|p| only.is_none_or(|n| n == p.name()))
                .map(|p| {
                    let (origin, source) = match &p.origin {
                        Origin::BuiltIn => ("built-in", None),
                        Origin::Installed(path) => (
                            "installed",
                            install::install_record(path)
                                .and_then(|r| r["source"].as_str().map(String::from))
                                .or_else(|| Some(path.display().to_string())),
                        ),
                    };
                    serde_json::json!({
                        "name": p.name(), "version": p.plugin.version.to_string(),
                        "api_version": p.plugin.api_version.to_string(), "origin": origin, "source": source,
                        "parser_version": p.plugin.info.parser_version, "chunker_version": p.plugin.info.chunker_version,
                        "patterns": p.plugin.info.handles, "accepts_binary": p.plugin.info.accepts_binary,
                        "blake3": p.plugin.wasm_hash,
                        "disabled": app.config.plugins.disabled.iter().any(|d| d == p.name()),
                        "documents": counts.get(p.name()).copied().unwrap_or(0),
                    })
                })
                .collect();
            if let Some(name) = only
                && rows.is_empty()
            {
                anyhow::bail!("no plugin named {name} (see `kebab plugin list`)");
            }
            if json {
                print_json(
                    &serde_json::json!({ "schema_version": "plugin_list.v1", "plugins": rows }),
                )?;
            } else {
                for r in &rows {
                    println!(
                        "{:<10} {:<8} {:<9} {:>5} docs  {}{}",
                        r["name"].as_str().unwrap_or(""),
                        r["version"].as_str().unwrap_or(""),
                        r["origin"].as_str().unwrap_or(""),
                        r["documents"],
                        r["patterns"]
                            .as_array()
                            .map(|a| a
                                .iter()
                                .filter_map(|v| v.as_str())
                                .collect::<Vec<_>>()
                                .join(" "))
                            .unwrap_or_default(),
                        if r["disabled"] == true {
                            "  (disabled)"
                        } else {
                            ""
                        }
                    );
                    if only.is_some() {
                        for key in [
                            "api_version",
                            "parser_version",
                            "chunker_version",
                            "source",
                            "blake3",
                        ] {
                            println!("  {key:<16} {}", r[key].as_str().unwrap_or("-"));
                        }
                    }
                }
            }
            Ok(EXIT_OK)
        }
        PluginCmd::Remove { name } => {
            let removed = install::remove(&app.paths.data_dir, &name)?;
            let plugins = app.plugins()?;
            let indexed = app.store.indexed_docs()?;
            let owned: Vec<&String> = indexed
                .iter()
                .filter(|(_, d)| d.plugin_name == name)
                .map(|(p, _)| p)
                .collect();
            let rerouted = owned
                .iter()
                .filter(|p| plugins.registry.route(p).is_some())
                .count();
            let orphaned = owned.len() - rerouted;
            if json {
                print_json(&serde_json::json!({
                    "schema_version": "plugin_remove.v1", "name": name,
                    "removed_versions": removed.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "documents": owned.len(), "rerouted": rerouted, "orphaned": orphaned,
                }))?;
            } else {
                let versions: Vec<String> = removed.iter().map(ToString::to_string).collect();
                println!("removed {name} {}", versions.join(", "));
                if rerouted > 0 {
                    println!(
                        "{rerouted} documents will be re-indexed by another plugin on the next `kebab ingest`"
                    );
                }
                if orphaned > 0 {
                    println!(
                        "{orphaned} documents have no plugin now: they stay searchable and are reported as orphaned"
                    );
                }
            }
            Ok(EXIT_OK)
        }
        PluginCmd::Which { path } => {
            let plugins = app.plugins()?;
            let rel = kebab::ids::normalize_workspace_path(&path);
            let explained = plugins.registry.explain(&rel);
            let found = explained.is_some();
            if json {
                let (plugin, reason) = match &explained {
                    Some((p, RouteReason::ConfiguredRoute(g))) => {
                        (Some(p.name()), format!("route {g}"))
                    }
                    Some((p, RouteReason::Pattern { .. })) => {
                        (Some(p.name()), "pattern".to_string())
                    }
                    None => (None, "no plugin claims this file".to_string()),
                };
                print_json(
                    &serde_json::json!({ "schema_version": "plugin_which.v1", "path": rel, "plugin": plugin, "reason": reason }),
                )?;
            } else {
                match explained {
                    Some((p, RouteReason::ConfiguredRoute(glob))) => {
                        println!(
                            "{rel} → {} {} (configured route `{glob}`)",
                            p.name(),
                            p.plugin.version
                        )
                    }
                    Some((p, RouteReason::Pattern { shadowing })) => {
                        let origin = match p.origin {
                            Origin::BuiltIn => "built-in",
                            Origin::Installed(_) => "installed",
                        };
                        println!(
                            "{rel} → {} {} ({origin}, matches {:?})",
                            p.name(),
                            p.plugin.version,
                            p.plugin.info.handles
                        );
                        if !shadowing.is_empty() {
                            println!(
                                "  also claimed by (lower priority): {}",
                                shadowing.join(", ")
                            );
                        }
                    }
                    None => {
                        println!("{rel} → no plugin (the file would be skipped as unsupported)")
                    }
                }
            }
            Ok(if found { EXIT_OK } else { EXIT_NO_HIT })
        }
        PluginCmd::Test { plugin, files } => plugin_test(app, &plugin, &files, json),
        PluginCmd::New { name, lang, dir } => {
            // The SDK of the tree this kebab was built from (Rust projects depend on it by path).
            let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
            let sdk = sdk.canonicalize().unwrap_or(sdk);
            let files = kebab::plugin::scaffold::scaffold(&dir, &name, lang, &sdk)?;
            if json {
                print_json(
                    &serde_json::json!({ "schema_version": "plugin_new.v1", "name": name, "files": files }),
                )?;
            } else {
                for f in &files {
                    println!("created {}", f.display());
                }
                println!(
                    "next: {}/build.sh, then `kebab plugin test <file.wasm> <samples…>` and `kebab plugin install <file.wasm>`",
                    dir.join(&name).display()
                );
            }
            Ok(EXIT_OK)
        }
    }
}

fn plugin_test(app: &App, plugin: &str, files: &[PathBuf], json: bool) -> Result<u8> {
    use kebab::plugin::validate::{OutputLimits, SourceShape, validate};
    let runtime = kebab::plugin::runtime::Runtime::new(Some(app.paths.cache_dir.clone()))?;
    let loaded = if plugin.ends_with(".wasm") || std::path::Path::new(plugin).is_file() {
        runtime.load(&kebab::plugin::install::fetch(plugin)?)?
    } else {
        let wasm = match kebab::plugin::registry::installed_components(
            &kebab::plugin::registry::plugins_dir(&app.paths.data_dir),
        )
        .into_iter()
        .find(|p| {
            p.parent()
                .and_then(|d| d.parent())
                .is_some_and(|d| d.ends_with(plugin))
        }) {
            Some(path) => std::fs::read(path)?,
            None => kebab::plugin::registry::BUILT_IN
                .iter()
                .find(|(n, _)| *n == plugin)
                .map(|(_, w)| w.to_vec())
                .ok_or_else(|| anyhow::anyhow!("no plugin named {plugin}"))?,
        };
        runtime.load(&wasm)?
    };
    let limits = app.config.plugins.limits_for(&loaded.info.name);
    let policy = kebab::plugin::ChunkPolicy {
        target_tokens: app.config.chunking.target_tokens,
        overlap_tokens: app.config.chunking.overlap_tokens,
    };
    let mut results = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let started = std::time::Instant::now();
        let outcome = std::fs::read(file)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                let run = || {
                    runtime
                        .parse_and_chunk(&loaded, &limits, &name, &bytes, policy)
                        .map_err(|e| e.to_string())
                };
                let first = run()?;
                validate(
                    &first.document,
                    &first.chunks,
                    SourceShape::of(&bytes),
                    &OutputLimits::default(),
                )
                .map_err(|e| e.to_string())?;
                let second = run()?;
                if first.document != second.document || first.chunks != second.chunks {
                    return Err("not deterministic: a second run gave different output".to_string());
                }
                Ok((first.document.blocks.len(), first.chunks.len()))
            });
        let ms = started.elapsed().as_millis() as u64;
        results.push(match outcome {
            Ok((blocks, chunks)) => serde_json::json!({ "path": name, "ok": true, "blocks": blocks, "chunks": chunks, "ms": ms }),
            Err(e) => serde_json::json!({ "path": name, "ok": false, "error": e, "ms": ms }),
        });
    }
    let ok = results.iter().all(|r| r["ok"] == true);
    if json {
        print_json(&serde_json::json!({
            "schema_version": "plugin_test.v1", "plugin": loaded.info.name,
            "version": loaded.version.to_string(), "ok": ok, "files": results,
        }))?;
    } else {
        for r in &results {
            if r["ok"] == true {
                println!(
                    "ok    {}: {} blocks, {} chunks, {} ms (x2, identical)",
                    r["path"].as_str().unwrap_or(""),
                    r["blocks"],
                    r["chunks"],
                    r["ms"]
                );
            } else {
                println!(
                    "FAIL  {}: {}",
                    r["path"].as_str().unwrap_or(""),
                    r["error"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(if ok { EXIT_OK } else { EXIT_ERROR })
}

fn print_json(value: &impl Serialize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// `error: …` plus a hint, or an `error.v1` line on stderr with `--json`.
fn report_error(err: &anyhow::Error, json: bool) {
    let (code, hint) = classify(err);
    let message = format!("{err:#}");
    if json {
        let report = ErrorReport {
            schema_version: "error.v1",
            code,
            message,
            hint,
        };
        eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        eprintln!("error: {message}");
        if let Some(h) = hint {
            eprintln!("  hint: {h}");
        }
    }
}

fn classify(err: &anyhow::Error) -> (&'static str, Option<String>) {
    use kebab::app::AppError;
    use kebab::config::ConfigError;
    use kebab::ingest::IngestError;
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<kebab::fetch::FetchError>() {
            let hint = match e {
                kebab::fetch::FetchError::SpanNotSupported(_) => {
                    "use `kebab fetch doc` or `kebab fetch chunk`"
                }
                _ => "ids come from `kebab search --json` (chunk_id, doc_id)",
            };
            return (e.code(), Some(hint.into()));
        }
        if let Some(e) = cause.downcast_ref::<ConfigError>() {
            let hint = match e {
                ConfigError::Invalid { .. } => {
                    "fix the key it names, or `kebab init --force` to rewrite defaults"
                }
                _ => "check the file's permissions, or pass --config FILE",
            };
            return ("config_invalid", Some(hint.into()));
        }
        if let Some(IngestError::Path { .. }) = cause.downcast_ref::<IngestError>() {
            return (
                "io_error",
                Some("check that the path exists and is readable".into()),
            );
        }
        if let Some(AppError::DataDir { .. }) = cause.downcast_ref::<AppError>() {
            return (
                "io_error",
                Some("pass --data-dir DIR (or set KEBAB_DATA_DIR) to a writable place".into()),
            );
        }
        if cause.downcast_ref::<kebab::store::StoreError>().is_some() {
            return (
                "io_error",
                Some("is another kebab writing to the same --data-dir?".into()),
            );
        }
    }
    ("generic", None)
}
