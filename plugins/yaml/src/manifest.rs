//! Splitting a YAML file into Kubernetes resources with exact line spans.

use kebab_plugin_sdk::text::LineIndex;
use kebab_plugin_sdk::{Block, BlockKind, Chunk, CodeSpan, Document, PluginError, Span};
use serde_json::{Value, json};
use yaml_rust2::{Yaml, YamlLoader};

/// Resources listed in the document's `k8s_resources` metadata; a file
/// with more (a 30 000-resource dump) lists the first ones, and every
/// resource still has its own chunk and symbol.
const MAX_LISTED_RESOURCES: usize = 1000;

/// One resource found in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// 1-based inclusive lines.
    pub start: u32,
    pub end: u32,
    pub symbol: Option<String>,
    pub labels: Value,
    pub annotations: Value,
}

/// Parse a manifest file into one block per resource.
pub fn parse(bytes: &[u8]) -> Result<Document, PluginError> {
    let text = kebab_plugin_sdk::utf8(bytes)?;
    if text.contains("{{") {
        return Err(PluginError::Unsupported(
            "Helm template ({{ … }}), not plain YAML".into(),
        ));
    }
    let resources = resources(text)?;
    if resources.iter().all(|r| r.symbol.is_none()) {
        return Err(PluginError::Unsupported(
            "no Kubernetes resource (apiVersion + kind) in this YAML".into(),
        ));
    }
    let metadata = vec![(
        "k8s_resources".to_string(),
        Value::Array(
            resources
                .iter()
                .filter(|r| r.symbol.is_some())
                .take(MAX_LISTED_RESOURCES)
                .map(|r| json!({ "symbol": r.symbol, "labels": r.labels, "annotations": r.annotations }))
                .collect(),
        )
        .to_string(),
    )];
    let lines = LineIndex::new(text);
    let blocks = resources
        .into_iter()
        .map(|r| Block {
            kind: BlockKind::Code,
            heading_path: r.symbol.iter().cloned().collect(),
            text: lines.slice(text, r.start, r.end),
            span: Span::Code(CodeSpan {
                start: r.start,
                end: r.end,
                symbol: r.symbol,
                lang: Some("yaml".into()),
            }),
            level: None,
            lang: Some("yaml".into()),
        })
        .collect();
    Ok(Document {
        title: None,
        lang: None,
        blocks,
        metadata,
    })
}

/// One chunk per resource block.
pub fn chunk(doc: &Document) -> Vec<Chunk> {
    doc.blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.text.trim().is_empty())
        .map(|(i, b)| Chunk {
            text: b.text.clone(),
            heading_path: b.heading_path.clone(),
            blocks: vec![i as u32],
            spans: vec![b.span.clone()],
        })
        .collect()
}

/// Whether a line separates YAML documents (`---`, optionally followed by a
/// comment or content) or ends one (`...`).
fn is_separator(line: &str) -> bool {
    let t = line.trim_end();
    t == "---" || t.starts_with("--- ") || t.starts_with("---\t") || t == "..."
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The resources of a file, in order.
pub fn resources(text: &str) -> Result<Vec<Resource>, PluginError> {
    let lines: Vec<&str> = text.lines().collect();
    // Document ranges (0-based, inclusive) between separators.
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut start = 0usize;
    for (i, line) in lines.iter().enumerate() {
        if is_separator(line) {
            if i > start {
                ranges.push((start, i - 1));
            }
            start = i + 1;
        }
    }
    if start < lines.len() {
        ranges.push((start, lines.len() - 1));
    }
    let mut out = Vec::new();
    let mut pending_comments: Option<usize> = None;
    for (s, e) in ranges {
        let body = lines[s..=e].join("\n");
        if lines[s..=e].iter().all(|l| is_blank_or_comment(l)) {
            // Comments alone: they belong to the resource that follows.
            pending_comments.get_or_insert(s);
            continue;
        }
        let first = pending_comments.take().unwrap_or(s);
        let docs =
            YamlLoader::load_from_str(&body).map_err(|e| PluginError::Malformed(e.to_string()))?;
        let Some(doc) = docs.into_iter().next() else {
            continue;
        };
        let content_start = first
            + lines[first..=e]
                .iter()
                .take_while(|l| l.trim().is_empty())
                .count();
        let content_end = e - lines[s..=e]
            .iter()
            .rev()
            .take_while(|l| l.trim().is_empty())
            .count();
        let kind = doc["kind"].as_str().unwrap_or("");
        let is_resource = doc["apiVersion"].as_str().is_some() && !kind.is_empty();
        if is_resource && kind.ends_with("List") && doc["items"].as_vec().is_some() {
            out.extend(list_items(&lines, s, e, &doc));
            continue;
        }
        let mut found = resource(content_start, content_end, &doc);
        if !is_resource {
            found.symbol = None;
        }
        out.push(found);
    }
    Ok(out)
}

/// Items of a `kind: List` in block style: each `- ` entry at the items'
/// indentation up to the next one. A flow-style list stays one resource.
fn list_items(lines: &[&str], s: usize, e: usize, doc: &Yaml) -> Vec<Resource> {
    let items = doc["items"].as_vec().cloned().unwrap_or_default();
    let Some(items_line) = (s..=e).find(|&i| lines[i].trim_end() == "items:") else {
        return vec![resource(s, e, doc)];
    };
    let starts: Vec<usize> = (items_line + 1..=e)
        .filter(|&i| {
            let t = lines[i].trim_start();
            let indent = lines[i].len() - t.len();
            (t.starts_with("- ") || t == "-") && indent <= 2
        })
        .collect();
    if starts.len() != items.len() {
        return vec![resource(s, e, doc)];
    }
    starts
        .iter()
        .enumerate()
        .map(|(n, &from)| {
            let mut to = starts.get(n + 1).map_or(e, |next| next - 1);
            while to > from && is_blank_or_comment(lines[to]) {
                to -= 1;
            }
            resource(from, to, &items[n])
        })
        .collect()
}

/// The resource `doc` on 0-based lines `first..=last`.
fn resource(first: usize, last: usize, doc: &Yaml) -> Resource {
    Resource {
        start: first as u32 + 1,
        end: last as u32 + 1,
        symbol: Some(symbol(doc)),
        labels: map_json(&doc["metadata"]["labels"]),
        annotations: map_json(&doc["metadata"]["annotations"]),
    }
}

/// `Kind/namespace/name`, or `Kind/name` without a namespace.
fn symbol(doc: &Yaml) -> String {
    let kind = doc["kind"].as_str().unwrap_or("Unknown");
    let name = doc["metadata"]["name"].as_str().unwrap_or("unnamed");
    match doc["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind}/{ns}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

fn map_json(y: &Yaml) -> Value {
    let Some(h) = y.as_hash() else {
        return json!({});
    };
    let mut m = serde_json::Map::new();
    for (k, v) in h {
        let key = k
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| format!("{k:?}"));
        let val = match v {
            Yaml::String(s) => s.clone(),
            Yaml::Integer(i) => i.to_string(),
            Yaml::Real(r) => r.clone(),
            Yaml::Boolean(b) => b.to_string(),
            other => format!("{other:?}"),
        };
        m.insert(key, Value::String(val));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MULTI: &str = "# The web tier\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n  labels:\n    app: web\nspec:\n  replicas: 3\n---\n# Its service\n\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n";

    fn bounds(rs: &[Resource]) -> Vec<(u32, u32, Option<String>)> {
        rs.iter()
            .map(|r| (r.start, r.end, r.symbol.clone()))
            .collect()
    }

    #[test]
    fn multi_document_file_gives_one_resource_each_with_comments() {
        let rs = resources(MULTI).unwrap();
        assert_eq!(
            bounds(&rs),
            vec![
                (1, 10, Some("Deployment/shop/web".into())),
                (12, 20, Some("Service/web".into())),
            ]
        );
        assert_eq!(rs[0].labels, json!({"app": "web"}));
        let doc = parse(MULTI.as_bytes()).unwrap();
        let chunks = chunk(&doc);
        assert_eq!(chunks.len(), 2);
        assert!(chunks[1].text.starts_with("# Its service"));
        assert!(chunks[0].text.contains("replicas: 3"));
    }

    #[test]
    fn lists_expand_to_items() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: b\n    namespace: ns\n";
        assert_eq!(
            bounds(&resources(text).unwrap()),
            vec![
                (4, 7, Some("ConfigMap/a".into())),
                (8, 12, Some("Secret/ns/b".into()))
            ]
        );
    }

    #[test]
    fn comment_only_document_joins_the_next_resource() {
        let text =
            "---\n# leading note\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
        assert_eq!(
            bounds(&resources(text).unwrap()),
            vec![(2, 7, Some("ConfigMap/c".into()))]
        );
    }

    #[test]
    fn helm_invalid_and_plain_yaml_are_refused() {
        let helm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n";
        assert!(
            matches!(parse(helm.as_bytes()), Err(PluginError::Unsupported(m)) if m.contains("Helm"))
        );
        assert!(matches!(
            parse(b"key: [unclosed\n"),
            Err(PluginError::Malformed(_))
        ));
        assert!(matches!(
            parse(b"name: app\nport: 80\n"),
            Err(PluginError::Unsupported(_))
        ));
    }
}
