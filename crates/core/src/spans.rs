//! Where a block or chunk sits in its source file: the one typed form of a
//! span from the moment a plugin's output is accepted (the plugin host
//! converts each contract version's span into it), through the index
//! (`blocks.source_span_json`, `chunks.source_spans_json`, whose JSON this
//! type defines) to citations, fetch and filters.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A source span, stored as `{"kind": "line" | "page" | "code", …}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SourceSpan {
    /// Lines `start..=end`, from 1.
    Line { start: u32, end: u32 },
    /// A page, from 1 (PDF).
    Page { page: u32 },
    /// Lines of source code, with the symbol defined there and the
    /// language label.
    Code {
        start: u32,
        end: u32,
        symbol: Option<String>,
        lang: Option<String>,
    },
}

impl SourceSpan {
    /// The first and last line, for line and code spans.
    pub fn lines(&self) -> Option<(u32, u32)> {
        match self {
            SourceSpan::Line { start, end } | SourceSpan::Code { start, end, .. } => {
                Some((*start, *end))
            }
            SourceSpan::Page { .. } => None,
        }
    }

    /// The language label of a code span.
    pub fn lang(&self) -> Option<&str> {
        match self {
            SourceSpan::Code { lang, .. } => lang.as_deref(),
            _ => None,
        }
    }

    /// The stored JSON (also what block and chunk IDs are derived from).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a span serialises")
    }

    /// A stored list of spans; an unreadable value reads as none.
    pub fn parse_list(json: &str) -> Vec<SourceSpan> {
        serde_json::from_str(json).unwrap_or_default()
    }

    /// One stored span, if it reads.
    pub fn parse(json: &str) -> Option<SourceSpan> {
        serde_json::from_str(json).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spans_are_stored_as_the_json_ids_were_always_derived_from() {
        let line = SourceSpan::Line { start: 3, end: 9 };
        assert_eq!(
            line.to_json(),
            json!({"kind": "line", "start": 3, "end": 9})
        );
        let page = SourceSpan::Page { page: 4 };
        assert_eq!(page.to_json(), json!({"kind": "page", "page": 4}));
        let code = SourceSpan::Code {
            start: 1,
            end: 2,
            symbol: Some("a::b".into()),
            lang: None,
        };
        assert_eq!(
            code.to_json(),
            json!({"kind": "code", "start": 1, "end": 2, "symbol": "a::b", "lang": null})
        );
        let list = serde_json::to_string(&vec![line.clone(), code.clone()]).unwrap();
        assert_eq!(
            SourceSpan::parse_list(&list),
            vec![line.clone(), code.clone()]
        );
        assert_eq!(SourceSpan::parse_list("not json"), vec![]);
        assert_eq!((line.lines(), page.lines()), (Some((3, 9)), None));
        assert_eq!(code.lang(), None);
    }
}
