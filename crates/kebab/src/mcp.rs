//! `kebab mcp`: the index served to agents over the Model Context Protocol
//! (JSON-RPC 2.0 on stdio, via `rmcp`).
//!
//! Every tool calls the same [`kebab::api::Session`] function as the CLI
//! command of the same name and returns the same `*.v1` JSON, as
//! structured content and as its text. A failure is a tool result with
//! `isError: true` and an `error.v1` body; a refusal, no hit or an
//! unhealthy doctor are ordinary results the agent reads the flags of.
//!
//! Calls run on two engine threads, each owning a session for the life of
//! the server (the index, plugins, embedding model and Korean analyser
//! load once per engine): the tools that wait on the model server (`ask`,
//! for as long as it streams, and `doctor`, which asks it for its models)
//! on one; every other tool on the other, so no answer being generated
//! and no model server stalling holds up a search or fetch. Each engine takes
//! its calls in arrival order. A call that panics is answered with
//! `internal_error` and its engine rebuilds its session, so the next call
//! is served. A call the client cancels (or leaves behind by closing
//! stdin) stops its `ask`. The transport ([`transport`]) answers what rmcp
//! alone leaves unanswered: lines over [`transport::MAX_MESSAGE_BYTES`],
//! lines that are not JSON, and requests reusing an id in flight. Stdout
//! carries protocol messages only: nothing in this process prints to it
//! while serving.

mod transport;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use anyhow::{Context, Result};
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use kebab::api::ask::AskInput;
use kebab::api::search::SearchInput;
use kebab::api::{ApiError, FetchInput, Session};
use kebab::app::Paths;
use kebab::config::Config;

/// A tool call handed to an engine thread, with where to put its result.
struct Job {
    tool: String,
    arguments: Value,
    /// Set when the caller stops waiting: an `ask` ends its stream.
    cancel: Arc<AtomicBool>,
    reply: oneshot::Sender<Result<Value, Value>>,
}

/// The rmcp handler: lists the tools and queues calls to the engines.
#[derive(Clone)]
struct KebabServer {
    /// Every tool that does not wait on the model server.
    reads: Sender<Job>,
    /// `ask` and `doctor`, on an engine of their own (see the module doc).
    model: Sender<Job>,
}

/// Sets its flag when dropped: a call whose future is dropped (the client
/// cancelled it or went away) stops the work it queued.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `bulk_search`'s arguments. Each query is parsed on its own, so one bad
/// query fails only its item.
#[derive(serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BulkSearchArgs {
    /// Up to 100 searches, each with the fields of the `search` tool.
    #[schemars(with = "Vec<SearchInput>")]
    queries: Vec<Value>,
}

/// `list_docs`' arguments.
#[derive(serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListDocsArgs {
    /// Only documents of these roots [default: every root].
    #[serde(default)]
    roots: Vec<String>,
}

/// The arguments of tools that take none (anything else is refused).
#[derive(serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// The tools, their descriptions and input schemas.
fn tools() -> Vec<Tool> {
    let read_only = || Some(ToolAnnotations::new().read_only(true));
    let tool = |name: &'static str, description: &'static str, schema: Arc<JsonObject>| {
        let mut t = Tool::new(name, description, schema);
        t.annotations = read_only();
        t
    };
    let mut ask = Tool::new(
        "ask",
        "Answer a question from the knowledge base with strict [#n] citations, or refuse when \
         the evidence is weak (answer.v1: grounded, refusal_reason, citations). Needs the \
         configured model server.",
        schema_for_type::<AskInput>(),
    );
    // ask records the answer (and the conversation turn) in the index.
    ask.annotations = Some(ToolAnnotations::new().read_only(false));
    vec![
        tool(
            "search",
            "Hybrid (BM25 + vector) search over the indexed notes and code; every hit carries a \
             citation (search_response.v1).",
            schema_for_type::<SearchInput>(),
        ),
        tool(
            "bulk_search",
            "Up to 100 searches in one call; one bulk_search_item.v1 per query, in order, each \
             with its search_response.v1 or its error.v1 (bulk_search_response.v1).",
            schema_for_type::<BulkSearchArgs>(),
        ),
        tool(
            "fetch",
            "Verbatim indexed text: a chunk (with neighbours), a whole document, or a line span \
             (fetch_result.v1). Ids come from search hits.",
            schema_for_type::<FetchInput>(),
        ),
        ask,
        tool(
            "list_docs",
            "Every indexed document, or those of the roots given ({\"docs\": [doc_summary.v1, …]}).",
            schema_for_type::<ListDocsArgs>(),
        ),
        tool(
            "schema",
            "What this kebab can do: wire schemas, search modes, plugins, models, index \
             statistics (schema.v1).",
            schema_for_type::<NoArgs>(),
        ),
        tool(
            "doctor",
            "Health checks of config, index, plugins, models and model server (doctor.v1).",
            schema_for_type::<NoArgs>(),
        ),
    ]
}

impl ServerHandler for KebabServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("kebab", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "kebab is the user's local knowledge base. `search` (or `bulk_search`) finds \
                 cited passages; `fetch` returns the verbatim text behind a hit; `ask` answers \
                 with citations or refuses.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.get_tool(&request.name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        }
        let (reply, result) = oneshot::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let _stop_when_dropped = CancelOnDrop(cancel.clone());
        let engine = match &*request.name {
            "ask" | "doctor" => &self.model,
            _ => &self.reads,
        };
        let job = Job {
            tool: request.name.to_string(),
            arguments: Value::Object(request.arguments.unwrap_or_default()),
            cancel,
            reply,
        };
        let engine_gone = || ErrorData::internal_error("the kebab engine stopped", None);
        engine.send(job).map_err(|_| engine_gone())?;
        let outcome = tokio::select! {
            outcome = result => outcome.map_err(|_| engine_gone())?,
            // rmcp sends nothing for a cancelled call; the guard stops it.
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("cancelled by the client", None));
            }
        };
        Ok(match outcome {
            Ok(value) => CallToolResult::structured(value),
            Err(error) => CallToolResult::structured_error(error),
        }
        .into())
    }
}

/// How an engine runs one job on its session ([`dispatch`]).
type Handler = fn(&Session, &str, Value, &AtomicBool) -> Result<Value, Value>;

/// Start an engine thread: it builds a session of its own and answers the
/// jobs queued to it with `handler`, in order, until every sender is gone.
/// A job that panics is answered with `internal_error`, and the session
/// (whatever state the panic left in it) is replaced by a fresh one.
fn start_engine(
    name: &str,
    config: Config,
    paths: Paths,
    handler: Handler,
) -> Result<(Sender<Job>, JoinHandle<()>)> {
    let (jobs, queue) = std::sync::mpsc::channel::<Job>();
    let engine = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let fresh = || Session::new(config.clone(), paths.clone()).keep_fresh(true);
            let mut session = fresh();
            for job in queue {
                let started = std::time::Instant::now();
                let tool = job.tool;
                let run = || handler(&session, &tool, job.arguments, &job.cancel);
                let result = catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|panic| {
                    let old = std::mem::replace(&mut session, fresh());
                    // Dropping what the panic left behind may panic too.
                    let _ = catch_unwind(AssertUnwindSafe(move || drop(old)));
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "panicked".into());
                    tracing::error!(
                        tool,
                        panic = message.as_str(),
                        "mcp tool call panicked; session rebuilt"
                    );
                    let call = tool.clone();
                    Err(to_value(&ApiError::Internal { call, message }.report()))
                });
                tracing::info!(
                    tool,
                    ok = result.is_ok(),
                    ms = started.elapsed().as_secs_f64() * 1000.0,
                    "mcp tool call"
                );
                let _ = job.reply.send(result);
            }
        })
        .with_context(|| format!("starting the {name} thread"))?;
    Ok((jobs, engine))
}

/// Run `tool` on the session: its `*.v1` value, or an `error.v1` body.
fn dispatch(
    session: &Session,
    tool: &str,
    arguments: Value,
    cancel: &AtomicBool,
) -> Result<Value, Value> {
    let run = || -> Result<Value, ApiError> {
        Ok(match tool {
            "search" => to_value(&session.search(&parse::<SearchInput>(arguments)?)?),
            "bulk_search" => {
                // The cap is `Session::bulk_search`'s to check.
                let queries = parse::<BulkSearchArgs>(arguments)?.queries;
                let inputs = queries
                    .into_iter()
                    .map(|q| {
                        serde_json::from_value::<SearchInput>(q)
                            .map_err(|e| ApiError::invalid("queries", e.to_string()))
                    })
                    .collect();
                to_value(&session.bulk_search(inputs)?)
            }
            "fetch" => {
                let input = parse::<FetchInput>(arguments)?;
                to_value(&session.fetch(&input.target()?, &input.roots)?)
            }
            "ask" => {
                let input = parse::<AskInput>(arguments)?;
                let outcome = session.ask(&input, &mut |_| {}, cancel)?;
                match outcome.error {
                    Some(e) => return Err(e.into()),
                    None => to_value(&outcome.answer),
                }
            }
            "list_docs" => {
                let input = parse::<ListDocsArgs>(arguments)?;
                json!({ "docs": session.list_docs(&input.roots)? })
            }
            "schema" => {
                parse::<NoArgs>(arguments)?;
                to_value(&session.schema()?)
            }
            "doctor" => {
                parse::<NoArgs>(arguments)?;
                to_value(&session.doctor(None)?)
            }
            other => return Err(ApiError::invalid("name", format!("unknown tool `{other}`"))),
        })
    };
    run().map_err(|e| to_value(&e.report()))
}

/// Tool arguments as the input type, or `invalid_input` saying why not.
fn parse<T: serde::de::DeserializeOwned>(arguments: Value) -> Result<T, ApiError> {
    serde_json::from_value(arguments).map_err(|e| ApiError::invalid("arguments", e.to_string()))
}

fn to_value(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Serve until the client closes stdin. Each session is built on its
/// engine thread, which owns it to the end.
pub(crate) fn serve(config: Config, paths: Paths) -> Result<u8> {
    let (reads, read_engine) =
        start_engine("kebab-engine", config.clone(), paths.clone(), dispatch)?;
    let (model, model_engine) = start_engine("kebab-model", config, paths, dispatch)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP runtime")?;
    let served = runtime.block_on(async {
        let service = KebabServer { reads, model }
            .serve(transport::GuardedStdio::start())
            .await
            .context("MCP handshake")?;
        service.waiting().await.context("MCP service")?;
        anyhow::Ok(())
    });
    // Calls still running are dropped with the runtime: their asks are
    // told to stop and every job sender goes, so the engines finish.
    drop(runtime);
    served?;
    let _ = read_engine.join();
    let _ = model_engine.join();
    Ok(crate::EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handler that panics on the tool `boom` and echoes any other.
    fn boom(_: &Session, tool: &str, _: Value, _: &AtomicBool) -> Result<Value, Value> {
        assert_ne!(tool, "boom", "the tool exploded");
        Ok(json!(tool))
    }

    fn run(engine: &Sender<Job>, tool: &str) -> Result<Value, Value> {
        let (reply, result) = oneshot::channel();
        let job = Job {
            tool: tool.into(),
            arguments: json!({}),
            cancel: Arc::new(AtomicBool::new(false)),
            reply,
        };
        engine.send(job).expect("engine running");
        result.blocking_recv().expect("engine answered")
    }

    #[test]
    fn a_call_that_panics_gets_an_error_and_the_next_call_is_served() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            config_file: dir.path().join("config.toml"),
            data_dir: dir.path().join("data"),
            cache_dir: dir.path().join("cache"),
        };
        let (engine, thread) = start_engine("test", Config::default(), paths, boom).unwrap();
        assert_eq!(run(&engine, "search"), Ok(json!("search")));
        let error = run(&engine, "boom").unwrap_err();
        assert_eq!(error["code"], "internal_error");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("the tool exploded")
        );
        assert_eq!(run(&engine, "fetch"), Ok(json!("fetch")));
        drop(engine);
        thread.join().unwrap();
    }
}
