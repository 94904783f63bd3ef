//! `kebab mcp`'s stdio transport: rmcp's newline-delimited JSON-RPC over
//! stdin/stdout, with every request answered. rmcp alone drops a line over
//! its size limit, ignores one that is not JSON (a lone surrogate such as
//! `"\ud800"` makes it so) and, for a request reusing the id of one still
//! in flight, loses one of the two replies; each of those requests then
//! waits forever. Here a screening task reads stdin first, bounded to
//! [`MAX_MESSAGE_BYTES`] a line, and answers such a line itself with a
//! JSON-RPC error addressed to the request's `id` (found by scanning the
//! line's top level, so even an oversized or broken line gets its own id
//! back when it has one; `null` otherwise); the lines it passes on reach
//! rmcp through an in-process pipe. [`GuardedStdio`] then refuses a
//! request whose id is already in flight, and writes every error through
//! rmcp's own writer so no two messages interleave on stdout.

use std::collections::HashSet;

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// Longest message (one line) the server reads: 4 MiB, far more than any
/// tool call needs (a `bulk_search` of 100 queries of the longest query is
/// under 2 MiB). A longer line is answered with an Invalid Request error.
pub(crate) const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Longest `id` value kept while scanning a line for it.
const MAX_ID_BYTES: usize = 1024;

/// The transport `kebab mcp` serves on (see the module doc).
pub(crate) struct GuardedStdio {
    inner: AsyncRwTransport<RoleServer, DuplexStream, tokio::io::Stdout>,
    /// Errors the screening task wants sent.
    rejected: mpsc::UnboundedReceiver<TxJsonRpcMessage<RoleServer>>,
    /// Ids of requests handed to the service and not yet answered.
    in_flight: HashSet<RequestId>,
    /// Errors this transport is writing.
    sending: JoinSet<()>,
}

impl GuardedStdio {
    /// Start screening stdin (on the current tokio runtime).
    pub(crate) fn start() -> GuardedStdio {
        let (screened, pipe) = tokio::io::duplex(64 << 10);
        let (reject, rejected) = mpsc::unbounded_channel();
        tokio::spawn(screen(BufReader::new(tokio::io::stdin()), screened, reject));
        GuardedStdio {
            inner: AsyncRwTransport::new(pipe, tokio::io::stdout()),
            rejected,
            in_flight: HashSet::new(),
            sending: JoinSet::new(),
        }
    }

    /// Write `message` through rmcp's writer, not waiting for it here: the
    /// write outlives a `receive` the service loop cancels.
    fn reply(&mut self, message: TxJsonRpcMessage<RoleServer>) {
        let send = self.inner.send(message);
        self.sending.spawn(async move {
            if let Err(e) = send.await {
                tracing::warn!("cannot write a JSON-RPC error: {e}");
            }
        });
    }
}

impl Transport<RoleServer> for GuardedStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Response(r) => {
                self.in_flight.remove(&r.id);
            }
            JsonRpcMessage::Error(e) => {
                if let Some(id) = &e.id {
                    self.in_flight.remove(id);
                }
            }
            _ => {}
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Both branches are cancel-safe: the service loop drops this
            // future whenever it has something to send.
            let message = tokio::select! {
                biased;
                Some(error) = self.rejected.recv() => {
                    self.reply(error);
                    continue;
                }
                message = self.inner.receive() => message,
            };
            let Some(message) = message else {
                // Stdin is closed: let the errors already written finish.
                while self.sending.join_next().await.is_some() {}
                return None;
            };
            match &message {
                JsonRpcMessage::Request(r) if !self.in_flight.insert(r.id.clone()) => {
                    let error = ErrorData::invalid_request(
                        format!(
                            "request id {} is already in use by a request in flight",
                            r.id
                        ),
                        None,
                    );
                    self.reply(JsonRpcMessage::error(error, Some(r.id.clone())));
                    continue;
                }
                JsonRpcMessage::Notification(n) => {
                    // A cancelled request is never answered: its id is free.
                    if let ClientNotification::CancelledNotification(c) = &n.notification
                        && let Some(id) = &c.params.request_id
                    {
                        self.in_flight.remove(id);
                    }
                }
                _ => {}
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// One line of stdin, as [`read_line`] found it.
enum Line {
    /// A whole line within the limit (without its newline).
    Whole(Vec<u8>),
    /// A line over [`MAX_MESSAGE_BYTES`], dropped as it was read; the id
    /// found at its top level.
    Oversized(Option<RequestId>),
}

/// Read stdin a line at a time: pass on the lines rmcp can serve, answer
/// the others with an error (see the module doc). Ends at end of input,
/// which closes the pipe and so ends the service.
async fn screen(
    mut stdin: impl AsyncBufRead + Unpin,
    mut pipe: DuplexStream,
    reject: mpsc::UnboundedSender<TxJsonRpcMessage<RoleServer>>,
) {
    loop {
        let line = match read_line(&mut stdin).await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(e) => {
                tracing::error!("reading stdin: {e}");
                return;
            }
        };
        let verdict = match line {
            Line::Oversized(id) => Err(JsonRpcMessage::error(
                ErrorData::invalid_request(
                    format!("message over {MAX_MESSAGE_BYTES} bytes; not read"),
                    None,
                ),
                id,
            )),
            Line::Whole(line) => match rejection(&line) {
                Some(error) => Err(error),
                None => Ok(line),
            },
        };
        match verdict {
            Ok(mut line) => {
                line.push(b'\n');
                if pipe.write_all(&line).await.is_err() {
                    return;
                }
            }
            Err(error) => {
                if reject.send(error).is_err() {
                    return;
                }
            }
        }
    }
}

/// The error to answer `line` with; `None` when rmcp can serve it (or
/// will ignore it: blank, or a notification it skips).
fn rejection(line: &[u8]) -> Option<TxJsonRpcMessage<RoleServer>> {
    let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let Err(e) = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) else {
        return None;
    };
    let id = || {
        let mut scanner = IdScanner::default();
        scanner.feed(text);
        scanner.id()
    };
    if e.is_syntax() || e.is_eof() {
        let error = ErrorData::parse_error(format!("not JSON: {e}"), None);
        return Some(JsonRpcMessage::error(error, id()));
    }
    // Well-formed JSON that is no message kebab reads: a request gets the
    // error addressed to it; rmcp decides about the rest (it skips some
    // notifications other clients send and answers others).
    id().map(|id| {
        let error = ErrorData::invalid_request(format!("not a request kebab serves: {e}"), None);
        JsonRpcMessage::error(error, Some(id))
    })
}

/// The next line of `input`, holding at most [`MAX_MESSAGE_BYTES`] of it;
/// `None` at end of input. A last line without a newline counts.
async fn read_line(input: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut oversized: Option<IdScanner> = None;
    loop {
        let buffered = input.fill_buf().await?;
        if buffered.is_empty() {
            return Ok(match oversized {
                Some(scanner) => Some(Line::Oversized(scanner.id())),
                None if line.is_empty() => None,
                None => Some(Line::Whole(line)),
            });
        }
        let newline = buffered.iter().position(|&b| b == b'\n');
        let part = &buffered[..newline.unwrap_or(buffered.len())];
        if let Some(scanner) = &mut oversized {
            scanner.feed(part);
        } else if line.len().saturating_add(part.len()) > MAX_MESSAGE_BYTES {
            let mut scanner = IdScanner::default();
            scanner.feed(&line);
            scanner.feed(part);
            line = Vec::new();
            oversized = Some(scanner);
        } else {
            line.extend_from_slice(part);
        }
        let used = newline.map_or(buffered.len(), |at| at + 1);
        input.consume(used);
        if newline.is_some() {
            return Ok(Some(match oversized {
                Some(scanner) => Line::Oversized(scanner.id()),
                None => Line::Whole(line),
            }));
        }
    }
}

/// Finds the `"id"` member of a JSON object's top level as its bytes go
/// past, keeping nothing else: the id of a line too long to hold or not
/// valid JSON. Strings are skipped whole (escapes included), so nothing
/// inside `params` is mistaken for it.
#[derive(Default)]
struct IdScanner {
    /// Open objects and arrays.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At the top level, the next string is a member name.
    want_key: bool,
    /// The member name being read, cut after 3 bytes (enough to tell
    /// `id` from any other).
    key: Option<Vec<u8>>,
    /// The last member name read at the top level was `id`.
    at_id: bool,
    /// The id's value while it is read.
    value: Option<Vec<u8>>,
    /// The id's whole value.
    found: Option<Vec<u8>>,
    /// The id's value was too long to be one.
    gave_up: bool,
}

impl IdScanner {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.found.is_some() || self.gave_up {
                return;
            }
            if let Some(value) = &mut self.value {
                if !self.in_string && self.depth == 1 && (b == b',' || b == b'}') {
                    self.found = self.value.take();
                    return;
                }
                if value.len() >= MAX_ID_BYTES {
                    self.gave_up = true;
                    return;
                }
                value.push(b);
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if let Some(key) = self.key.take() {
                        self.at_id = key == b"id";
                    }
                } else if let Some(key) = &mut self.key
                    && key.len() < 3
                {
                    key.push(b);
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && self.want_key {
                        self.key = Some(Vec::new());
                        self.want_key = false;
                    }
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    if self.depth == 1 {
                        self.want_key = b == b'{';
                    }
                }
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                b',' if self.depth == 1 => {
                    self.want_key = true;
                    self.at_id = false;
                }
                b':' if self.depth == 1 && self.at_id && self.value.is_none() => {
                    self.value = Some(Vec::new());
                }
                _ => {}
            }
        }
    }

    /// The id, when the line had one that parses as a JSON-RPC id.
    fn id(self) -> Option<RequestId> {
        let bytes = self.found.or(self.value).filter(|_| !self.gave_up)?;
        serde_json::from_slice(&bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(parts: &[&str]) -> Option<RequestId> {
        let mut scanner = IdScanner::default();
        for part in parts {
            scanner.feed(part.as_bytes());
        }
        scanner.id()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        let n = |n| Some(RequestId::Number(n));
        assert_eq!(scan(&[r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#]), n(7));
        // After a params object holding an `id` of its own, split mid-string.
        assert_eq!(
            scan(&[
                r#"{"method":"x","params":{"id":1,"s":"\"id\": 3, }"#,
                r#""},"id": 42 }"#
            ]),
            n(42)
        );
        assert_eq!(
            scan(&[r#"{"id":"a\"b","params":{"q":"\ud800"}}"#]),
            Some(RequestId::String("a\"b".into()))
        );
        // A line cut off after the id still has it.
        assert_eq!(scan(&[r#"{"id":9"#]), n(9));
        // Names that only start like it, and no id at all.
        assert_eq!(scan(&[r#"{"idx":1,"ids":[2],"params":{"id":3}}"#]), None);
        assert_eq!(scan(&[r#"[{"id":1}]"#]), None);
        let long_id = format!(r#"{{"id":"{}"}}"#, "x".repeat(5000));
        assert_eq!(scan(&[long_id.as_str()]), None);
    }

    #[tokio::test]
    async fn lines_are_read_whole_or_dropped_past_the_limit() {
        let long = format!(
            "{{\"params\":\"{}\",\"id\":5}}\n{{\"id\":6}}",
            "x".repeat(MAX_MESSAGE_BYTES)
        );
        let mut input = BufReader::with_capacity(1000, long.as_bytes());
        match read_line(&mut input).await.unwrap() {
            Some(Line::Oversized(id)) => assert_eq!(id, Some(RequestId::Number(5))),
            _ => panic!("expected an oversized line"),
        }
        match read_line(&mut input).await.unwrap() {
            Some(Line::Whole(line)) => assert_eq!(line, b"{\"id\":6}"),
            _ => panic!("expected the next line whole"),
        }
        assert!(read_line(&mut input).await.unwrap().is_none());
    }

    #[test]
    fn unreadable_requests_get_an_error_addressed_to_them() {
        let error = |line: &str| match rejection(line.as_bytes()) {
            Some(JsonRpcMessage::Error(e)) => (e.error.code.0, e.id),
            other => panic!("{line}: {other:?}"),
        };
        let surrogate = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"\ud800"}}}"#;
        assert_eq!(error(surrogate), (-32700, Some(RequestId::Number(3))));
        assert_eq!(error("{not json"), (-32700, None));
        assert_eq!(
            error(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#),
            (-32600, Some(RequestId::Number(4)))
        );
        assert!(rejection(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
        assert!(rejection(b"  \r").is_none());
    }
}
