//! Embedding models kebab knows by name: where the hub keeps their files,
//! their dimensions, token limit and the prefixes their model card asks for.

/// A known embedding model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCard {
    /// The name used in config and on the command line.
    pub name: &'static str,
    /// Hugging Face repository holding the ONNX export.
    pub hub_repo: &'static str,
    /// `(path in the repository, file name on disk)` of what to download.
    pub files: &'static [(&'static str, &'static str)],
    /// Output dimensions.
    pub dimensions: usize,
    /// Longest input, in tokens, the model was trained on.
    pub max_length: usize,
    /// Text put before a query (E5: `query: `).
    pub query_prefix: &'static str,
    /// Text put before a passage (E5: `passage: `).
    pub passage_prefix: &'static str,
    /// Languages it was trained for, for `kebab models list`.
    pub languages: &'static str,
    /// Cosine similarity below which a neighbour is not a hit: where the
    /// model puts unrelated text (E5 scores compress near 0.7–0.9). For E5
    /// it is 0.70: a question's passage in another language scores
    /// 0.74–0.85 (median 0.78–0.81 per direction on the multilingual suites
    /// of `scripts/eval_multilingual.sh`), so the earlier 0.78 dropped half
    /// of the English → Korean and English → Chinese answers.
    pub min_score: f32,
}

const ONNX_FILES: &[(&str, &str)] = &[
    ("onnx/model.onnx", "model.onnx"),
    ("tokenizer.json", "tokenizer.json"),
];

/// Every model `kebab models pull` can fetch.
pub const CATALOG: &[ModelCard] = &[
    ModelCard {
        name: "multilingual-e5-small",
        hub_repo: "intfloat/multilingual-e5-small",
        files: ONNX_FILES,
        dimensions: 384,
        max_length: 512,
        query_prefix: "query: ",
        passage_prefix: "passage: ",
        languages: "multilingual (100 languages, Korean included)",
        min_score: 0.70,
    },
    ModelCard {
        name: "multilingual-e5-base",
        hub_repo: "intfloat/multilingual-e5-base",
        files: ONNX_FILES,
        dimensions: 768,
        max_length: 512,
        query_prefix: "query: ",
        passage_prefix: "passage: ",
        languages: "multilingual (100 languages, Korean included)",
        min_score: 0.70,
    },
    ModelCard {
        name: "all-minilm-l6-v2",
        hub_repo: "sentence-transformers/all-MiniLM-L6-v2",
        files: ONNX_FILES,
        dimensions: 384,
        max_length: 256,
        query_prefix: "",
        passage_prefix: "",
        languages: "English",
        min_score: 0.25,
    },
];

/// The card for `name`, if kebab knows it.
pub fn card(name: &str) -> Option<&'static ModelCard> {
    CATALOG.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e5_models_carry_their_prefixes_and_names_are_unique() {
        let e5 = card("multilingual-e5-small").unwrap();
        assert_eq!(
            (e5.query_prefix, e5.passage_prefix),
            ("query: ", "passage: ")
        );
        assert_eq!(card("all-minilm-l6-v2").unwrap().query_prefix, "");
        let mut names: Vec<_> = CATALOG.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CATALOG.len());
        assert!(card("nope").is_none());
    }
}
