//! The `kebab` command line.

mod cli;

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
        /// lexical, vector or hybrid [default: hybrid when an embedding
        /// model is installed, else lexical].
        #[arg(long)]
        mode: Option<String>,
        /// Show each channel's rank and score under every hit.
        #[arg(long)]
        explain: bool,
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
    },
    /// Ingest a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv)
    /// and report nDCG@10 and recall@100 per mode.
    Beir {
        dir: PathBuf,
        /// Modes to measure (repeatable) [default: every mode available].
        #[arg(long)]
        mode: Vec<String>,
        /// Only the first N queries that have judgements.
        #[arg(long)]
        limit: Option<usize>,
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
        /// to replace it.
        #[arg(long)]
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
pub(crate) const EXIT_OK: u8 = 0;
pub(crate) const EXIT_NO_HIT: u8 = 1;
pub(crate) const EXIT_ERROR: u8 = 2;
pub(crate) const EXIT_UNHEALTHY: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        // A command that failed because Ctrl-C stopped it (a plugin call,
        // waiting for the writer lock) exits as interrupted.
        Err(_) if kebab::interrupt::requested() => {
            eprintln!("interrupted");
            ExitCode::from(kebab::interrupt::EXIT_INTERRUPTED)
        }
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
        Command::Search {
            query,
            k,
            kind,
            code_lang,
            repo,
            path,
            tag,
            mode,
            explain,
        } => {
            let app = App::open(config, paths)?;
            let filter = kebab::store::ChunkFilter {
                kind,
                code_lang: code_lang.map(|l| l.to_lowercase()),
                repo,
                path_glob: path,
                tag,
            };
            search(&app, &query, k, mode.as_deref(), &filter, explain, cli.json)
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
                ..Default::default()
            };
            ask(&mut app, &question, &opts, cli.json)
        }
        Command::Doctor => doctor(config, paths, cli.json),
        Command::Plugin { what } => {
            let app = App::open(config, paths)?;
            kebab_plugin_cmd(&app, what, cli.json)
        }
        Command::Models { what } => {
            let app = App::open(config, paths)?;
            match what {
                ModelsCmd::List => models_list(&app, cli.json),
                ModelsCmd::Pull { name, endpoint } => models_pull(&app, &name, endpoint, cli.json),
                ModelsCmd::ImportKoDic { source, out } => {
                    models_import_ko_dic(&app, &source, out, cli.json)
                }
            }
        }
        Command::Eval { what } => {
            let mut app = App::open(config, paths)?;
            match what {
                EvalCmd::Run { suite, mode, k } => eval_run(&mut app, &suite, &mode, k, cli.json),
                EvalCmd::Beir { dir, mode, limit } => eval_beir(&app, &dir, &mode, limit, cli.json),
            }
        }
        Command::Reindex { plugin } => {
            let mut app = App::open(config, paths)?;
            reindex(&mut app, &plugin, cli.json)
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
