//! A scripted model server on loopback speaking the real Ollama (`/api/chat`,
//! NDJSON) and OpenAI (`/v1/chat/completions`, SSE) streaming wire formats
//! over HTTP/1.1 with chunked transfer encoding, as the real servers do, and
//! OpenAI's `/v1/embeddings` (which Ollama and llama.cpp's server also
//! serve) with bag-of-words vectors.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// Which server to imitate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wire {
    Ollama,
    OpenAi,
}

impl Wire {
    pub fn provider(self) -> &'static str {
        match self {
            Wire::Ollama => "ollama",
            Wire::OpenAi => "openai",
        }
    }
}

/// What the chat endpoint does.
#[derive(Debug, Clone)]
pub enum Script {
    /// Stream these tokens, then finish normally.
    Answer(Vec<String>),
    /// Stream the first `n` tokens, then drop the connection mid-stream.
    CutAfter(Vec<String>, usize),
    /// Send headers, then wait this long before the first token.
    Stall(Duration),
    /// Answer 404 "model not found" the way the server does.
    ModelMissing,
    /// Stream these tokens slowly, one per interval.
    Drip(Vec<String>, Duration),
    /// Stream this token once per interval and never finish (until the
    /// client goes away, or [`FOREVER`] passes).
    Endless(String, Duration),
    /// Stream one token of this many bytes, then `[#1].`, and finish.
    HugeToken(usize),
    /// Open a token's line and never end it: `bytes` more of its text per
    /// interval (until the client goes away, or [`FOREVER`] passes).
    Unterminated { bytes: usize, every: Duration },
    /// The n-th chat request (from 0) gets the n-th script; a request past
    /// the last gets 500 (a test that asks more than it scripted fails).
    Sequence(Vec<Script>),
}

/// How long a never-ending script streams at most.
pub const FOREVER: Duration = Duration::from_secs(120);

/// Split an answer into small tokens the way a model streams.
pub fn tokens(answer: &str) -> Vec<String> {
    answer.split_inclusive(' ').map(String::from).collect()
}

/// A running server; stops when dropped.
pub struct LlmServer {
    pub wire: Wire,
    port: u16,
    seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What the server was sent.
#[derive(Default)]
struct Seen {
    chat_requests: AtomicUsize,
    /// Chat responses still being written (the client has not gone away).
    streaming: AtomicUsize,
    chat_bodies: Mutex<Vec<Value>>,
    embeddings: Mutex<Vec<EmbeddingCall>>,
}

/// One `/v1/embeddings` request: its JSON body and `Authorization` header.
#[derive(Debug, Clone)]
pub struct EmbeddingCall {
    pub body: Value,
    pub authorization: Option<String>,
}

/// Length of the server's embeddings.
pub const EMBED_DIMS: usize = 64;

/// The server's embedding of `text`: word counts hashed (FNV-1a) into
/// [`EMBED_DIMS`] buckets, not normalised (kebab normalises), so texts
/// sharing words point the same way.
pub fn embed_text(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; EMBED_DIMS];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in word.to_lowercase().bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
        v[(h % EMBED_DIMS as u64) as usize] += 1.0;
    }
    v
}

/// The model name the server reports.
pub const MODEL: &str = "test-model:1b";

impl LlmServer {
    pub fn start(wire: Wire, script: Script) -> LlmServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Seen::default());
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop) = (seen.clone(), stop.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (script, seen) = (script.clone(), seen.clone());
                    std::thread::spawn(move || serve(conn, wire, &script, &seen));
                }
            })
        };
        LlmServer {
            wire,
            port,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Chat requests received.
    pub fn chat_requests(&self) -> usize {
        self.seen.chat_requests.load(Ordering::SeqCst)
    }

    /// Chat responses still streaming: answers not finished, and endless
    /// ones whose client has not hung up.
    pub fn streaming(&self) -> usize {
        self.seen.streaming.load(Ordering::SeqCst)
    }

    /// JSON bodies of the chat requests, in order.
    pub fn bodies(&self) -> Vec<Value> {
        self.seen.chat_bodies.lock().unwrap().clone()
    }

    /// The `/v1/embeddings` requests received, in order.
    pub fn embedding_calls(&self) -> Vec<EmbeddingCall> {
        self.seen.embeddings.lock().unwrap().clone()
    }

    /// A kebab config section pointing at this server.
    pub fn config(&self, timeout_secs: u64) -> String {
        config_for(self.wire, &self.endpoint(), timeout_secs)
    }
}

/// `[models.llm]` for a server at `endpoint`.
pub fn config_for(wire: Wire, endpoint: &str, timeout_secs: u64) -> String {
    format!(
        "[models.llm]\nprovider = \"{}\"\nendpoint = \"{endpoint}\"\nmodel = \"{MODEL}\"\ntimeout_secs = {timeout_secs}\n",
        wire.provider()
    )
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// An endpoint where nothing listens.
pub fn dead_endpoint() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

fn serve(conn: TcpStream, wire: Wire, script: &Script, seen: &Seen) {
    let mut reader = BufReader::new(conn.try_clone().expect("clone socket"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() || request_line.is_empty() {
        return;
    }
    let mut content_length = 0usize;
    let mut authorization = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() || header == "\r\n" || header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                content_length = value.trim().parse().unwrap_or(0);
            } else if name.eq_ignore_ascii_case("authorization") {
                authorization = Some(value.trim().to_string());
            }
        }
    }
    let mut body = vec![0u8; content_length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut out = conn;
    match (method, path) {
        ("GET", "/api/tags") => respond_json(
            &mut out,
            200,
            &json!({"models": [{"name": MODEL, "model": MODEL, "modified_at": "2026-01-01T00:00:00Z", "size": 1}]}),
        ),
        ("GET", "/v1/models") => respond_json(
            &mut out,
            200,
            &json!({"object": "list", "data": [{"id": MODEL, "object": "model", "created": 1, "owned_by": "test"}]}),
        ),
        ("POST", "/api/chat") | ("POST", "/v1/chat/completions") => {
            let n = seen.chat_requests.fetch_add(1, Ordering::SeqCst);
            seen.chat_bodies
                .lock()
                .unwrap()
                .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
            seen.streaming.fetch_add(1, Ordering::SeqCst);
            let script = match script {
                Script::Sequence(steps) => match steps.get(n) {
                    Some(step) => step,
                    None => {
                        let body =
                            json!({"error": format!("the script has {} replies", steps.len())});
                        respond_json(&mut out, 500, &body);
                        seen.streaming.fetch_sub(1, Ordering::SeqCst);
                        return;
                    }
                },
                other => other,
            };
            chat(&mut out, wire, script);
            seen.streaming.fetch_sub(1, Ordering::SeqCst);
        }
        ("POST", "/v1/embeddings") => {
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            seen.embeddings.lock().unwrap().push(EmbeddingCall {
                body: body.clone(),
                authorization,
            });
            respond_json(&mut out, 200, &embeddings(&body));
        }
        _ => respond_json(&mut out, 404, &json!({"error": "not found"})),
    }
}

/// The `/v1/embeddings` response for a request body, its items in reverse
/// order (clients must place vectors by `index`, not position).
fn embeddings(body: &Value) -> Value {
    let inputs: Vec<&str> = match &body["input"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": embed_text(text)}))
        .collect();
    let tokens: usize = inputs.iter().map(|t| t.split_whitespace().count()).sum();
    json!({"object": "list", "data": data, "model": body["model"],
           "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
}

fn respond_json(out: &mut TcpStream, status: u16, body: &Value) {
    let body = body.to_string();
    let reason = if status == 200 { "OK" } else { "Not Found" };
    let _ = write!(
        out,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn chunk(out: &mut TcpStream, data: &str) -> bool {
    let ok = write!(out, "{:x}\r\n{data}\r\n", data.len()).is_ok();
    let _ = out.flush();
    ok
}

fn ollama_line(token: &str, done: bool) -> String {
    if done {
        json!({"model": MODEL, "created_at": "2026-11-22T10:00:00.000000Z", "message": {"role": "assistant", "content": ""},
               "done": true, "done_reason": "stop", "total_duration": 5_000_000u64, "load_duration": 100_000u64,
               "prompt_eval_count": 321, "prompt_eval_duration": 1_000_000u64, "eval_count": 42, "eval_duration": 3_000_000u64})
        .to_string()
            + "\n"
    } else {
        json!({"model": MODEL, "created_at": "2026-11-22T10:00:00.000000Z", "message": {"role": "assistant", "content": token}, "done": false})
            .to_string()
            + "\n"
    }
}

fn openai_event(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1_763_800_000u64, "model": MODEL,
                       "system_fingerprint": "fp_test", "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
    format!("data: {chunk}\n\n")
}

fn chat(out: &mut TcpStream, wire: Wire, script: &Script) {
    if let Script::ModelMissing = script {
        let body = match wire {
            Wire::Ollama => {
                json!({"error": format!("model \"{MODEL}\" not found, try pulling it first")})
            }
            Wire::OpenAi => {
                json!({"error": {"message": format!("The model `{MODEL}` does not exist or you do not have access to it."),
                                             "type": "invalid_request_error", "param": null, "code": "model_not_found"}})
            }
        };
        respond_json(out, 404, &body);
        return;
    }
    let content_type = match wire {
        Wire::Ollama => "application/x-ndjson",
        Wire::OpenAi => "text/event-stream",
    };
    let _ = write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    let _ = out.flush();
    if wire == Wire::OpenAi {
        chunk(
            out,
            &openai_event(json!({"role": "assistant", "content": ""}), None),
        );
    }
    let mut interval = Duration::from_millis(2);
    let (tokens, cut) = match script {
        Script::Endless(token, every) => return endless(out, wire, token, *every),
        Script::Unterminated { bytes, every } => return unterminated(out, wire, *bytes, *every),
        Script::HugeToken(n) => (vec!["x".repeat(*n), " [#1].".into()], None),
        Script::Answer(t) => (t.clone(), None),
        Script::Drip(t, every) => {
            interval = *every;
            (t.clone(), None)
        }
        Script::CutAfter(t, n) => (t.clone(), Some(*n)),
        Script::Stall(d) => {
            std::thread::sleep(*d);
            (tokens("late answer [#1]"), None)
        }
        Script::ModelMissing | Script::Sequence(_) => unreachable!(),
    };
    for (i, t) in tokens.iter().enumerate() {
        if Some(i) == cut {
            let _ = out.shutdown(Shutdown::Both);
            return;
        }
        let data = match wire {
            Wire::Ollama => ollama_line(t, false),
            Wire::OpenAi => openai_event(json!({"content": t}), None),
        };
        if !chunk(out, &data) {
            return;
        }
        std::thread::sleep(interval);
    }
    match wire {
        Wire::Ollama => {
            chunk(out, &ollama_line("", true));
        }
        Wire::OpenAi => {
            chunk(out, &openai_event(json!({}), Some("stop")));
            let usage = json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1_763_800_000u64, "model": MODEL,
                               "choices": [], "usage": {"prompt_tokens": 321, "completion_tokens": 42, "total_tokens": 363}});
            chunk(out, &format!("data: {usage}\n\n"));
            chunk(out, "data: [DONE]\n\n");
        }
    }
    let _ = out.write_all(b"0\r\n\r\n");
    let _ = out.flush();
}

/// A token per `every` until the client goes away (or [`FOREVER`]).
fn endless(out: &mut TcpStream, wire: Wire, token: &str, every: Duration) {
    let started = std::time::Instant::now();
    let data = match wire {
        Wire::Ollama => ollama_line(token, false),
        Wire::OpenAi => openai_event(json!({"content": token}), None),
    };
    while started.elapsed() < FOREVER && chunk(out, &data) {
        std::thread::sleep(every);
    }
}

/// A token's line that never ends: `bytes` more of its text per `every`.
fn unterminated(out: &mut TcpStream, wire: Wire, bytes: usize, every: Duration) {
    let started = std::time::Instant::now();
    let open = match wire {
        Wire::Ollama => format!(
            r#"{{"model":"{MODEL}","created_at":"2026-11-22T10:00:00.000000Z","message":{{"role":"assistant","content":""#
        ),
        Wire::OpenAi => format!(
            r#"data: {{"id":"chatcmpl-test","object":"chat.completion.chunk","model":"{MODEL}","choices":[{{"index":0,"delta":{{"content":""#
        ),
    };
    let text = "A".repeat(bytes);
    let mut ok = chunk(out, &open);
    while ok && started.elapsed() < FOREVER {
        ok = chunk(out, &text);
        std::thread::sleep(every);
    }
}
