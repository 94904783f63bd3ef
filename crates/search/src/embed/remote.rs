//! Embeddings from any OpenAI-compatible server: `POST {endpoint}/embeddings`
//! with `{"model", "input": [texts], "encoding_format": "float"}` (and
//! `"input_type": "query" | "passage"` when configured), answered by
//! `{"data": [{"index", "embedding": [floats]}], …}`.

use serde::Deserialize;
use serde_json::json;

use super::{EmbedError, Role};

/// A client for one server and model.
pub struct RemoteEmbedder {
    http: reqwest::blocking::Client,
    endpoint: String,
    model: String,
    api_key: Option<String>,
    /// Send `input_type` with each request.
    input_type: bool,
}

/// The response body (fields kebab reads).
#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

impl RemoteEmbedder {
    /// A client for `model` at `endpoint` (base URL up to `/v1`), with the
    /// API key read from the environment variable `api_key_env` if set.
    pub fn new(
        endpoint: &str,
        model: &str,
        api_key_env: Option<&str>,
        timeout_secs: u64,
        input_type: bool,
    ) -> Result<RemoteEmbedder, EmbedError> {
        let http = kebab_core::http::api_client(timeout_secs).map_err(|e| EmbedError::Remote {
            endpoint: endpoint.into(),
            detail: e.to_string(),
        })?;
        Ok(RemoteEmbedder {
            http,
            endpoint: endpoint.trim_end_matches('/').into(),
            model: model.into(),
            api_key: api_key_env.and_then(|name| std::env::var(name).ok()),
            input_type,
        })
    }

    /// One vector per text, in input order (the server may answer in any
    /// order; `index` says which text a vector belongs to).
    /// With `input_type` on, the request says whether the texts are
    /// queries or passages (`role`).
    pub fn embed(&self, texts: &[String], role: Role) -> Result<Vec<Vec<f32>>, EmbedError> {
        let failed = |detail: String| EmbedError::Remote {
            endpoint: self.endpoint.clone(),
            detail,
        };
        let mut body = json!({
            "model": self.model,
            "input": texts,
            "encoding_format": "float",
        });
        if self.input_type {
            body["input_type"] = role.as_str().into();
        }
        let mut request = self
            .http
            .post(format!("{}/embeddings", self.endpoint))
            .json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().unwrap_or_default();
            return Err(failed(format!(
                "HTTP {}: {}",
                status.as_u16(),
                body.chars().take(300).collect::<String>()
            )));
        }
        let body: Response = response
            .json()
            .map_err(|e| failed(format!("unexpected response: {e}")))?;
        in_input_order(body.data, texts.len()).map_err(failed)
    }
}

/// The vectors ordered by their `index`, exactly one per input.
fn in_input_order(items: Vec<Item>, inputs: usize) -> Result<Vec<Vec<f32>>, String> {
    let mut out: Vec<Option<Vec<f32>>> = vec![None; inputs];
    for item in items {
        let slot = out
            .get_mut(item.index)
            .ok_or_else(|| format!("vector index {} for {inputs} inputs", item.index))?;
        if slot.replace(item.embedding).is_some() {
            return Err(format!("two vectors for input {}", item.index));
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or_else(|| format!("no vector for input {i}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(index: usize, x: f32) -> Item {
        Item {
            index,
            embedding: vec![x],
        }
    }

    #[test]
    fn vectors_are_put_back_in_input_order() {
        let got = in_input_order(vec![item(1, 1.0), item(0, 0.0)], 2).unwrap();
        assert_eq!(got, vec![vec![0.0], vec![1.0]]);
    }

    #[test]
    fn missing_duplicate_and_stray_vectors_are_errors() {
        assert!(
            in_input_order(vec![item(0, 0.0)], 2)
                .unwrap_err()
                .contains("input 1")
        );
        assert!(
            in_input_order(vec![item(0, 0.0), item(0, 1.0)], 1)
                .unwrap_err()
                .contains("two vectors")
        );
        assert!(
            in_input_order(vec![item(5, 0.0)], 1)
                .unwrap_err()
                .contains("index 5")
        );
    }
}
