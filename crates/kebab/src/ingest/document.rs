//! Plugin output → rows to store: IDs, metadata, provenance.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{Job, Shared};
use kebab_core::document::{Block, Chunk};
use kebab_core::ids;
use kebab_core::spans::SourceSpan;
use kebab_core::trust::{self, TrustLevel};
use kebab_plugin_host::registry::RegisteredPlugin;
use kebab_plugin_host::runtime::CallOutput;
use kebab_store::{NewBlock, NewChunk, NewDocument};

/// Document metadata key by which a plugin names the chunker it used when
/// it has several (the code plugin: one per language).
pub const CHUNKER_KEY: &str = "kebab:chunker-version";

/// Derive IDs and rows from plugin output, with warnings about its
/// metadata. `routed` is the plugin responsible for the file (recorded for
/// re-index decisions); `producer` made the output (the text plugin when it
/// stood in).
#[allow(clippy::too_many_arguments)]
pub(super) fn build_document(
    job: &Job,
    routed: &RegisteredPlugin,
    producer: &RegisteredPlugin,
    output: CallOutput,
    checksum: String,
    byte_len: u64,
    fallback: Option<String>,
    shared: &Shared<'_>,
) -> (NewDocument, Vec<String>) {
    let info = &producer.plugin.info;
    let policy_hash = &shared.run_for(routed.name()).policy_hash;
    let asset_id = ids::asset_id(&checksum);
    let doc_id = ids::doc_id(
        &shared.root.id_key,
        &job.rel,
        &asset_id,
        &info.parser_version,
    );
    let document = output.document;
    // A plugin with several chunkers (one per language) names the one it used.
    let chunker_version = document
        .metadata
        .iter()
        .find(|(k, v)| k == CHUNKER_KEY && !v.is_empty() && v.len() <= 64)
        .map_or_else(|| info.chunker_version.clone(), |(_, v)| v.clone());
    let blocks = block_rows(&doc_id, &document.blocks);
    let chunks = chunk_rows(
        &doc_id,
        &chunker_version,
        policy_hash,
        output.chunks,
        &blocks,
    );
    let Meta {
        mut metadata,
        tags,
        trust_level,
        source_type,
        warnings,
    } = document_metadata(&document.metadata, &output.logs);
    if let Some(git) = shared.git.lookup(&job.abs) {
        metadata["repo"] = json!(git.repo);
        metadata["git_branch"] = json!(git.branch);
        metadata["git_commit"] = json!(git.commit);
    }
    let title = document.title.clone().or_else(|| {
        Path::new(&job.rel)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
    });
    let now = kebab_core::clock::now_rfc3339();
    let mut provenance = vec![json!({
        "at": now, "agent": format!("plugin:{}@{}", info.name, producer.plugin.version),
        "kind": "parsed", "note": null,
    })];
    if let Some(reason) = &fallback {
        provenance
            .push(json!({ "at": now, "agent": "kebab-ingest", "kind": "warning", "note": reason }));
    }
    let doc = NewDocument {
        asset_id,
        checksum,
        byte_len,
        media_type: routed.plugin.info.name.clone(),
        doc_id,
        root_id: shared.root.root_id,
        workspace_path: job.rel.clone(),
        source_uri: kebab_core::paths::escape_path(&job.abs),
        title,
        lang: document.lang,
        source_type: source_type.map_or_else(|| routed.plugin.info.name.clone(), String::from),
        trust_level: trust_level.as_str().to_string(),
        parser_version: info.parser_version.clone(),
        chunker_version,
        plugin_name: routed.plugin.info.name.clone(),
        plugin_version: routed.plugin.version.to_string(),
        policy_hash: policy_hash.clone(),
        fallback_reason: fallback,
        metadata,
        provenance: Value::Array(provenance),
        tags,
        blocks,
        chunks,
    };
    (doc, warnings)
}

/// The rows of a document's blocks, each with its derived ID.
fn block_rows(doc_id: &str, blocks: &[Block]) -> Vec<NewBlock> {
    blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let kind = b.kind.name();
            NewBlock {
                block_id: ids::block_id(doc_id, kind, &b.heading_path, i, &b.span.to_json()),
                kind: kind.to_string(),
                heading_path: b.heading_path.clone(),
                span: b.span.clone(),
                payload: json!({ "text": b.text, "level": b.level, "lang": b.lang }),
            }
        })
        .collect()
}

/// The rows of a document's chunks, each with its derived ID (from the
/// document, chunker, blocks, policy and spans).
fn chunk_rows(
    doc_id: &str,
    chunker_version: &str,
    policy_hash: &str,
    chunks: Vec<Chunk>,
    blocks: &[NewBlock],
) -> Vec<NewChunk> {
    chunks
        .into_iter()
        .map(|c| {
            let block_ids: Vec<String> = c
                .blocks
                .iter()
                .map(|&b| blocks[b as usize].block_id.clone())
                .collect();
            let split_key = Value::Array(c.spans.iter().map(SourceSpan::to_json).collect());
            NewChunk {
                chunk_id: ids::chunk_id(
                    doc_id,
                    chunker_version,
                    &block_ids,
                    policy_hash,
                    &split_key,
                ),
                token_estimate: kebab_plugin_sdk::text::estimate_tokens(&c.text),
                section_label: c.heading_path.last().cloned(),
                text: c.text,
                heading_path: c.heading_path,
                spans: c.spans,
                block_ids,
            }
        })
        .collect()
}

/// A document's metadata as plugin pairs (a Markdown file's frontmatter)
/// give it.
struct Meta {
    /// The stored metadata object.
    metadata: Value,
    tags: Vec<String>,
    /// `trust_level` [default: primary].
    trust_level: TrustLevel,
    /// `source_type`, when one of the design's is declared.
    source_type: Option<&'static str>,
    /// Values that are none of the design's, and were not used.
    warnings: Vec<String>,
}

/// Split plugin metadata pairs into the stored metadata object, the tag
/// list, the trust level and the source type. `tags` and `aliases` hold
/// JSON arrays; `trust_level` and `source_type` take the design's values
/// (a warning names any other, which is not used); everything else is kept
/// under `user`.
fn document_metadata(pairs: &[(String, String)], logs: &[String]) -> Meta {
    let list = |v: &str| -> Vec<String> {
        serde_json::from_str::<Vec<String>>(v).unwrap_or_else(|_| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
    };
    let mut tags = Vec::new();
    let mut aliases = Vec::new();
    let mut user = Map::new();
    let mut trust_level = TrustLevel::default();
    let mut source_type = None;
    let mut warnings = Vec::new();
    let mut unknown = |key: &str, value: &str, known: &[&str], used: &str| {
        warnings.push(format!(
            "{key} `{}` is not one of {}; {used} used",
            kebab_core::sanitize::bounded(value, 60),
            known.join(", ")
        ));
    };
    for (k, v) in pairs {
        match k.as_str() {
            "tags" => tags = list(v),
            "aliases" => aliases = list(v),
            "trust_level" => match TrustLevel::parse(v) {
                Some(level) => trust_level = level,
                None => {
                    let known = TrustLevel::ALL.map(TrustLevel::as_str);
                    unknown(k, v, &known, "primary");
                }
            },
            "source_type" => match trust::source_type(v) {
                Some(t) => source_type = Some(t),
                None => unknown(k, v, &trust::SOURCE_TYPES, "the plugin's name"),
            },
            CHUNKER_KEY => {}
            _ => {
                user.insert(k.clone(), Value::String(v.clone()));
            }
        }
    }
    Meta {
        metadata: json!({ "tags": tags, "aliases": aliases, "user": user, "plugin_logs": logs }),
        tags,
        trust_level,
        source_type,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_splits_tags_aliases_and_user_keys() {
        let pairs = vec![
            ("tags".to_string(), r#"["rust","wasm"]"#.to_string()),
            ("aliases".to_string(), "a, b".to_string()),
            ("rating".to_string(), "5".to_string()),
        ];
        let meta = document_metadata(&pairs, &[]);
        assert_eq!(meta.tags, vec!["rust", "wasm"]);
        assert_eq!(meta.metadata["aliases"], json!(["a", "b"]));
        assert_eq!(meta.metadata["user"]["rating"], "5");
        assert_eq!(meta.trust_level, TrustLevel::Primary);
        assert_eq!(meta.source_type, None);
        assert!(meta.warnings.is_empty());
    }

    #[test]
    fn frontmatter_trust_and_source_type_take_the_designs_values() {
        let pairs = |trust: &str, source: &str| {
            vec![
                ("trust_level".to_string(), trust.to_string()),
                ("source_type".to_string(), source.to_string()),
            ]
        };
        let meta = document_metadata(&pairs("secondary", "Paper"), &[]);
        assert_eq!(meta.trust_level, TrustLevel::Secondary);
        assert_eq!(meta.source_type, Some("paper"));
        assert!(meta.warnings.is_empty());
        assert!(meta.metadata["user"].get("trust_level").is_none());
        let meta = document_metadata(&pairs("very high", "blog"), &[]);
        assert_eq!(
            (meta.trust_level, meta.source_type),
            (TrustLevel::Primary, None)
        );
        assert_eq!(meta.warnings.len(), 2, "{:?}", meta.warnings);
        assert!(
            meta.warnings[0]
                .contains("trust_level `very high` is not one of generated, secondary, primary")
        );
        assert!(meta.warnings[1].contains("source_type `blog`"));
    }
}
