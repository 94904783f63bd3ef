//! YAML frontmatter: `title`, `tags`, `aliases`, and every other key kept as
//! metadata.

use serde_json::Value;

/// What a frontmatter block says about its document.
#[derive(Debug, Default, PartialEq)]
pub struct Frontmatter {
    /// Byte length of the frontmatter including its closing fence line.
    pub len: usize,
    /// The `title` key.
    pub title: Option<String>,
    /// The `lang` (or `language`) key: a BCP-47 tag such as `ja` or
    /// `zh-Hant`, when it reads as one.
    pub lang: Option<String>,
    /// Metadata pairs; `tags` and `aliases` are JSON arrays of strings, other
    /// non-string values are JSON.
    pub metadata: Vec<(String, String)>,
    /// Why the YAML could not be read, when it could not.
    pub error: Option<String>,
}

/// Split off a leading `---` … `---` (or `...`) block and read it.
/// Returns `None` when the text does not start with a frontmatter fence.
pub fn split(text: &str) -> Option<Frontmatter> {
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != "---" {
        return None;
    }
    let mut offset = first_end + 1;
    let body_start = offset;
    for line in text[body_start..].split_inclusive('\n') {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            let yaml = &text[body_start..offset];
            let mut fm = read(yaml);
            fm.len = offset + line.len();
            return Some(fm);
        }
        offset += line.len();
    }
    None
}

fn read(yaml: &str) -> Frontmatter {
    let mut fm = Frontmatter::default();
    if yaml.trim().is_empty() {
        return fm;
    }
    let map = match serde_yaml::from_str::<Value>(yaml) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            fm.error = Some(format!("frontmatter is not a mapping: {other}"));
            return fm;
        }
        Err(e) => {
            fm.error = Some(format!("invalid frontmatter YAML: {e}"));
            return fm;
        }
    };
    for (key, value) in map {
        if matches!(key.as_str(), "lang" | "language") {
            fm.lang = scalar(&value).map(|s| s.trim().to_string()).filter(|s| {
                (1..=35).contains(&s.len())
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            });
        }
        match key.as_str() {
            "title" => fm.title = scalar(&value),
            "tags" | "aliases" => {
                let list = string_list(&value);
                fm.metadata.push((key, Value::from(list).to_string()));
            }
            _ => {
                let text = match value {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                fm.metadata.push((key, text));
            }
        }
    }
    fm
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// `[a, b]`, `a, b` or `a` → `["a", "b"]`; a leading `#` is dropped.
fn string_list(value: &Value) -> Vec<String> {
    let items: Vec<String> = match value {
        Value::Array(items) => items.iter().filter_map(scalar).collect(),
        Value::String(s) => s.split([',', ' ']).map(str::to_string).collect(),
        Value::Null => Vec::new(),
        other => vec![other.to_string()],
    };
    items
        .into_iter()
        .map(|s| s.trim().trim_start_matches('#').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_title_tags_aliases_and_unknown_keys() {
        let text = "---\ntitle: Rust notes\ntags: [rust, \"#wasm\"]\naliases: rn\nrating: 5\nsource: web\n---\n# Body\n";
        let fm = split(text).unwrap();
        assert_eq!(fm.len, text.find("# Body").unwrap());
        assert_eq!(fm.title.as_deref(), Some("Rust notes"));
        assert!(
            fm.metadata
                .contains(&("tags".into(), r#"["rust","wasm"]"#.into()))
        );
        assert!(
            fm.metadata
                .contains(&("aliases".into(), r#"["rn"]"#.into()))
        );
        assert!(fm.metadata.contains(&("rating".into(), "5".into())));
        assert!(fm.metadata.contains(&("source".into(), "web".into())));
        assert_eq!(fm.error, None);
    }

    #[test]
    fn a_language_tag_is_the_documents_language() {
        let fm = split("---\nlang: ja\n---\n").unwrap();
        assert_eq!(fm.lang.as_deref(), Some("ja"));
        assert!(fm.metadata.contains(&("lang".into(), "ja".into())));
        let fm = split("---\nlanguage: zh-Hant\n---\n").unwrap();
        assert_eq!(fm.lang.as_deref(), Some("zh-Hant"));
        assert_eq!(
            split("---\nlang: \"not a tag!\"\n---\n").unwrap().lang,
            None
        );
    }

    #[test]
    fn comma_separated_tags() {
        let fm = split("---\ntags: a, b\n---\n").unwrap();
        assert_eq!(fm.metadata, vec![("tags".into(), r#"["a","b"]"#.into())]);
    }

    #[test]
    fn invalid_yaml_is_reported_not_fatal() {
        let fm = split("---\ntitle: [unclosed\n---\ntext\n").unwrap();
        assert!(fm.error.unwrap().contains("invalid frontmatter"));
        assert_eq!(fm.len, "---\ntitle: [unclosed\n---\n".len());
    }

    #[test]
    fn no_fence_no_frontmatter() {
        assert_eq!(split("# Title\n---\n"), None);
        assert_eq!(split("---\nnever closed\n"), None);
    }
}
