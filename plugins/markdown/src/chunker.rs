//! `md-heading-v1`, the heading-bounded chunker (it lives in the SDK,
//! [`kebab_plugin_sdk::heading_chunker`], shared with the markup plugin);
//! its tests run here on real markdown.

pub use kebab_plugin_sdk::heading_chunker::{CHUNKER_VERSION, chunk};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse;
    use kebab_plugin_sdk::text::estimate_tokens;
    use kebab_plugin_sdk::{Chunk, ChunkPolicy, Span};

    fn policy(target: u32, overlap: u32) -> ChunkPolicy {
        ChunkPolicy {
            target_tokens: target,
            overlap_tokens: overlap,
        }
    }

    fn chunks_of(src: &str, target: u32, overlap: u32) -> Vec<Chunk> {
        chunk(&parse(src.as_bytes()).unwrap(), &policy(target, overlap))
    }

    #[test]
    fn headings_bound_chunks_and_keep_paths() {
        let src = "# A\n\nalpha text\n\n## B\n\nbeta text\n\n# C\n\ngamma\n";
        let chunks = chunks_of(src, 500, 80);
        let paths: Vec<Vec<String>> = chunks.iter().map(|c| c.heading_path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                vec!["A".to_string()],
                vec!["A".into(), "B".into()],
                vec!["C".into()]
            ]
        );
        assert_eq!(chunks[0].text, "# A\n\nalpha text");
        assert_eq!(chunks[0].spans, vec![Span::lines(1, 1), Span::lines(3, 3)]);
    }

    #[test]
    fn lone_parent_heading_joins_its_child_section() {
        let chunks = chunks_of("# Parent\n## Child\nbody\n", 500, 0);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, "# Parent\n\n## Child\n\nbody");
        assert_eq!(chunks[0].heading_path, vec!["Parent", "Child"]);
        assert_eq!(chunks[0].spans, vec![Span::lines(1, 3)]);
    }

    #[test]
    fn code_blocks_are_never_split() {
        let code: String = (0..300)
            .map(|i| format!("let v{i} = {i} * {i};\n"))
            .collect();
        let src = format!("# S\n\n```rust\n{code}```\n\nafter\n");
        let chunks = chunks_of(&src, 50, 0);
        let code_chunks: Vec<&Chunk> = chunks
            .iter()
            .filter(|c| c.text.contains("```rust"))
            .collect();
        assert_eq!(code_chunks.len(), 1);
        assert!(
            code_chunks[0].text.contains("let v0 ") && code_chunks[0].text.contains("let v299 ")
        );
    }

    #[test]
    fn long_section_splits_by_paragraph_with_overlap() {
        let para = |n: usize| format!("paragraph {n} {}\n\n", "word ".repeat(30));
        let src: String = std::iter::once("# Long\n\n".to_string())
            .chain((0..10).map(para))
            .collect();
        let chunks = chunks_of(&src, 100, 40);
        assert!(chunks.len() > 2, "got {} chunks", chunks.len());
        for c in &chunks {
            assert!(
                estimate_tokens(&c.text) <= 100 + 40,
                "chunk too big: {}",
                c.text
            );
            assert_eq!(c.heading_path, vec!["Long"]);
        }
        for pair in chunks.windows(2) {
            let last_para = pair[0].text.rsplit("\n\n").next().unwrap();
            assert!(
                pair[1].text.starts_with(last_para),
                "no overlap between chunks"
            );
        }
        let all: String = chunks.iter().map(|c| c.text.clone()).collect();
        for n in 0..10 {
            assert!(all.contains(&format!("paragraph {n} ")));
        }
    }

    #[test]
    fn small_table_whole_large_table_in_row_groups_with_header() {
        let small = "# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let chunks = chunks_of(small, 500, 0);
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].text.contains("| 1 | 2 |"));
        let rows: String = (0..60)
            .map(|i| format!("| row{i} | value number {i} |\n"))
            .collect();
        let big = format!("# T\n\n| key | value |\n|---|---|\n{rows}");
        let chunks = chunks_of(&big, 60, 0);
        let table_chunks: Vec<&Chunk> = chunks
            .iter()
            .filter(|c| c.text.contains("| key | value |"))
            .collect();
        assert!(table_chunks.len() > 2);
        for c in &table_chunks[1..] {
            assert_eq!(c.spans[0], Span::lines(3, 4), "header span first");
        }
        let all: String = chunks.iter().map(|c| c.text.clone()).collect();
        assert!(all.contains("| row0 |") && all.contains("| row59 |"));
    }

    #[test]
    fn chunk_text_lines_are_inside_cited_spans() {
        let src = "# A\n\nOne paragraph here.\n\n- item\n- item two\n\n## B\n\n> quote\n";
        let lines: Vec<&str> = src.lines().collect();
        for c in chunks_of(src, 8, 4) {
            for line in c.text.lines().filter(|l| !l.is_empty()) {
                let found = c.spans.iter().any(|s| {
                    let (a, b) = s.line_bounds().unwrap();
                    lines[a as usize - 1..b as usize].contains(&line)
                });
                assert!(found, "{line:?} not in spans {:?}", c.spans);
            }
        }
    }
}
