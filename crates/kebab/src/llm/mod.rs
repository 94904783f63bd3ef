//! Chat with a local (or remote) LLM server, streaming: Ollama's `/api/chat`
//! (NDJSON) or any OpenAI-compatible `/v1/chat/completions` (SSE).
//!
//! Whatever the server sends, one generation is bounded: in wall time
//! (`timeout_secs` covers the request and the whole stream), in streamed
//! tokens (`max_answer_tokens`, counted by the host, not only requested),
//! in answer bytes ([`BYTES_PER_TOKEN`] a token) and in the bytes of one
//! stream line; the text kept from a stopped stream is bounded the same way.

mod body;
mod ollama;
mod openai;

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use body::{Body, Stop};

use kebab_core::bounds::{MAX_TIMEOUT_SECS, at_most, within};
use serde::{Deserialize, Serialize};

/// `[models.llm]` configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct LlmConfig {
    /// `ollama` or `openai` (any OpenAI-compatible server).
    pub provider: Provider,
    /// Base URL of the server, with or without a trailing `/v1`
    /// (`http://127.0.0.1:8080` and `http://127.0.0.1:8080/v1` are the same
    /// OpenAI-compatible server).
    pub endpoint: String,
    /// Model name as the server knows it.
    pub model: String,
    pub temperature: f32,
    pub seed: u64,
    /// The model's context window in tokens.
    pub context_tokens: u32,
    /// Longest time one answer may take, from sending the request to the
    /// end of the stream (connecting alone gives up after 10 s at most).
    pub timeout_secs: u64,
    /// Cap on the answer's length: asked of the server, and enforced on the
    /// stream (streamed tokens, and [`BYTES_PER_TOKEN`] bytes a token).
    pub max_answer_tokens: u32,
    /// Name of the environment variable holding an API key (sent as a
    /// bearer token); the key itself never lives in the config file.
    pub api_key_env: Option<String>,
}

/// Largest token count a model setting takes (context, answer, evidence).
pub const MAX_MODEL_TOKENS: u32 = 1 << 20;

impl LlmConfig {
    /// The timeout and token counts within their bounds; the first one
    /// over names `[models.llm]`, its key and bound.
    pub fn check(&self) -> Result<(), String> {
        at_most("timeout_secs", self.timeout_secs, MAX_TIMEOUT_SECS)
            .and_then(|()| at_most("context_tokens", self.context_tokens, MAX_MODEL_TOKENS))
            .and_then(|()| {
                at_most(
                    "max_answer_tokens",
                    self.max_answer_tokens,
                    MAX_MODEL_TOKENS,
                )
            })
            .map_err(|e| format!("[models.llm] {e}"))?;
        within("temperature", self.temperature.into(), 0.0, MAX_TEMPERATURE)
            .map_err(|e| format!("[models.llm] {e}"))
    }
}

/// The highest sampling temperature a setting takes (the OpenAI API's).
pub const MAX_TEMPERATURE: f64 = 2.0;

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
    /// The answer was not complete within the timeout.
    #[error("model server did not finish the answer within {secs} s")]
    Timeout { secs: u64, partial: String },
    /// The stream went past `max_answer_tokens` (in tokens or in bytes);
    /// `partial` holds the answer up to the limit.
    #[error("the model's answer went past the limit of {limit} tokens")]
    TooLong { limit: u32, partial: String },
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
            | LlmError::TooLong { partial, .. }
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
            LlmError::TooLong { .. } => "answer_too_long",
            LlmError::Stream { .. } | LlmError::Cancelled { .. } => "llm_stream_aborted",
        }
    }
}

/// Bytes an answer may hold per token of `max_answer_tokens` (a token of
/// any script is far shorter); a longer answer is [`LlmError::TooLong`].
pub const BYTES_PER_TOKEN: usize = 16;
/// Bytes one stream line may spend besides its text (ids, timings, usage).
const LINE_OVERHEAD: usize = 16 * 1024;
/// Bytes of an error response's body kept for its message.
const ERROR_BODY_BYTES: usize = 64 * 1024;
/// Bytes of a model list read (a hosted provider lists hundreds).
const MODEL_LIST_BYTES: usize = 8 * 1024 * 1024;

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

/// The limits of one answer's stream.
struct Limits {
    /// Tokens (content events) the answer may hold.
    tokens: u32,
    /// Bytes the answer may hold.
    bytes: usize,
    /// Bytes one line may hold: the whole answer escaped (at most 6 bytes
    /// a byte in JSON) and the protocol's own fields.
    line: usize,
}

impl Limits {
    fn of(config: &LlmConfig) -> Limits {
        let bytes = (config.max_answer_tokens as usize).saturating_mul(BYTES_PER_TOKEN);
        Limits {
            tokens: config.max_answer_tokens,
            bytes,
            line: bytes.saturating_mul(6).saturating_add(LINE_OVERHEAD),
        }
    }
}

impl LlmClient {
    /// A client for `config`.
    pub fn new(config: LlmConfig) -> Result<LlmClient, LlmError> {
        let http = kebab_core::http::api_client(config.timeout_secs).map_err(|e| {
            LlmError::Unreachable {
                endpoint: config.endpoint.clone(),
                detail: e.to_string(),
            }
        })?;
        Ok(LlmClient { config, http })
    }

    /// The configuration in use.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// `path` (which starts with `/v1` for OpenAI's API) on the server; an
    /// endpoint given with its `/v1` is the same server.
    fn url(&self, path: &str) -> String {
        let base = self.config.endpoint.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}{path}")
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

    /// When a call started now must be over.
    fn deadline(&self) -> Instant {
        Instant::now() + Duration::from_secs(self.config.timeout_secs.max(1))
    }

    /// Stream a chat completion, calling `on_token` for each piece of text.
    /// `cancel` is checked at least every 100 ms. The whole call ends within
    /// `timeout_secs`, and the answer within `max_answer_tokens`.
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
        let deadline = self.deadline();
        let response = self
            .request(reqwest::Method::POST, path)
            .json(&body)
            .send()
            .map_err(|e| self.transport_error(e, String::new()))?;
        let status = response.status();
        let body = Body::new(response, deadline);
        if !status.is_success() {
            let text = body
                .read_up_to(ERROR_BODY_BYTES, cancel)
                .unwrap_or_default();
            return Err(self.status_error(status.as_u16(), &String::from_utf8_lossy(&text)));
        }
        self.stream(&body, protocol.as_mut(), on_token, cancel)
    }

    /// Read the answer's stream line by line within [`Limits`].
    fn stream(
        &self,
        body: &Body,
        protocol: &mut dyn StreamProtocol,
        on_token: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<Completion, LlmError> {
        let limits = Limits::of(&self.config);
        let too_long = |partial: String| LlmError::TooLong {
            limit: limits.tokens,
            partial,
        };
        let mut done = Completion::default();
        let mut tokens = 0u32;
        // Bytes of lines not yet complete.
        let mut pending: Vec<u8> = Vec::new();
        loop {
            let piece = body
                .next(cancel)
                .map_err(|stop| self.stopped(stop, std::mem::take(&mut done.text)))?;
            let end = piece.is_empty();
            pending.extend_from_slice(&piece);
            let mut start = 0;
            loop {
                let line = match pending[start..].iter().position(|&b| b == b'\n') {
                    Some(i) => &pending[start..start + i],
                    // The last line may lack its newline.
                    None if end && start < pending.len() => &pending[start..],
                    None => break,
                };
                start = (start + line.len() + 1).min(pending.len());
                let line = String::from_utf8_lossy(line);
                match protocol.line(line.trim_end_matches('\r'), &mut done) {
                    Ok(LineEvent::Nothing) => {}
                    Ok(LineEvent::Token(t)) => {
                        tokens += 1;
                        let room = if tokens > limits.tokens {
                            0
                        } else {
                            limits.bytes.saturating_sub(done.text.len())
                        };
                        let kept = &t[..floor_char_boundary(&t, room)];
                        if !kept.is_empty() {
                            on_token(kept);
                            done.text.push_str(kept);
                        }
                        if kept.len() < t.len() {
                            return Err(too_long(done.text));
                        }
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
            pending.drain(..start);
            if end {
                return Err(LlmError::Stream {
                    detail: "the server closed the stream before the answer was complete".into(),
                    partial: done.text,
                });
            }
            if pending.len() > limits.line {
                return Err(too_long(done.text));
            }
        }
    }

    /// Names of the models the server offers (`/api/tags` or `/v1/models`).
    pub fn models(&self) -> Result<Vec<String>, LlmError> {
        let path = match self.config.provider {
            Provider::Ollama => "/api/tags",
            Provider::OpenAi => "/v1/models",
        };
        let deadline = self.deadline();
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .map_err(|e| self.transport_error(e, String::new()))?;
        let status = response.status();
        let text = Body::new(response, deadline)
            .read_up_to(MODEL_LIST_BYTES, &AtomicBool::new(false))
            .map_err(|stop| self.stopped(stop, String::new()))?;
        let text = String::from_utf8_lossy(&text);
        if !status.is_success() {
            return Err(self.status_error(status.as_u16(), &text));
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

    /// The error of a body that stopped giving bytes.
    fn stopped(&self, stop: Stop, partial: String) -> LlmError {
        match stop {
            Stop::Deadline => LlmError::Timeout {
                secs: self.config.timeout_secs,
                partial,
            },
            Stop::Cancelled => LlmError::Cancelled { partial },
            Stop::Failed(e) => self.read_error(e, partial),
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

    fn status_error(&self, status: u16, body: &str) -> LlmError {
        let lower = body.to_lowercase();
        let missing = status == 404
            && (lower.contains("not found")
                || lower.contains("model_not_found")
                || lower.contains("does not exist"));
        if missing {
            LlmError::ModelNotPulled {
                model: self.config.model.clone(),
                detail: excerpt(body.trim()),
            }
        } else {
            LlmError::Http {
                status,
                body: excerpt(body.trim()),
            }
        }
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a
/// character boundary.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    let mut at = max.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// At most 300 bytes of a server's text, for an error message.
fn excerpt(text: &str) -> String {
    text[..floor_char_boundary(text, 300)].to_string()
}

/// The innermost error message (reqwest nests the useful part).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(provider: Provider, endpoint: &str, max_answer_tokens: u32) -> LlmClient {
        LlmClient::new(LlmConfig {
            provider,
            endpoint: endpoint.into(),
            max_answer_tokens,
            ..LlmConfig::default()
        })
        .unwrap()
    }

    /// Stream `bytes` through the Ollama parser of a client allowing
    /// `max_answer_tokens`.
    fn ollama_stream(max_answer_tokens: u32, bytes: Vec<u8>) -> Result<Completion, LlmError> {
        let llm = client(Provider::Ollama, "http://127.0.0.1:1", max_answer_tokens);
        let body = Body::new(std::io::Cursor::new(bytes), llm.deadline());
        llm.stream(
            &body,
            &mut ollama::Stream,
            &mut |_| {},
            &AtomicBool::new(false),
        )
    }

    fn token_line(t: &str) -> String {
        serde_json::json!({"message": {"role": "assistant", "content": t}, "done": false})
            .to_string()
            + "\n"
    }

    #[test]
    fn endpoints_with_and_without_v1_are_one_server() {
        for endpoint in [
            "http://h:8080",
            "http://h:8080/",
            "http://h:8080/v1",
            "http://h:8080/v1/",
        ] {
            let llm = client(Provider::OpenAi, endpoint, 10);
            assert_eq!(
                llm.url("/v1/chat/completions"),
                "http://h:8080/v1/chat/completions"
            );
        }
    }

    #[test]
    fn the_host_cuts_an_answer_at_max_answer_tokens() {
        let stream: String = (0..50).map(|_| token_line("word ")).collect();
        match ollama_stream(10, stream.into_bytes()) {
            Err(LlmError::TooLong { limit: 10, partial }) => {
                assert_eq!(partial, "word ".repeat(10))
            }
            other => panic!("{other:?}"),
        }
        let within = token_line("a ").repeat(10) + r#"{"done":true}"#;
        assert_eq!(
            ollama_stream(10, within.into_bytes()).unwrap().text,
            "a ".repeat(10)
        );
    }

    #[test]
    fn one_huge_token_or_line_is_cut_to_the_byte_bound() {
        // A token past the byte bound, on a line within the line bound.
        let huge = token_line(&"x".repeat(1_000));
        match ollama_stream(10, huge.into_bytes()) {
            Err(LlmError::TooLong { partial, .. }) => {
                assert_eq!(partial.len(), 10 * BYTES_PER_TOKEN)
            }
            other => panic!("{other:?}"),
        }
        // A line past the line bound, never ended.
        let endless = [br#"{"message":{"content":""#.as_slice(), &[b'y'; 4_000_000]].concat();
        match ollama_stream(10, endless) {
            Err(LlmError::TooLong { partial, .. }) => assert!(partial.is_empty()),
            other => panic!("{other:?}"),
        }
        // A multi-byte character is never split.
        match ollama_stream(1, token_line(&"가".repeat(100)).into_bytes()) {
            Err(LlmError::TooLong { partial, .. }) => assert_eq!(partial, "가".repeat(5)),
            other => panic!("{other:?}"),
        }
    }
}
