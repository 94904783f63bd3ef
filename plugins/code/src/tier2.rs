//! Tier 2: files that are best read whole or by coarse sections —
//! Dockerfiles (one chunk per build stage) and build manifests (one chunk
//! per file), labelled with their language.

use kebab_plugin_sdk::text::LineIndex;

use crate::items::Piece;

/// A Tier 2 file kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier2 {
    Dockerfile,
    /// A manifest with this language label.
    Manifest(&'static str),
}

/// Manifest file names and their language labels.
const MANIFESTS: &[(&str, &str)] = &[
    ("Cargo.toml", "toml"),
    ("pyproject.toml", "toml"),
    ("package.json", "json"),
    ("go.mod", "gomod"),
    ("pom.xml", "xml"),
    ("build.gradle", "groovy"),
    ("build.gradle.kts", "kotlin"),
    ("settings.gradle", "groovy"),
    ("settings.gradle.kts", "kotlin"),
    ("requirements.txt", "pip-requirements"),
];

impl Tier2 {
    /// File-name patterns.
    pub fn patterns() -> Vec<&'static str> {
        let mut out = vec!["Dockerfile", "Dockerfile.*", "*.dockerfile"];
        out.extend(MANIFESTS.iter().map(|(name, _)| *name));
        out
    }

    /// The Tier 2 kind of a path, by file name.
    pub fn of_path(path: &str) -> Option<Tier2> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if name == "Dockerfile"
            || name.starts_with("Dockerfile.")
            || name.to_ascii_lowercase().ends_with(".dockerfile")
        {
            return Some(Tier2::Dockerfile);
        }
        MANIFESTS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, lang)| Tier2::Manifest(lang))
    }

    /// Language label.
    pub fn label(self) -> &'static str {
        match self {
            Tier2::Dockerfile => "dockerfile",
            Tier2::Manifest(lang) => lang,
        }
    }

    /// Chunker label.
    pub fn chunker_version(self) -> &'static str {
        match self {
            Tier2::Dockerfile => "dockerfile-stage-v1",
            Tier2::Manifest(_) => "manifest-file-v1",
        }
    }

    /// Pieces of the file: each `FROM` stage of a Dockerfile (its symbol the
    /// stage name, or `stage N`), or the whole manifest (symbol: file name).
    pub fn pieces(self, path: &str, text: &str) -> Vec<Piece> {
        let lines: Vec<&str> = text.lines().collect();
        let last = lines.len() as u32;
        if last == 0 {
            return Vec::new();
        }
        let file_name = path.rsplit('/').next().unwrap_or(path).to_string();
        let pieces = match self {
            Tier2::Manifest(_) => vec![Piece {
                start: 1,
                end: last,
                symbol: Some(file_name),
            }],
            Tier2::Dockerfile => {
                let froms: Vec<u32> = lines
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.trim_start().to_ascii_uppercase().starts_with("FROM "))
                    .map(|(i, _)| i as u32 + 1)
                    .collect();
                if froms.len() <= 1 {
                    vec![Piece {
                        start: 1,
                        end: last,
                        symbol: Some(file_name),
                    }]
                } else {
                    froms
                        .iter()
                        .enumerate()
                        .map(|(n, &from)| {
                            let start = if n == 0 { 1 } else { from };
                            let end = froms.get(n + 1).map_or(last, |next| next - 1);
                            let stage = stage_name(lines[from as usize - 1])
                                .unwrap_or_else(|| format!("stage {n}"));
                            Piece {
                                start,
                                end,
                                symbol: Some(format!("{file_name}:{stage}")),
                            }
                        })
                        .collect()
                }
            }
        };
        let index = LineIndex::new(text);
        pieces
            .into_iter()
            .filter(|p| !index.slice(text, p.start, p.end).trim().is_empty())
            .collect()
    }
}

/// `FROM image AS name` → `name`.
fn stage_name(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| w.eq_ignore_ascii_case("as"))?;
    words.get(at + 1).map(|s| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_stage_dockerfile_is_cut_per_stage() {
        let text = "# syntax=docker/dockerfile:1\nFROM rust:1.95 AS build\nRUN cargo build --release\n\nFROM debian:12-slim\nCOPY --from=build /app /app\nCMD [\"/app\"]\n";
        let pieces = Tier2::Dockerfile.pieces("svc/Dockerfile", text);
        let got: Vec<(u32, u32, Option<String>)> = pieces
            .into_iter()
            .map(|p| (p.start, p.end, p.symbol))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 4, Some("Dockerfile:build".into())),
                (5, 7, Some("Dockerfile:stage 1".into())),
            ]
        );
    }

    #[test]
    fn manifests_are_one_chunk_with_their_label() {
        assert_eq!(
            Tier2::of_path("a/Cargo.toml"),
            Some(Tier2::Manifest("toml"))
        );
        assert_eq!(Tier2::of_path("go.mod").map(Tier2::label), Some("gomod"));
        assert_eq!(
            Tier2::of_path("docker/api.dockerfile"),
            Some(Tier2::Dockerfile)
        );
        assert_eq!(Tier2::of_path("notes.toml"), None);
        let p = Tier2::Manifest("json").pieces("web/package.json", "{\n  \"name\": \"web\"\n}\n");
        assert_eq!(
            (p[0].start, p[0].end, p[0].symbol.as_deref()),
            (1, 3, Some("package.json"))
        );
    }
}
