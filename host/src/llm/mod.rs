//! Chat with a local (or remote) LLM server, streaming: Ollama's `/api/chat`
//! (NDJSON) or any OpenAI-compatible `/v1/chat/completions` (SSE).

mod ollama;
mod openai;

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

/// `[models.llm]` configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct LlmConfig {
    /// `ollama` or `openai` (any OpenAI-compatible server).
    pub provider: Provider,
    /// Base URL of the server.
    pub endpoint: String,
    /// Model name as the server knows it.
    pub model: String,
    pub temperature: f32,
    pub seed: u64,
    /// The model's context window in tokens.
    pub context_tokens: u32,
    /// Longest wait for the server to answer or send the next token.
    pub timeout_secs: u64,
    /// Cap on the answer's length in tokens.
    pub max_answer_tokens: u32,
    /// Name of the environment variable holding an API key (sent as a
    /// bearer token); the key itself never lives in the config file.
    pub api_key_env: Option<String>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: Provider::Ollama,
            endpoint: "http://127.0.0.1:11434".into(),
            model: "qwen2.5:7b-instruct".into(),
            temperature: 0.0,
            seed: 0,
            context_tokens: 32_768,
            timeout_secs: 120,
            max_answer_tokens: 1024,
            api_key_env: None,
        }
    }
}

/// Which wire protocol the server speaks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Ollama,
    #[serde(rename = "openai")]
    OpenAi,
}

impl Provider {
    /// Provider name as reported in `answer.v1`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Ollama => "ollama",
            Provider::OpenAi => "openai",
        }
    }
}

/// One chat message.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Message {
    pub role: &'static str,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: "system",
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: "user",
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: "assistant",
            content: content.into(),
        }
    }
}

/// A finished generation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub text: String,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
}

/// LLM failures. `partial` carries whatever text had streamed in.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    /// Nothing listens at the endpoint.
    #[error("model server unreachable at {endpoint}: {detail}")]
    Unreachable { endpoint: String, detail: String },
    /// The server does not have the model.
    #[error("model `{model}` is not available on the server: {detail}")]
    ModelNotPulled { model: String, detail: String },
    /// No answer or no next token within the timeout.
    #[error("model server did not respond within {secs} s")]
    Timeout { secs: u64, partial: String },
    /// The server answered with an error status.
    #[error("model server returned HTTP {status}: {body}")]
    Http { status: u16, body: String },
    /// The stream broke or was malformed.
    #[error("model stream failed: {detail}")]
    Stream { detail: String, partial: String },
    /// The user cancelled (Ctrl-C).
    #[error("generation cancelled")]
    Cancelled { partial: String },
}

impl LlmError {
    /// Text that had streamed in before the failure.
    pub fn partial(&self) -> &str {
        match self {
            LlmError::Timeout { partial, .. }
            | LlmError::Stream { partial, .. }
            | LlmError::Cancelled { partial } => partial,
            _ => "",
        }
    }

    /// `error.v1` code.
    pub fn code(&self) -> &'static str {
        match self {
            LlmError::Unreachable { .. } | LlmError::Http { .. } => "model_unreachable",
            LlmError::ModelNotPulled { .. } => "model_not_pulled",
            LlmError::Timeout { .. } => "timeout",
            LlmError::Stream { .. } | LlmError::Cancelled { .. } => "llm_stream_aborted",
        }
    }
}

/// A streaming chat client for one configured server and model.
pub struct LlmClient {
    config: LlmConfig,
    http: reqwest::blocking::Client,
}

/// Parses one line of a streaming response.
trait StreamProtocol {
    /// Feed one line; returns a token to append, and whether the stream is
    /// complete (usage, when present, is recorded into `done`).
    fn line(&mut self, line: &str, done: &mut Completion) -> Result<LineEvent, String>;
}

/// What a protocol line meant.
#[derive(Debug)]
enum LineEvent {
    Nothing,
    Token(String),
    Finished,
}

impl LlmClient {
    /// A client for `config`.
    pub fn new(config: LlmConfig) -> Result<LlmClient, LlmError> {
        let http =
            crate::http::api_client(config.timeout_secs).map_err(|e| LlmError::Unreachable {
                endpoint: config.endpoint.clone(),
                detail: e.to_string(),
            })?;
        Ok(LlmClient { config, http })
    }

    /// The configuration in use.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.endpoint.trim_end_matches('/'))
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::blocking::RequestBuilder {
        let mut req = self.http.request(method, self.url(path));
        if let Some(key) = self
            .config
            .api_key_env
            .as_deref()
            .and_then(|v| std::env::var(v).ok())
        {
            req = req.bearer_auth(key);
        }
        req
    }

    /// Stream a chat completion, calling `on_token` for each piece of text.
    /// `cancel` is checked between tokens.
    pub fn chat(
        &self,
        messages: &[Message],
        on_token: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<Completion, LlmError> {
        let (path, body, mut protocol): (&str, serde_json::Value, Box<dyn StreamProtocol>) =
            match self.config.provider {
                Provider::Ollama => (
                    "/api/chat",
                    ollama::request(&self.config, messages),
                    Box::new(ollama::Stream),
                ),
                Provider::OpenAi => (
                    "/v1/chat/completions",
                    openai::request(&self.config, messages),
                    Box::new(openai::Stream),
                ),
            };
        let response = self
            .request(reqwest::Method::POST, path)
            .json(&body)
            .send()
            .map_err(|e| self.transport_error(e, String::new()))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().unwrap_or_default();
            return Err(self.status_error(status.as_u16(), body));
        }
        let mut done = Completion::default();
        let mut reader = BufReader::new(response);
        let mut line = String::new();
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(LlmError::Cancelled { partial: done.text });
            }
            line.clear();
            let n = match reader.read_line(&mut line) {
                Ok(n) => n,
                Err(e) => return Err(self.read_error(e, done.text)),
            };
            if n == 0 {
                return Err(LlmError::Stream {
                    detail: "the server closed the stream before the answer was complete".into(),
                    partial: done.text,
                });
            }
            match protocol.line(line.trim_end_matches(['\r', '\n']), &mut done) {
                Ok(LineEvent::Nothing) => {}
                Ok(LineEvent::Token(t)) => {
                    on_token(&t);
                    done.text.push_str(&t);
                }
                Ok(LineEvent::Finished) => return Ok(done),
                Err(detail) => {
                    return Err(LlmError::Stream {
                        detail,
                        partial: done.text,
                    });
                }
            }
        }
    }

    /// Names of the models the server offers (`/api/tags` or `/v1/models`).
    pub fn models(&self) -> Result<Vec<String>, LlmError> {
        let path = match self.config.provider {
            Provider::Ollama => "/api/tags",
            Provider::OpenAi => "/v1/models",
        };
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .map_err(|e| self.transport_error(e, String::new()))?;
        let status = response.status();
        let text = response
            .text()
            .map_err(|e| self.transport_error(e, String::new()))?;
        if !status.is_success() {
            return Err(self.status_error(status.as_u16(), text));
        }
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| LlmError::Stream {
                detail: format!("model list is not JSON: {e}"),
                partial: String::new(),
            })?;
        let (list, key) = match self.config.provider {
            Provider::Ollama => (&json["models"], "name"),
            Provider::OpenAi => (&json["data"], "id"),
        };
        Ok(list
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m[key].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn transport_error(&self, e: reqwest::Error, partial: String) -> LlmError {
        if e.is_timeout() {
            LlmError::Timeout {
                secs: self.config.timeout_secs,
                partial,
            }
        } else if e.is_connect() || e.is_request() {
            LlmError::Unreachable {
                endpoint: self.config.endpoint.clone(),
                detail: root_cause(&e),
            }
        } else {
            LlmError::Stream {
                detail: root_cause(&e),
                partial,
            }
        }
    }

    fn read_error(&self, e: std::io::Error, partial: String) -> LlmError {
        let timed_out = e.kind() == std::io::ErrorKind::TimedOut
            || e.get_ref()
                .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
                .is_some_and(reqwest::Error::is_timeout);
        if timed_out {
            LlmError::Timeout {
                secs: self.config.timeout_secs,
                partial,
            }
        } else {
            LlmError::Stream {
                detail: e.to_string(),
                partial,
            }
        }
    }

    fn status_error(&self, status: u16, body: String) -> LlmError {
        let lower = body.to_lowercase();
        let missing = status == 404
            && (lower.contains("not found")
                || lower.contains("model_not_found")
                || lower.contains("does not exist"));
        if missing {
            LlmError::ModelNotPulled {
                model: self.config.model.clone(),
                detail: body.trim().to_string(),
            }
        } else {
            let mut body = body.trim().to_string();
            body.truncate(300);
            LlmError::Http { status, body }
        }
    }
}

/// The innermost error message (reqwest nests the useful part).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
