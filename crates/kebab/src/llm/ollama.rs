//! Ollama `/api/chat` streaming: one JSON object per line, the last with
//! `"done": true` and token counts.

use serde_json::{Value, json};

use super::{Completion, LineEvent, LlmConfig, Message, StreamProtocol};

/// The request body.
pub(super) fn request(config: &LlmConfig, messages: &[Message]) -> Value {
    json!({
        "model": config.model,
        "messages": messages,
        "stream": true,
        "options": {
            "temperature": config.temperature,
            "seed": config.seed,
            "num_ctx": config.context_tokens,
            "num_predict": config.max_answer_tokens,
        },
    })
}

/// NDJSON stream parser.
pub(super) struct Stream;

impl StreamProtocol for Stream {
    fn line(&mut self, line: &str, done: &mut Completion) -> Result<LineEvent, String> {
        if line.trim().is_empty() {
            return Ok(LineEvent::Nothing);
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| format!("bad stream line ({e}): {}", super::excerpt(line)))?;
        if let Some(err) = v["error"].as_str() {
            return Err(format!("server error: {}", super::excerpt(err)));
        }
        if v["done"].as_bool() == Some(true) {
            done.prompt_tokens = v["prompt_eval_count"].as_u64().map(|n| n as u32);
            done.completion_tokens = v["eval_count"].as_u64().map(|n| n as u32);
            return Ok(LineEvent::Finished);
        }
        match v["message"]["content"].as_str() {
            Some(t) if !t.is_empty() => Ok(LineEvent::Token(t.to_string())),
            _ => Ok(LineEvent::Nothing),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_then_done_with_usage() {
        let mut s = Stream;
        let mut c = Completion::default();
        let tok = r#"{"model":"m","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false}"#;
        assert!(matches!(s.line(tok, &mut c), Ok(LineEvent::Token(t)) if t == "Hi"));
        let end = r#"{"model":"m","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":26,"eval_count":3}"#;
        assert!(matches!(s.line(end, &mut c), Ok(LineEvent::Finished)));
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(26), Some(3)));
        assert!(s.line("not json", &mut c).is_err());
        assert!(
            s.line(r#"{"error":"boom"}"#, &mut c)
                .unwrap_err()
                .contains("boom")
        );
    }
}
