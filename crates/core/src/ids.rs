//! Deterministic IDs: `blake3(canonical_json(tuple))`, first 32 hex chars
//! (ARCHITECTURE.md, "Invariants"). Plugins never choose IDs; the host derives them from what
//! the plugin returned.

use serde_json::{Map, Value, json};
use unicode_normalization::UnicodeNormalization;

/// Canonical JSON: keys sorted, no whitespace, every string NFC-normalised.
pub fn canonical_json(value: &Value) -> String {
    normalize(value).to_string()
}

fn normalize(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(s.nfc().collect()),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(map) => {
            // Sort explicitly: with serde_json's `preserve_order` feature
            // (which other crates in the build may switch on) a map keeps
            // insertion order instead of sorting.
            let mut entries: Vec<(String, Value)> = map
                .iter()
                .map(|(k, v)| (k.nfc().collect::<String>(), normalize(v)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().collect::<Map<String, Value>>())
        }
        other => other.clone(),
    }
}

/// `blake3(canonical_json(tuple))[..32]`.
pub fn id_from(tuple: &Value) -> String {
    let hex = blake3::hash(canonical_json(tuple).as_bytes()).to_hex();
    hex[..32].to_string()
}

/// Full blake3 hex of raw bytes (the asset checksum).
pub fn checksum(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// Normalise a workspace path: POSIX slashes, NFC, no leading `./`, no
/// repeated slashes.
pub fn normalize_workspace_path(path: &str) -> String {
    let posix = path.replace('\\', "/");
    let parts: Vec<&str> = posix
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    parts.join("/").nfc().collect()
}

/// `asset_id` from the content checksum.
pub fn asset_id(checksum: &str) -> String {
    id_from(&json!({ "kind": "asset", "asset_blake3": checksum }))
}

/// `doc_id` from the root's ID key, the path in the root, the asset and the
/// parser version. The root key (fixed when the root is created, kept
/// through renames) is what lets two trees hold the same path with the same
/// bytes; documents indexed before roots existed keep the IDs they were
/// given without one, which this recipe can never produce again.
pub fn doc_id(
    root_key: &str,
    workspace_path: &str,
    asset_id: &str,
    parser_version: &str,
) -> String {
    id_from(&json!({
        "kind": "doc",
        "root": root_key,
        "workspace_path": normalize_workspace_path(workspace_path),
        "asset_id": asset_id,
        "parser_version": parser_version,
    }))
}

/// `block_id` from its document, kind, heading path, ordinal and span.
pub fn block_id(
    doc_id: &str,
    block_kind: &str,
    heading_path: &[String],
    ordinal: usize,
    source_span: &Value,
) -> String {
    id_from(&json!({
        "kind": "block",
        "doc_id": doc_id,
        "block_kind": block_kind,
        "heading_path": heading_path,
        "ordinal": ordinal,
        "source_span": source_span,
    }))
}

/// `chunk_id` from its document, chunker, blocks and policy. `split_key`
/// tells apart chunks cut from the same blocks (line windows, row groups):
/// the chunk's source spans.
pub fn chunk_id(
    doc_id: &str,
    chunker_version: &str,
    block_ids: &[String],
    policy_hash: &str,
    split_key: &Value,
) -> String {
    id_from(&json!({
        "kind": "chunk",
        "doc_id": doc_id,
        "chunker_version": chunker_version,
        "block_ids": block_ids,
        "policy_hash": policy_hash,
        "split_key": split_key,
    }))
}

/// Hash of what decides a plugin's output besides the file and the plugin
/// itself — the chunk policy and the plugin's settings — stored with every
/// chunk and document, so a change re-indexes. Without settings the recipe
/// is the policy alone (as before settings existed, so old indexes stay
/// current).
pub fn policy_hash(
    target_tokens: u32,
    overlap_tokens: u32,
    settings: &crate::document::Settings,
) -> String {
    let mut recipe = json!({ "target_tokens": target_tokens, "overlap_tokens": overlap_tokens });
    if !settings.is_empty() {
        recipe["settings"] = json!(settings);
    }
    id_from(&recipe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_change_the_policy_hash_and_no_settings_keep_the_old_one() {
        let none = crate::document::Settings::new();
        let old_recipe = id_from(&json!({ "target_tokens": 500, "overlap_tokens": 80 }));
        assert_eq!(policy_hash(500, 80, &none), old_recipe);
        let ko = crate::document::Settings::from([("lang".to_string(), "ko".to_string())]);
        let en = crate::document::Settings::from([("lang".to_string(), "en".to_string())]);
        assert_ne!(policy_hash(500, 80, &ko), old_recipe);
        assert_ne!(policy_hash(500, 80, &ko), policy_hash(500, 80, &en));
    }

    #[test]
    fn same_input_same_id_many_times() {
        let first = doc_id("notes", "notes/a.md", "abc", "p1");
        for _ in 0..1000 {
            assert_eq!(doc_id("notes", "notes/a.md", "abc", "p1"), first);
        }
        assert_eq!(first.len(), 32);
        assert!(first.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn the_same_path_and_bytes_in_two_roots_are_two_documents() {
        assert_ne!(
            doc_id("notes", "README.md", "x", "p"),
            doc_id("app", "README.md", "x", "p")
        );
    }

    #[test]
    fn key_order_does_not_matter() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":2,"x":[3,"s"]}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":[3,"s"],"y":2},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":{"x":[3,"s"],"y":2},"b":1}"#);
        assert_eq!(id_from(&a), id_from(&b));
    }

    #[test]
    fn posix_path_variants_agree() {
        assert_eq!(
            doc_id("notes", "./a/b.md", "x", "p"),
            doc_id("notes", "a/b.md", "x", "p")
        );
        assert_eq!(
            doc_id("notes", "a//b.md", "x", "p"),
            doc_id("notes", "a/b.md", "x", "p")
        );
        assert_eq!(
            doc_id("notes", "a\\b.md", "x", "p"),
            doc_id("notes", "a/b.md", "x", "p")
        );
    }

    #[test]
    fn nfc_and_nfd_hangul_agree() {
        let nfc = "노트/한국어.md";
        let nfd: String = nfc.nfd().collect();
        assert_ne!(nfc, nfd);
        assert_eq!(
            doc_id("notes", nfc, "x", "p"),
            doc_id("notes", &nfd, "x", "p")
        );
    }

    #[test]
    fn any_field_change_changes_the_id() {
        let base = chunk_id("d", "c1", &["b".into()], "p", &json!([1, 2]));
        assert_ne!(
            base,
            chunk_id("d", "c2", &["b".into()], "p", &json!([1, 2]))
        );
        assert_ne!(
            base,
            chunk_id("d", "c1", &["b".into()], "p", &json!([3, 4]))
        );
        assert_ne!(
            base,
            chunk_id("d", "c1", &["b".into()], "q", &json!([1, 2]))
        );
    }
}
