//! OpenAI-compatible `/v1/chat/completions` streaming: server-sent events,
//! `data: {chunk}` lines ending with `data: [DONE]`.

use serde_json::{Value, json};

use super::{Completion, LineEvent, LlmConfig, Message, StreamProtocol};

/// The request body.
pub(super) fn request(config: &LlmConfig, messages: &[Message]) -> Value {
    json!({
        "model": config.model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
        "temperature": config.temperature,
        "seed": config.seed,
        "max_tokens": config.max_answer_tokens,
    })
}

/// SSE stream parser.
pub(super) struct Stream;

impl StreamProtocol for Stream {
    fn line(&mut self, line: &str, done: &mut Completion) -> Result<LineEvent, String> {
        let Some(data) = line.strip_prefix("data:") else {
            // Blank separators, comments (`: keep-alive`), `event:`/`id:` fields.
            return Ok(LineEvent::Nothing);
        };
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(LineEvent::Finished);
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| format!("bad event ({e}): {}", super::excerpt(data)))?;
        if let Some(err) = v.get("error") {
            return Err(format!(
                "server error: {}",
                super::excerpt(err["message"].as_str().unwrap_or("unknown"))
            ));
        }
        if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
            done.prompt_tokens = usage["prompt_tokens"].as_u64().map(|n| n as u32);
            done.completion_tokens = usage["completion_tokens"].as_u64().map(|n| n as u32);
        }
        match v["choices"][0]["delta"]["content"].as_str() {
            Some(t) if !t.is_empty() => Ok(LineEvent::Token(t.to_string())),
            _ => Ok(LineEvent::Nothing),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_usage_and_done() {
        let mut s = Stream;
        let mut c = Completion::default();
        let role = r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#;
        assert!(matches!(s.line(role, &mut c), Ok(LineEvent::Nothing)));
        let tok = r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}"#;
        assert!(matches!(s.line(tok, &mut c), Ok(LineEvent::Token(t)) if t == "Hi"));
        let usage = r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#;
        assert!(matches!(s.line(usage, &mut c), Ok(LineEvent::Nothing)));
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(9), Some(2)));
        assert!(matches!(
            s.line(": keep-alive", &mut c),
            Ok(LineEvent::Nothing)
        ));
        assert!(matches!(
            s.line("data: [DONE]", &mut c),
            Ok(LineEvent::Finished)
        ));
    }
}
