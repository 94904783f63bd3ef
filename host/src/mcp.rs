//! `kebab mcp`: the index served to agents over the Model Context Protocol
//! (JSON-RPC 2.0 on stdio, via `rmcp`).
//!
//! Every tool calls the same [`kebab::api::Session`] function as the CLI
//! command of the same name and returns the same `*.v1` JSON, as
//! structured content and as its text. A failure is a tool result with
//! `isError: true` and an `error.v1` body; a refusal, no hit or an
//! unhealthy doctor are ordinary results the agent reads the flags of.
//!
//! The session lives on one engine thread for the life of the server, so
//! the index, plugins, embedding model and Korean analyser load once; tool
//! calls are queued to it in arrival order. Stdout carries protocol
//! messages only: nothing in this process prints to it while serving.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

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

/// A tool call handed to the engine thread, with where to put its result.
struct Job {
    tool: String,
    arguments: Value,
    reply: oneshot::Sender<Result<Value, Value>>,
}

/// The rmcp handler: lists the tools and queues calls to the engine.
#[derive(Clone)]
struct KebabServer {
    jobs: std::sync::mpsc::Sender<Job>,
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
            "Every indexed document ({\"docs\": [doc_summary.v1, …]}).",
            schema_for_type::<NoArgs>(),
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.get_tool(&request.name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        }
        let (reply, result) = oneshot::channel();
        let job = Job {
            tool: request.name.to_string(),
            arguments: Value::Object(request.arguments.unwrap_or_default()),
            reply,
        };
        let engine_gone = || ErrorData::internal_error("the kebab engine stopped", None);
        self.jobs.send(job).map_err(|_| engine_gone())?;
        Ok(match result.await.map_err(|_| engine_gone())? {
            Ok(value) => CallToolResult::structured(value),
            Err(error) => CallToolResult::structured_error(error),
        }
        .into())
    }
}

/// Run `tool` on the session: its `*.v1` value, or an `error.v1` body.
fn dispatch(session: &Session, tool: &str, arguments: Value) -> Result<Value, Value> {
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
            "fetch" => to_value(&session.fetch(&parse::<FetchInput>(arguments)?.target()?)?),
            "ask" => {
                let input = parse::<AskInput>(arguments)?;
                let outcome = session.ask(&input, &mut |_| {}, &AtomicBool::new(false))?;
                match outcome.error {
                    Some(e) => return Err(e.into()),
                    None => to_value(&outcome.answer),
                }
            }
            "list_docs" => {
                parse::<NoArgs>(arguments)?;
                json!({ "docs": session.list_docs()? })
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

/// Serve until the client closes stdin. The session is built on the
/// engine thread, which owns it to the end.
pub(crate) fn serve(config: Config, paths: Paths) -> Result<u8> {
    let (jobs, queue) = std::sync::mpsc::channel::<Job>();
    let engine = std::thread::Builder::new()
        .name("kebab-engine".into())
        .spawn(move || {
            let session = Session::new(config, paths).keep_fresh(true);
            for job in queue {
                let started = std::time::Instant::now();
                let result = dispatch(&session, &job.tool, job.arguments);
                tracing::info!(
                    tool = job.tool,
                    ok = result.is_ok(),
                    ms = started.elapsed().as_secs_f64() * 1000.0,
                    "mcp tool call"
                );
                let _ = job.reply.send(result);
            }
        })
        .context("starting the engine thread")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP runtime")?;
    runtime.block_on(async {
        let service = KebabServer { jobs }
            .serve(rmcp::transport::stdio())
            .await
            .context("MCP handshake")?;
        service.waiting().await.context("MCP service")?;
        anyhow::Ok(())
    })?;
    // The handler (and so the job sender) is gone: the engine finishes.
    let _ = engine.join();
    Ok(crate::EXIT_OK)
}
