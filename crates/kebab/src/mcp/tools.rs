//! The MCP tools: their names, descriptions and input schemas, which
//! lane of the [`crate::engine`] runs each, and [`dispatch`], which runs
//! one on a [`Session`] by calling the same use-case function as the CLI
//! command of the same name. `kebab mcp`, `kebab serve`'s `/mcp` endpoint
//! and its read-only `/v1` HTTP API all answer through it.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::engine::Lane;
use kebab::api::ask::AskInput;
use kebab::api::search::SearchInput;
use kebab::api::{ApiError, FetchInput, Scope, Session};

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

/// The arguments of `show_session` and `delete_session`.
#[derive(serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SessionArgs {
    /// The conversation's id (`ask`'s `session`; `list_sessions` lists them).
    session_id: String,
}

/// The tools, their descriptions and input schemas.
pub(crate) fn tools() -> Vec<Tool> {
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
    let mut delete_session = Tool::new(
        "delete_session",
        "Delete a conversation `ask` kept, with its turns and stored answers \
         (session_delete.v1: what was removed).",
        schema_for_type::<SessionArgs>(),
    );
    delete_session.annotations = Some(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(true),
    );
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
            "list_sessions",
            "The conversations `ask` keeps (its `session` argument), most recently used first \
             (session_list.v1).",
            schema_for_type::<NoArgs>(),
        ),
        tool(
            "show_session",
            "One conversation turn by turn: each question, answer and its citations (session.v1).",
            schema_for_type::<SessionArgs>(),
        ),
        delete_session,
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

/// The lane a tool runs on: the model's for the tools that wait on the
/// model server (`ask`, `doctor`), the readers' for every other.
pub(crate) fn lane(tool: &str) -> Lane {
    match tool {
        "ask" | "doctor" => Lane::Model,
        _ => Lane::Read,
    }
}

/// Run `tool` on the session: its `*.v1` value, or an `error.v1` body.
pub(crate) fn dispatch(
    session: &Session,
    scope: &Scope,
    tool: &str,
    arguments: Value,
    cancel: &AtomicBool,
    on_token: &mut dyn FnMut(&str),
) -> Result<Value, Value> {
    let run = || -> Result<Value, ApiError> {
        Ok(match tool {
            "search" => {
                let input = SearchInput {
                    scope: scope.clone(),
                    ..parse::<SearchInput>(arguments)?
                };
                to_value(&session.search(&input)?)
            }
            "bulk_search" => {
                // The cap is `Session::bulk_search`'s to check.
                let queries = parse::<BulkSearchArgs>(arguments)?.queries;
                let inputs = queries
                    .into_iter()
                    .map(|q| {
                        serde_json::from_value::<SearchInput>(q)
                            .map(|input| SearchInput {
                                scope: scope.clone(),
                                ..input
                            })
                            .map_err(|e| ApiError::invalid("queries", e.to_string()))
                    })
                    .collect();
                to_value(&session.bulk_search(inputs)?)
            }
            "fetch" => {
                let input = parse::<FetchInput>(arguments)?;
                to_value(&session.fetch(&input.target()?, &input.roots, scope)?)
            }
            "ask" => {
                let input = AskInput {
                    scope: scope.clone(),
                    ..parse::<AskInput>(arguments)?
                };
                let outcome = session.ask(&input, on_token, cancel)?;
                match outcome.error {
                    Some(e) => return Err(e.into()),
                    None => to_value(&outcome.answer),
                }
            }
            "list_docs" => {
                let input = parse::<ListDocsArgs>(arguments)?;
                json!({ "docs": session.list_docs(&input.roots, scope)? })
            }
            "list_sessions" => {
                parse::<NoArgs>(arguments)?;
                to_value(&session.sessions(scope)?)
            }
            "show_session" => {
                let id = parse::<SessionArgs>(arguments)?.session_id;
                to_value(&session.session_view(scope, &id)?)
            }
            "delete_session" => {
                let id = parse::<SessionArgs>(arguments)?.session_id;
                to_value(&session.delete_session(scope, &id)?)
            }
            "schema" => {
                parse::<NoArgs>(arguments)?;
                to_value(&session.schema(scope)?)
            }
            "doctor" => {
                parse::<NoArgs>(arguments)?;
                to_value(&session.doctor_for(scope)?)
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
