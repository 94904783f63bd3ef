//! The index served to agents over the Model Context Protocol (via
//! `rmcp`): [`KebabServer`] answers `kebab mcp` on stdio (JSON-RPC 2.0,
//! one message a line) and `kebab serve`'s Streamable HTTP endpoint alike.
//!
//! Every tool ([`tools`]) calls the same [`kebab::api::Session`] function
//! as the CLI command of the same name and returns the same `*.v1` JSON,
//! as structured content and as its text. A failure is a tool result with
//! `isError: true` and an `error.v1` body; a refusal, no hit or an
//! unhealthy doctor are ordinary results the agent reads the flags of.
//!
//! Calls run on the [`crate::engine`]: reader threads for every tool but
//! the two that wait on the model server (`ask`, `doctor`), which have a
//! thread of their own, so no answer being generated holds up a search.
//! A call that panics is answered with `internal_error` and the next is
//! served. A call the client cancels (or leaves behind by going away)
//! stops its `ask`.
//!
//! `kebab mcp` first looks for a `kebab serve` running on the same data
//! directory ([`forward`]): when one answers, every call is forwarded to
//! it, so every editor on the machine shares one warm engine; when none
//! runs, or it stops, calls are served in this process. On stdio, the
//! transport ([`transport`]) answers what rmcp alone leaves unanswered:
//! lines over [`transport::MAX_MESSAGE_BYTES`], lines that are not JSON,
//! and requests reusing an id in flight. Stdout carries protocol messages
//! only: nothing in this process prints to it while serving.

mod forward;
pub(crate) mod tools;
pub(crate) mod transport;

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::engine::{Engine, Limits};
use kebab::api::{Scope, Session};
use kebab::app::Paths;
use kebab::config::Config;

/// The in-process engine of `kebab mcp`: one reader (a stdio client sends
/// its calls one after another, mostly), calls queued up to a bound and
/// not timed (the client decides how long it waits).
const STDIO_LIMITS: Limits = Limits {
    readers: 1,
    read_queue: 256,
    model_queue: 64,
    timeout: None,
};

/// The rmcp handler: lists the tools and runs calls on the engine, or
/// forwards them to a running `kebab serve`.
#[derive(Clone)]
pub(crate) struct KebabServer {
    engine: Arc<Engine>,
    /// Where calls go when `kebab mcp` runs on stdio: a `kebab serve`
    /// while one answers ([`forward::Forwarding`]).
    upstream: Option<Arc<forward::Forwarding>>,
}

impl KebabServer {
    /// A handler answering every call on `engine`.
    pub(crate) fn new(engine: Arc<Engine>) -> KebabServer {
        KebabServer {
            engine,
            upstream: None,
        }
    }
}

/// Whose call it is: over HTTP, the scope `kebab serve`'s guard found for
/// the request's token (a request without one was refused before it got
/// here); over stdio, the local user's, who may read everything.
fn caller(context: &RequestContext<RoleServer>) -> Result<Scope, ErrorData> {
    match context.extensions.get::<axum::http::request::Parts>() {
        None => Ok(Scope::Everything),
        Some(parts) => parts
            .extensions
            .get::<Scope>()
            .cloned()
            .ok_or_else(|| ErrorData::internal_error("the request has no caller", None)),
    }
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
        Ok(ListToolsResult::with_all_items(tools::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::tools().into_iter().find(|t| t.name == name)
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
        if let Some(upstream) = &self.upstream {
            // Cancelling drops the forwarded request, which rmcp cancels
            // upstream.
            let forwarded = tokio::select! {
                forwarded = upstream.call(request.clone()) => forwarded,
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("cancelled by the client", None));
                }
            };
            if let Some(answer) = forwarded {
                return answer;
            }
        }
        let tool = request.name.to_string();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let scope = caller(&context)?;
        let outcome = tokio::select! {
            outcome = self.engine.call(tools::lane(&tool), &tool, arguments, scope) => outcome,
            // rmcp sends nothing for a cancelled call; dropping the call
            // stops it.
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

/// `kebab mcp`: serve on stdio until the client closes stdin, forwarding
/// to a `kebab serve` on the same data directory while one answers.
/// `token_file` (else `KEBAB_SERVE_TOKEN`) holds the token that server
/// wants.
pub(crate) fn serve(config: Config, paths: Paths, token_file: Option<&Path>) -> Result<u8> {
    let token = kebab::service::load_token(token_file)?;
    let session = Session::new(config, paths.clone()).keep_fresh(true);
    // Nothing loads until a call needs it, so a forwarding `kebab mcp`
    // stays small.
    let (engine, workers) = Engine::start(&session, STDIO_LIMITS, tools::dispatch)?;
    drop(session);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP runtime")?;
    let served = runtime.block_on(async {
        let upstream = Arc::new(forward::Forwarding::start(&paths.data_dir, token).await);
        let server = KebabServer {
            engine: engine.clone(),
            upstream: Some(upstream.clone()),
        };
        let service = server
            .serve(transport::GuardedStdio::start())
            .await
            .context("MCP handshake")?;
        let waited = service.waiting().await.context("MCP service");
        upstream.close().await;
        waited.map(|_| ())
    });
    // Calls still running are dropped with the runtime: their asks are
    // told to stop and every handle on the engine goes, so its threads
    // finish.
    drop(runtime);
    drop(engine);
    served?;
    workers.join();
    Ok(crate::EXIT_OK)
}
