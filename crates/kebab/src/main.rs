//! The `kebab` command line.

mod cli;
mod engine;
mod mcp;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use cli::prelude::*;

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
    /// Log what kebab does to stderr (also: `RUST_LOG`). Logs always go
    /// to `$XDG_STATE_HOME/kebab/logs` (or `KEBAB_LOG_DIR`) too.
    #[arg(long, global = true)]
    verbose: bool,
    /// Log everything, debug details included.
    #[arg(long, global = true)]
    debug: bool,
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
        /// Directory or file to index, or `-` for one document on stdin (a
        /// file outside every root, and stdin, are kept in the data dir's
        /// `_external/` and indexed there).
        path: PathBuf,
        /// With `-`: the document's file name, whose extension picks the
        /// plugin (`note.md`) [default: `<hash>.txt`].
        #[arg(long)]
        name: Option<String>,
        /// Exit with 2 when any file errors or is skipped as bad input.
        #[arg(long)]
        strict: bool,
        /// Only the files whose path hashes to shard I of N (`0/4`): N runs
        /// with 0/N … N-1/N, on one machine or several, share the tree
        /// between them; each removes only its own vanished files.
        #[arg(long, value_name = "I/N")]
        shard: Option<kebab::shard::Shard>,
    },
    /// Search the index.
    Search {
        /// The query.
        #[arg(required_unless_present = "bulk", conflicts_with = "bulk")]
        query: Option<String>,
        /// Read up to 100 queries from stdin, one JSON object a line
        /// (`{"query": "…", "k": 5, "mode": "lexical", "path": "notes/*"}`),
        /// and answer each with one `bulk_search_item.v1` line.
        #[arg(long)]
        bulk: bool,
        /// Number of hits [default: [search] default_k].
        #[arg(long)]
        k: Option<usize>,
        /// Only Kubernetes resources of this kind (`Deployment`, `Service`…).
        #[arg(long)]
        kind: Option<String>,
        /// Only code in this language (`rust`, `python`, `shell`, `yaml`…).
        #[arg(long)]
        code_lang: Option<String>,
        /// Only files from the git work tree with this name.
        #[arg(long)]
        repo: Option<String>,
        /// Only documents whose path matches this glob (`notes/*`).
        #[arg(long)]
        path: Option<String>,
        /// Only documents with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// Only documents in this language (`en`, `ko`).
        #[arg(long)]
        lang: Option<String>,
        /// Only documents trusted at least this much: primary, secondary
        /// or generated (frontmatter `trust_level`; primary without one).
        #[arg(long, value_name = "LEVEL")]
        trust_min: Option<String>,
        /// lexical, vector or hybrid [default: hybrid when an embedding
        /// model is installed, else lexical].
        #[arg(long)]
        mode: Option<String>,
        /// Show each channel's rank and score under every hit.
        #[arg(long)]
        explain: bool,
        /// Only this root (repeatable; `kebab roots` lists them) [default:
        /// every root].
        #[arg(long = "root", value_name = "NAME")]
        roots: Vec<String>,
    },
    /// List indexed items.
    List {
        #[command(subcommand)]
        what: ListWhat,
        /// Only this root (repeatable; `kebab roots` lists them) [default:
        /// every root].
        #[arg(long = "root", value_name = "NAME", global = true)]
        roots: Vec<String>,
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
        /// lexical, vector or hybrid [default: hybrid when an embedding
        /// model is installed, else lexical].
        #[arg(long)]
        mode: Option<String>,
        /// Only this root (repeatable; `kebab roots` lists them) [default:
        /// every root].
        #[arg(long = "root", value_name = "NAME")]
        roots: Vec<String>,
        /// Only evidence from documents in this language (`en`, `ko`).
        #[arg(long)]
        lang: Option<String>,
        /// Only evidence from documents trusted at least this much:
        /// primary, secondary or generated.
        #[arg(long, value_name = "LEVEL")]
        trust_min: Option<String>,
        /// Split the question into searches and gather evidence hop by hop
        /// before answering (compound questions; `[rag] multi_hop`, `max_depth`).
        #[arg(long, conflicts_with = "single_pass")]
        multi_hop: bool,
        /// Answer in one retrieval pass even when `[rag] multi_hop` is on.
        #[arg(long)]
        single_pass: bool,
    },
    /// Check the configuration, index, plugins and model server.
    Doctor,
    /// What this kebab can do: wire schemas, search modes, plugins,
    /// models and index statistics.
    Schema,
    /// Serve the index to agents over the Model Context Protocol (stdio);
    /// forwards to a `kebab serve` running on the same data directory.
    Mcp {
        /// File holding the token a `kebab serve` to forward to wants
        /// [default: KEBAB_SERVE_TOKEN].
        #[arg(long)]
        token_file: Option<PathBuf>,
    },
    /// One warm, shared local service: MCP over Streamable HTTP at /mcp
    /// and a read-only JSON API at /v1/ for many clients at once; with
    /// --watch it keeps the roots fresh too. Runs until SIGTERM or Ctrl-C.
    Serve {
        /// Address to listen on (port 0: a free port). An address other
        /// than loopback needs a token.
        #[arg(long, default_value = kebab::service::DEFAULT_LISTEN)]
        listen: std::net::SocketAddr,
        /// Keep the roots fresh as `kebab watch` does, in this process.
        #[arg(long)]
        watch: bool,
        /// Roots to watch, by name or directory [default: every root].
        #[arg(requires = "watch")]
        roots: Vec<String>,
        /// File holding the bearer token every request must carry [default:
        /// KEBAB_SERVE_TOKEN; no token when neither is set].
        #[arg(long)]
        token_file: Option<PathBuf>,
        /// Threads answering reading calls [default: the CPU count, 2 to 8].
        #[arg(long)]
        readers: Option<usize>,
        /// Calls waiting for a thread, at most; more are refused with
        /// `overloaded` [default: 64].
        #[arg(long)]
        queue: Option<usize>,
        /// Seconds a call may take, waiting included [default: 60, or the
        /// model server's timeout_secs + 30 when longer].
        #[arg(long)]
        timeout: Option<u64>,
        /// Keep no MCP sessions: every request stands alone, so servers
        /// behind a load balancer are interchangeable and one can be
        /// restarted under a client (clients of MCP 2026-07-28 are served
        /// so anyway).
        #[arg(long)]
        stateless: bool,
    },
    /// Verbatim indexed text: a chunk, a document or a line span.
    Fetch {
        #[command(subcommand)]
        what: FetchWhat,
        /// Only this root (repeatable; `kebab roots` lists them) [default:
        /// every root].
        #[arg(long = "root", value_name = "NAME", global = true)]
        roots: Vec<String>,
    },
    /// The trees the index holds: list them, rename or remove one.
    Roots {
        #[command(subcommand)]
        what: Option<RootsCmd>,
    },
    /// The conversations `ask --session` keeps: list them, show or delete
    /// one.
    Sessions {
        #[command(subcommand)]
        what: Option<SessionsCmd>,
    },
    /// Keep roots fresh: bring each up to date, then apply file-system
    /// changes as they happen, until Ctrl-C or SIGTERM.
    Watch {
        /// Roots to watch, by name or directory (a new directory becomes a
        /// root) [default: every root of the index].
        roots: Vec<String>,
        /// Parse and embed on at most this many threads (lowers
        /// `[indexing] max_parallel_extractors` and the embedding model's
        /// threads), to keep a laptop responsive.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
        max_threads: Option<u16>,
    },
    /// Manage parser plugins.
    Plugin {
        #[command(subcommand)]
        what: PluginCmd,
    },
    /// Embedding models and the Korean dictionary.
    Models {
        #[command(subcommand)]
        what: ModelsCmd,
    },
    /// Measure retrieval quality.
    Eval {
        #[command(subcommand)]
        what: EvalCmd,
    },
    /// Re-parse every document a plugin is responsible for.
    Reindex {
        /// Plugin name.
        #[arg(long)]
        plugin: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum ModelsCmd {
    /// Embedding models kebab knows, and which are installed.
    List,
    /// Download an embedding model (ONNX + tokenizer) with checksums.
    Pull {
        name: String,
        /// Hub or mirror to download from.
        #[arg(long, env = "KEBAB_HF_ENDPOINT")]
        endpoint: Option<String>,
    },
    /// Build the Korean dictionary from a compiled mecab-ko-dic directory
    /// (the `mecab_ko_dic/dictionary` of PyPI's python-mecab-ko-dic).
    ImportKoDic {
        source: PathBuf,
        /// Where to write it [default: the cache's models/ko-dic].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Build the Japanese dictionary from a compiled IPADIC directory (the
    /// `ipadic/dicdir` of PyPI's ipadic).
    ImportJaDic {
        source: PathBuf,
        /// Where to write it [default: the cache's models/ja-dic].
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub(crate) enum EvalCmd {
    /// Run a golden query suite (YAML) against the index.
    Run {
        suite: PathBuf,
        /// Modes to measure (repeatable) [default: every mode available].
        #[arg(long)]
        mode: Vec<String>,
        /// Cut-off for hit@k, recall@k and precision@k.
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// Also ask each query (`[models.llm]`) and judge the answer by
        /// the query's `must_contain` and `forbidden`.
        #[arg(long)]
        answers: bool,
    },
    /// Ingest a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv)
    /// and report nDCG@10 and recall@100 per mode.
    Beir {
        dir: PathBuf,
        /// Modes to measure (repeatable) [default: every mode available].
        #[arg(long)]
        mode: Vec<String>,
        /// Hybrid fusions to compare side by side (repeatable): `rrf`,
        /// `rrf:K`, `blend`, `blend:W`, `blend-z:W` [default: the configured
        /// fusion].
        #[arg(long)]
        fusion: Vec<String>,
        /// Only the first N queries that have judgements.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Measure the vector index against an exact scan: recall@k and
    /// latency per ANN setting (`[search] ann_nprobes`, `ann_ef`,
    /// `ann_refine_factor`).
    Ann {
        /// A query (repeatable).
        #[arg(long)]
        query: Vec<String>,
        /// Queries from a file: one per line, or JSON lines with a `text`
        /// field (a BEIR queries.jsonl).
        #[arg(long)]
        queries: Option<PathBuf>,
        /// Only the first N queries.
        #[arg(long)]
        limit: Option<usize>,
        /// Neighbours compared per query.
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// IVF partitions to try (repeatable) [default: the configured].
        #[arg(long)]
        nprobes: Vec<usize>,
        /// HNSW candidates to try (repeatable) [default: the configured].
        #[arg(long)]
        ef: Vec<usize>,
        /// Refine factors to try (repeatable; 0: no re-scoring) [default: the configured].
        #[arg(long)]
        refine: Vec<u32>,
    },
}

#[derive(Subcommand)]
pub(crate) enum PluginCmd {
    /// Install a plugin component (file, directory or http(s) URL).
    Install {
        source: String,
        /// Expected blake3 hex digest of the component.
        #[arg(long)]
        blake3: Option<String>,
        /// Allow installing an older version (removes the newer ones) or
        /// one older than the built-in plugin it replaces.
        #[arg(long)]
        allow_downgrade: bool,
        /// Allow a plugin named like a built-in one (`text`, `markdown`…)
        /// to replace it, or one whose patterns claim files another plugin
        /// handles (`*`, `*.md`…) to take them.
        #[arg(long, visible_alias = "take-over")]
        replace_builtin: bool,
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
        /// `rust`, `python` or `js`.
        #[arg(long, default_value = "rust")]
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
    /// Compile every plugin into the cache (run by kebab itself, apart,
    /// on a first run).
    #[command(hide = true)]
    Warm,
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
pub(crate) enum RootsCmd {
    /// Every root, with its size and freshness.
    List,
    /// Give a root another name (documents, IDs and vectors stay).
    Rename { name: String, new_name: String },
    /// Remove a root: its documents, chunks and vectors (not its files).
    Remove { name: String },
}

#[derive(Subcommand)]
pub(crate) enum SessionsCmd {
    /// Every session, most recently used first.
    List,
    /// One session's turns: questions, answers and what they cite.
    Show { id: String },
    /// Delete a session: its turns and its stored answers.
    Delete { id: String },
}

#[derive(Subcommand)]
enum ListWhat {
    /// Indexed documents.
    Docs,
}

/// Exit codes (README, "Using it").
pub(crate) const EXIT_OK: u8 = 0;
pub(crate) const EXIT_NO_HIT: u8 = 1;
pub(crate) const EXIT_ERROR: u8 = 2;
pub(crate) const EXIT_UNHEALTHY: u8 = 3;

fn main() -> ExitCode {
    kebab::app::create_private_files();
    let cli = Cli::parse();
    let json = cli.json;
    let _log = cli::logging::init(if cli.debug {
        cli::logging::Verbosity::Debug
    } else if cli.verbose {
        cli::logging::Verbosity::Info
    } else {
        cli::logging::Verbosity::Quiet
    });
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        // A command that failed because Ctrl-C stopped it (a plugin call,
        // waiting for the writer lock) exits as interrupted.
        Err(_) if kebab::interrupt::requested() => {
            errln!("interrupted");
            ExitCode::from(kebab::interrupt::EXIT_INTERRUPTED)
        }
        Err(err) => {
            report_error(&err, json);
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: Cli) -> Result<u8> {
    let (config, config_error, paths) = load_config(&cli)?;
    let warming = matches!(
        cli.command,
        Command::Plugin {
            what: PluginCmd::Warm
        }
    );
    if !warming && let Ok(exe) = std::env::current_exe() {
        kebab::app::compile_plugins_apart(exe);
    }
    dispatch(cli.command, config, paths, config_error, cli.json)
}

/// The config in force (defaults for a `doctor` whose config fails to
/// load, with the error kept for its report) and the paths it implies.
fn load_config(cli: &Cli) -> Result<(Config, Option<kebab::config::ConfigError>, Paths)> {
    let config_path = cli
        .config
        .clone()
        .unwrap_or_else(kebab::config::default_config_path);
    // A config that does not load stops every command but `doctor`, which
    // reports it as its first failed check and runs the rest on defaults.
    let (config, config_error) = match Config::load(&config_path) {
        Ok(config) => (config, None),
        Err(e) if matches!(cli.command, Command::Doctor) => (Config::default(), Some(e)),
        Err(e) => return Err(e.into()),
    };
    if !cli.json {
        for w in &config.warnings {
            errln!("warning: {}", kebab::sanitize::escape_control(w));
        }
    }
    let paths = Paths::resolve(Some(config_path), cli.data_dir.clone(), &config);
    if let Some(note) = kebab::app::make_private(&paths.data_dir)
        && !cli.json
    {
        errln!("note: {}", kebab::sanitize::escape_control(&note));
    }
    let config = config.with_data_dir(&paths.data_dir);
    Ok((config, config_error, paths))
}

impl From<FetchWhat> for FetchTarget {
    fn from(what: FetchWhat) -> Self {
        match what {
            FetchWhat::Chunk { id, context } => FetchTarget::Chunk {
                chunk_id: id,
                context,
            },
            FetchWhat::Doc { id, max_tokens } => FetchTarget::Doc {
                doc_id: id,
                max_tokens,
            },
            FetchWhat::Span {
                doc_id,
                line_start,
                line_end,
                max_tokens,
            } => FetchTarget::Span {
                doc_id,
                line_start,
                line_end,
                max_tokens,
            },
        }
    }
}

/// Run one command.
fn dispatch(
    command: Command,
    config: Config,
    paths: Paths,
    config_error: Option<kebab::config::ConfigError>,
    json: bool,
) -> Result<u8> {
    match command {
        Command::Init { force } => init(&paths, force, json),
        Command::Ingest {
            path,
            name,
            strict,
            shard,
        } => ingest(
            &Session::new(config, paths),
            &path,
            (name.as_deref(), shard),
            strict,
            json,
        ),
        Command::Search {
            query,
            bulk,
            k,
            kind,
            code_lang,
            repo,
            path,
            tag,
            lang,
            trust_min,
            mode,
            explain,
            roots,
        } => {
            let session = Session::new(config, paths);
            if bulk {
                return search_bulk(&session, json);
            }
            let session = session.for_one_query();
            let input = SearchInput {
                query: query.unwrap_or_default(),
                k,
                mode,
                path,
                tag,
                kind,
                code_lang,
                repo,
                roots,
                lang,
                trust_min,
                scope: Default::default(),
            };
            search(&session, &input, explain, json)
        }
        Command::List {
            what: ListWhat::Docs,
            roots,
        } => list_docs(&Session::new(config, paths), &roots, json),
        Command::Schema => schema(&Session::new(config, paths), json),
        Command::Mcp { token_file } => mcp::serve(config, paths, token_file.as_deref()),
        Command::Serve {
            listen,
            watch,
            roots,
            token_file,
            readers,
            queue,
            timeout,
            stateless,
        } => serve::serve(
            config,
            paths,
            serve::Options {
                listen,
                watch,
                roots,
                token_file,
                readers,
                queue,
                timeout_secs: timeout,
                stateless,
                json,
            },
        ),
        Command::Ask {
            question,
            explain,
            session,
            k,
            mode,
            roots,
            lang,
            trust_min,
            multi_hop,
            single_pass,
        } => {
            let multi_hop = match (multi_hop, single_pass) {
                (true, _) => Some("always".to_string()),
                (_, true) => Some("off".to_string()),
                _ => None,
            };
            let input = kebab::api::ask::AskInput {
                question,
                session,
                mode,
                k,
                roots,
                lang,
                trust_min,
                multi_hop,
                explain,
                scope: Default::default(),
            };
            ask(&Session::new(config, paths).for_one_query(), &input, json)
        }
        Command::Doctor => doctor(&Session::new(config, paths), config_error, json),
        Command::Plugin { what } => kebab_plugin_cmd(&Session::new(config, paths), what, json),
        Command::Models { what } => models_cmd(&Session::new(config, paths), what, json),
        Command::Eval { what } => eval_cmd(&Session::new(config, paths), what, json),
        Command::Reindex { plugin } => reindex(&Session::new(config, paths), &plugin, json),
        Command::Fetch { what, roots } => {
            let target = FetchTarget::from(what);
            render(
                json,
                &Session::new(config, paths).fetch(
                    &target,
                    &roots,
                    &kebab::api::Scope::Everything,
                )?,
                print_fetch,
            )
        }
        Command::Roots { what } => roots_cmd(&Session::new(config, paths), what, json),
        Command::Sessions { what } => sessions_cmd(&Session::new(config, paths), what, json),
        Command::Watch { roots, max_threads } => {
            let mut config = config;
            if let Some(n) = max_threads {
                config.limit_threads(usize::from(n));
            }
            watch(&Session::new(config, paths), &roots, json)
        }
    }
}
