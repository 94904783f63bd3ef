//! Syntax tree → item, container and glue pieces → blocks and chunks.

use kebab_plugin_sdk::text::LineIndex;
use kebab_plugin_sdk::{Block, BlockKind, Chunk, CodeSpan, Document, PluginError, Span};
use tree_sitter::{Node, Parser};

use crate::lang::{Lang, Role};
use crate::tier2::Tier2;

/// Longest chunk, in lines; longer items are cut into pieces this long.
pub const MAX_CHUNK_LINES: u32 = 200;
/// Metadata key telling the host which chunker label applies to the document.
pub const CHUNKER_KEY: &str = "kebab:chunker-version";

/// A line range (1-based, inclusive) with the symbol it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub start: u32,
    pub end: u32,
    pub symbol: Option<String>,
}

/// Parse a source file into one block per item, container part and glue
/// run (Tier 1), or per Dockerfile stage / manifest file (Tier 2).
pub fn parse(path: &str, bytes: &[u8]) -> Result<Document, PluginError> {
    let text = kebab_plugin_sdk::utf8(bytes)?;
    let (pieces, label, chunker) = if let Some(t2) = Tier2::of_path(path) {
        (t2.pieces(path, text), t2.label(), t2.chunker_version())
    } else {
        let lang = Lang::of_path(path)
            .ok_or_else(|| PluginError::Unsupported(format!("no AST chunker for {path}")))?;
        let (lang, pieces) = pieces(lang, path, text)?;
        (pieces, lang.label(), lang.chunker_version())
    };
    let lines = LineIndex::new(text);
    let blocks = pieces
        .into_iter()
        .map(|p| Block {
            kind: BlockKind::Code,
            heading_path: p.symbol.iter().cloned().collect(),
            text: lines.slice(text, p.start, p.end),
            span: Span::Code(CodeSpan {
                start: p.start,
                end: p.end,
                symbol: p.symbol,
                lang: Some(label.into()),
            }),
            level: None,
            lang: Some(label.into()),
        })
        .collect();
    Ok(Document {
        title: None,
        lang: None,
        blocks,
        metadata: vec![
            (CHUNKER_KEY.into(), chunker.into()),
            ("code_lang".into(), label.into()),
        ],
    })
}

/// One chunk per block; blocks longer than [`MAX_CHUNK_LINES`] are cut.
pub fn chunk(doc: &Document) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (i, block) in doc.blocks.iter().enumerate() {
        let Span::Code(span) = &block.span else {
            continue;
        };
        let lines = LineIndex::new(&block.text);
        let mut start = span.start;
        while start <= span.end {
            let end = (start + MAX_CHUNK_LINES - 1).min(span.end);
            let text = lines.slice(&block.text, start - span.start + 1, end - span.start + 1);
            if !text.trim().is_empty() {
                out.push(Chunk {
                    text,
                    heading_path: block.heading_path.clone(),
                    blocks: vec![i as u32],
                    spans: vec![Span::Code(CodeSpan {
                        start,
                        end,
                        ..span.clone()
                    })],
                });
            }
            start = end + 1;
        }
    }
    out
}

/// The language a file is read as, and its syntax tree: the one its
/// extension names, except that a `.h` header with C++ constructs outside
/// its comments is C++ (parsed again with that grammar; the C parse that
/// found out serves every other `.h`).
pub fn source_tree(
    lang: Lang,
    path: &str,
    text: &str,
) -> Result<(Lang, tree_sitter::Tree), PluginError> {
    let tree = syntax_tree(lang, text)?;
    if lang == Lang::C
        && path.ends_with(".h")
        && looks_like_cpp(&without_comments(tree.root_node(), text))
    {
        return Ok((Lang::Cpp, syntax_tree(Lang::Cpp, text)?));
    }
    Ok((lang, tree))
}

/// `text` parsed with `lang`'s grammar; C and C++ with the macro uses the
/// grammars cannot parse blanked (positions unchanged, so the tree's
/// ranges index `text` itself).
fn syntax_tree(lang: Lang, text: &str) -> Result<tree_sitter::Tree, PluginError> {
    let mut parser = Parser::new();
    parser
        .set_language(&lang.grammar())
        .map_err(|e| PluginError::Malformed(format!("grammar: {e}")))?;
    let blanked;
    let parsed = if matches!(lang, Lang::C | Lang::Cpp) {
        blanked = crate::macros::blank_macros(text);
        blanked.as_str()
    } else {
        text
    };
    parser
        .parse(parsed, None)
        .ok_or_else(|| PluginError::Malformed("the parser gave up".into()))
}

/// The language a file is read as (see [`source_tree`]) and its pieces,
/// in line order, covering every non-blank line.
pub fn pieces(lang: Lang, path: &str, text: &str) -> Result<(Lang, Vec<Piece>), PluginError> {
    let (lang, tree) = source_tree(lang, path, text)?;
    let root = tree.root_node();
    let lines: Vec<&str> = text.lines().collect();
    // A tree with errors confined to a few lines (a macro the grammar does
    // not know, say) still has trustworthy items around them: the error
    // nodes become glue. A file mostly in error is refused (the text
    // plugin indexes it).
    if root.has_error() && error_lines(root) * MAX_ERROR_SHARE > lines.len().max(1) {
        let at = first_error(root).map_or(0, |n| n.start_position().row + 1);
        return Err(PluginError::Malformed(format!(
            "{} syntax error near line {at}",
            lang.label()
        )));
    }
    let mut items = Vec::new();
    collect(
        lang,
        root,
        text.as_bytes(),
        &lang.module(path, root, text.as_bytes()),
        &lines,
        &mut items,
    );
    items.sort_by_key(|p| p.start);
    let mut all = items.clone();
    all.extend(uncovered(1, lines.len() as u32, &items, &lines, None));
    all.sort_by_key(|p| p.start);
    Ok((lang, all))
}

/// `text` with the bytes of its comments blanked (line breaks kept), so a
/// comment mentioning `std::vec` or "using" says nothing about the code.
fn without_comments(root: Node<'_>, text: &str) -> String {
    fn blank(node: Node<'_>, bytes: &mut [u8]) {
        if node.kind() == "comment" {
            for b in &mut bytes[node.start_byte()..node.end_byte()] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
            return;
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            blank(child, bytes);
        }
    }
    let mut bytes = text.as_bytes().to_vec();
    blank(root, &mut bytes);
    // Only whole multi-byte characters sit inside comments, so blanking
    // them byte by byte leaves valid UTF-8.
    String::from_utf8_lossy(&bytes).into_owned()
}

/// C++-only constructs that the C grammar can misread without an error.
fn looks_like_cpp(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("namespace ")
            || t.starts_with("class ")
            || t.starts_with("template")
            || t.starts_with("public:")
            || t.starts_with("private:")
            || t.starts_with("using ")
    }) || text.contains("::")
}

/// A file is refused when more than one line in this many is in error.
const MAX_ERROR_SHARE: usize = 10;

/// Lines in error: those of missing nodes and of the stray tokens inside
/// error nodes (each counted once). A well-formed subtree inside an error
/// node — a whole function the parser recovered around a macro it does not
/// know — is not in error.
fn error_lines(root: Node<'_>) -> usize {
    fn walk(node: Node<'_>, in_error: bool, lines: &mut std::collections::BTreeSet<usize>) {
        // Comments are never in error, wherever the parser put them.
        let stray = node.is_missing()
            || ((in_error || node.is_error()) && node.child_count() == 0 && !node.is_extra());
        if stray {
            lines.extend(node.start_position().row..=node.end_position().row);
            return;
        }
        if !node.has_error() {
            return;
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            walk(child, node.is_error(), lines);
        }
    }
    let mut lines = std::collections::BTreeSet::new();
    walk(root, false, &mut lines);
    lines.len()
}

fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).find_map(first_error)
}

/// 1-based inclusive line range of a node (a node ending at column 0 ends on
/// the line before).
fn line_range(node: Node<'_>) -> (u32, u32) {
    let start = node.start_position().row as u32 + 1;
    let end_pos = node.end_position();
    let end = if end_pos.column == 0 && end_pos.row > node.start_position().row {
        end_pos.row as u32
    } else {
        end_pos.row as u32 + 1
    };
    (start, end.max(start))
}

/// Items (and containers' parts) among the children of `parent`.
fn collect(
    lang: Lang,
    parent: Node<'_>,
    src: &[u8],
    prefix: &str,
    lines: &[&str],
    out: &mut Vec<Piece>,
) {
    // Leading comments/attributes waiting for the item below them.
    let mut pending: Option<(u32, u32)> = None;
    let mut cursor = parent.walk();
    for node in parent.children(&mut cursor) {
        if !node.is_named() {
            continue;
        }
        let (start, end) = line_range(node);
        // Well-formed items the parser recovered inside an error node are
        // items of this scope; the error's stray tokens are glue.
        let role = if node.is_error() {
            Role::Transparent
        } else {
            lang.role(node, src, prefix)
        };
        let attached_start = match pending {
            Some((ps, pe)) if pe + 1 >= start => ps,
            _ => start,
        };
        match role {
            Role::Leading => {
                pending = match pending {
                    Some((ps, pe)) if pe + 1 >= start => Some((ps, end)),
                    _ => Some((start, end)),
                };
                continue;
            }
            Role::Item(symbol) => out.push(Piece {
                start: attached_start,
                end,
                symbol: Some(symbol),
            }),
            Role::Container {
                symbol,
                prefix: inner,
            } => {
                let mut members = Vec::new();
                if let Some(body) = lang.body(node) {
                    collect(lang, body, src, &inner, lines, &mut members);
                }
                members.retain(|m| m.start >= attached_start && m.end <= end);
                let parts = uncovered(attached_start, end, &members, lines, Some(symbol));
                out.extend(members);
                out.extend(parts);
            }
            Role::Transparent => collect(lang, node, src, prefix, lines, out),
            Role::Glue => {}
        }
        pending = None;
    }
}

/// Runs of non-blank lines in `from..=to` not covered by `taken`, trimmed of
/// blank edges, labelled `symbol`.
fn uncovered(
    from: u32,
    to: u32,
    taken: &[Piece],
    lines: &[&str],
    symbol: Option<String>,
) -> Vec<Piece> {
    let covered = |line: u32| taken.iter().any(|p| p.start <= line && line <= p.end);
    let blank = |line: u32| {
        lines
            .get(line as usize - 1)
            .is_none_or(|l| l.trim().is_empty())
    };
    let mut out = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    for line in from..=to {
        if covered(line) {
            if let Some(r) = run.take() {
                out.push(r);
            }
        } else if !blank(line) {
            run = Some(match run {
                Some((s, _)) => (s, line),
                None => (line, line),
            });
        }
    }
    if let Some(r) = run {
        out.push(r);
    }
    out.into_iter()
        .map(|(start, end)| Piece {
            start,
            end,
            symbol: symbol.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(lang: Lang, path: &str, text: &str) -> Vec<(u32, u32, Option<String>)> {
        pieces(lang, path, text)
            .unwrap()
            .1
            .into_iter()
            .map(|p| (p.start, p.end, p.symbol))
            .collect()
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    const RUST: &str = r#"//! Module docs.
use std::fmt;

const LIMIT: usize = 3;

/// A point.
#[derive(Debug)]
pub struct Point {
    x: i32,
}

impl Point {
    /// Make one.
    pub fn new(x: i32) -> Self {
        Point { x }
    }

    const ORIGIN: i32 = 0;

    fn get(&self) -> i32 {
        self.x
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.x)
    }
}

// plain comment, then a blank line

fn main() {
    println!("{}", Point::new(LIMIT as i32));
}
"#;

    #[test]
    fn rust_items_methods_glue_and_doc_comments() {
        assert_eq!(
            listing(Lang::Rust, "src/point.rs", RUST),
            vec![
                (1, 4, None),
                (6, 10, s("struct Point")),
                (12, 12, s("impl Point")),
                (13, 16, s("Point::new")),
                (18, 18, s("impl Point")),
                (20, 22, s("Point::get")),
                (23, 23, s("impl Point")),
                (25, 25, s("impl fmt::Display for Point")),
                (26, 28, s("Point::fmt")),
                (29, 29, s("impl fmt::Display for Point")),
                (31, 31, None),
                (33, 35, s("fn main")),
            ]
        );
    }

    const PYTHON: &str = r#""""Module docstring."""
import os

# Helper for paths.
def join(a, b):
    return os.path.join(a, b)


@dataclass
class Box:
    """A box."""

    size: int = 0

    def grow(self, n):
        self.size += n

    @property
    def empty(self):
        return self.size == 0


LIMIT = 10
"#;

    #[test]
    fn python_functions_classes_methods_with_module_path() {
        assert_eq!(
            listing(Lang::Python, "pkg/util.py", PYTHON),
            vec![
                (1, 2, None),
                (4, 6, s("pkg.util.join")),
                (9, 13, s("pkg.util.Box")),
                (15, 16, s("pkg.util.Box.grow")),
                (18, 20, s("pkg.util.Box.empty")),
                (23, 23, None),
            ]
        );
    }

    const NESTED_RUST: &str = r#"pub fn top() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic1() {
        top();
    }

    mod deeper {
        pub struct Probe;

        impl Probe {
            fn poke(&self) {}
        }
    }
}
"#;

    #[test]
    fn rust_inline_modules_qualify_their_items() {
        assert_eq!(
            listing(Lang::Rust, "src/lib.rs", NESTED_RUST),
            vec![
                (1, 1, s("fn top")),
                (3, 5, s("mod tests")),
                (7, 10, s("tests::basic1")),
                (12, 12, s("mod tests::deeper")),
                (13, 13, s("struct tests::deeper::Probe")),
                (15, 15, s("impl Probe")),
                (16, 16, s("tests::deeper::Probe::poke")),
                (17, 17, s("impl Probe")),
                (18, 18, s("mod tests::deeper")),
                (19, 19, s("mod tests")),
            ]
        );
    }

    const NESTED_PYTHON: &str = r#"import sys

try:
    import fast
except ImportError:
    def fast_path(x):
        return x

if sys.version_info >= (3, 11):
    class Modern:
        def run(self):
            return 1


def outer(a):
    """Outer."""
    def inner(b):
        return b

    class Local:
        pass

    return inner(a)
"#;

    #[test]
    fn python_conditional_and_nested_definitions_are_listed() {
        assert_eq!(
            listing(Lang::Python, "pkg/mod.py", NESTED_PYTHON),
            vec![
                (1, 5, None),
                (6, 7, s("pkg.mod.fast_path")),
                (9, 9, None),
                (10, 10, s("pkg.mod.Modern")),
                (11, 12, s("pkg.mod.Modern.run")),
                (15, 16, s("pkg.mod.outer")),
                (17, 18, s("pkg.mod.outer.inner")),
                (20, 21, s("pkg.mod.outer.Local")),
                (23, 23, s("pkg.mod.outer")),
            ]
        );
    }

    /// Asserts the C file lists functions `f0` … `f{count - 1}` as symbols.
    fn assert_functions_listed(path: &str, text: &str, count: usize) {
        let found: Vec<Option<String>> = listing(Lang::C, path, text)
            .into_iter()
            .map(|(_, _, s)| s)
            .collect();
        for i in 0..count {
            assert!(found.contains(&s(&format!("f{i}"))), "f{i}: {found:?}");
        }
    }

    #[test]
    fn a_local_syntax_error_leaves_the_items_around_it() {
        let mut text = String::from("#include <stdio.h>\n\nSTRANGE_MACRO(a, b) c d e;;;\n\n");
        for i in 0..12 {
            text.push_str(&format!("int f{i}(int x) {{\n    return x + {i};\n}}\n\n"));
        }
        assert_functions_listed("a.c", &text, 12);
        // Mostly broken: refused, as before.
        assert!(pieces(Lang::C, "b.c", "int f( {\n  x y z\n").is_err());
    }

    const C_CONDITIONAL: &str = r#"/* Header. */
#ifndef RING_H
#define RING_H
#if defined (__cplusplus)
extern "C" {
#endif

typedef unsigned char BYTE;
typedef int (*handler)(int code);
typedef struct { int a; } pair_t;

#if USE_FAST
static int pick(int x) { return x; }
#else
static int pick(int x) { return -x; }
#endif

#ifdef __cplusplus
}
#endif
#endif
"#;

    #[test]
    fn c_items_under_conditional_compilation_and_typedefs_are_listed() {
        assert_eq!(
            listing(Lang::C, "ring.h", C_CONDITIONAL),
            vec![
                (1, 6, None),
                (8, 8, s("typedef BYTE")),
                (9, 9, s("typedef handler")),
                (10, 10, s("typedef pair_t")),
                (12, 12, None),
                (13, 13, s("pick")),
                (14, 14, None),
                (15, 15, s("pick")),
                (16, 21, None),
            ]
        );
    }

    #[test]
    fn a_file_wrapped_in_an_unbalanced_extern_block_keeps_its_functions() {
        // `extern "C" {` opened under one `#if` and closed under another:
        // the grammar wraps the whole file in an error node, yet every
        // function inside is well formed.
        let mut text = String::from("#if defined (__cplusplus)\nextern \"C\" {\n#endif\n\n");
        for i in 0..5 {
            text.push_str(&format!("int f{i}(int x) {{\n    return x + {i};\n}}\n\n"));
        }
        text.push_str("#if defined (__cplusplus)\n}\n#endif\n");
        assert_functions_listed("w.c", &text, 5);
    }

    /// The symbols of a listing, in line order.
    fn symbols(lang: Lang, path: &str, text: &str) -> Vec<String> {
        listing(lang, path, text)
            .into_iter()
            .filter_map(|(_, _, symbol)| symbol)
            .collect()
    }

    #[test]
    fn go_grouped_type_declarations_declare_each_type() {
        let text = "package ast\n\ntype (\n\t// A BadExpr is a placeholder.\n\tBadExpr struct {\n\t\tFrom int\n\t}\n\n\tIdent struct{ Name string }\n)\n\ntype Kind int\n\nfunc (x *Ident) Pos() int { return 0 }\n";
        assert_eq!(
            listing(Lang::Go, "ast.go", text),
            vec![
                (1, 3, None),
                (4, 7, s("ast.BadExpr")),
                (9, 9, s("ast.Ident")),
                (10, 10, None),
                (12, 12, s("ast.Kind")),
                (14, 14, s("ast.(*Ident).Pos")),
            ]
        );
    }

    #[test]
    fn kotlin_companion_objects_and_type_aliases() {
        let text = "package a.b\n\ntypealias Headers = Map<String, String>\n\nclass Type(val n: Int) {\n  companion object {\n    fun forArray(n: Int) = Type(n)\n  }\n}\n";
        assert_eq!(
            symbols(Lang::Kotlin, "Type.kt", text),
            [
                "a.b.Headers",
                "a.b.Type",
                "a.b.Type.Companion",
                "a.b.Type.Companion.forArray",
                "a.b.Type.Companion",
                "a.b.Type"
            ]
        );
    }

    #[test]
    fn cpp_names_through_references_casts_specialisations_and_nesting() {
        let text = r#"namespace testing {
enum Severity { kInfo, kError };
using Id = int;
class GTEST_API_ Result {
 public:
  class Iterator {
    void Advance() override {}
  };
  operator bool() const { return ok_; }
  bool ok_;
};
const Part& Result::GetPart(int i) const { return parts_[i]; }
template <>
inline float Limits<float>::Max() { return 1; }
template <typename T>
class Impl<T, Matcher<T>> {
  void Describe() {}
};
void Mock::Allow(int m)
    LOCK_EXCLUDED_(mu) {
}
}
"#;
        let symbols = symbols(Lang::Cpp, "result.cc", text);
        for expected in [
            "testing::Severity",
            "testing::Id",
            "testing::Result::Iterator::Advance",
            "testing::Result::operator bool",
            "testing::Result::GetPart",
            "testing::Limits::Max",
            "testing::Impl::Describe",
            "testing::Mock::Allow",
        ] {
            assert!(
                symbols.iter().any(|s| s == expected),
                "{expected} not in {symbols:?}"
            );
        }
        assert!(
            !symbols
                .iter()
                .any(|s| s.contains("LOCK") || s.contains("GTEST")),
            "{symbols:?}"
        );
    }

    #[test]
    fn a_header_mentioning_cpp_only_in_comments_is_read_as_c() {
        let text = "/* Like std::slice::binary_search, using a comparator. */\nint find(int *xs, int n, int x);\nstruct span { int *p; int n; };\n";
        assert_eq!(source_tree(Lang::C, "span.h", text).unwrap().0, Lang::C);
        assert_eq!(
            source_tree(Lang::C, "span.h", &text.replace("/*", "").replace("*/", ""))
                .unwrap()
                .0,
            Lang::Cpp
        );
        assert_eq!(
            listing(Lang::C, "span.h", text),
            vec![(1, 2, None), (3, 3, s("struct span"))]
        );
    }

    const JS_BINDINGS: &str = r#"export const clock = {
  now() {
    return 1;
  },
  later: function () {
    return 2;
  },
  label: "wall",
};

const settings = { depth: 3 };

const Shape = class {
  area() {
    return 0;
  }
};

function outer(list) {
  const inner = (x) => x * 2;
  return list.map(inner);
}
"#;

    #[test]
    fn javascript_bound_functions_classes_and_objects_of_methods_are_listed() {
        assert_eq!(
            listing(Lang::JavaScript, "lib/time.js", JS_BINDINGS),
            vec![
                (1, 1, s("lib/time.clock")),
                (2, 4, s("lib/time.clock.now")),
                (5, 7, s("lib/time.clock.later")),
                (8, 9, s("lib/time.clock")),
                (11, 11, None),
                (13, 13, s("lib/time.Shape")),
                (14, 16, s("lib/time.Shape.area")),
                (17, 17, s("lib/time.Shape")),
                (19, 19, s("lib/time.outer")),
                (20, 20, s("lib/time.outer.inner")),
                (21, 22, s("lib/time.outer")),
            ]
        );
    }

    #[test]
    fn every_non_blank_line_is_in_exactly_one_chunk() {
        for (path, text) in [
            ("a.rs", RUST),
            ("a.py", PYTHON),
            ("b.rs", NESTED_RUST),
            ("b.py", NESTED_PYTHON),
            ("ring.h", C_CONDITIONAL),
            ("lib/time.js", JS_BINDINGS),
        ] {
            let doc = parse(path, text.as_bytes()).unwrap();
            let chunks = chunk(&doc);
            for (i, line) in text.lines().enumerate() {
                let n = i as u32 + 1;
                let holders = chunks
                    .iter()
                    .filter(|c| {
                        c.spans[0]
                            .line_bounds()
                            .is_some_and(|(s, e)| s <= n && n <= e)
                    })
                    .count();
                if line.trim().is_empty() {
                    assert!(holders <= 1);
                } else {
                    assert_eq!(holders, 1, "{path} line {n} {line:?}");
                }
            }
            assert!(
                doc.metadata
                    .iter()
                    .any(|(k, v)| k == CHUNKER_KEY && v.ends_with("-ast-v1"))
            );
        }
    }

    #[test]
    fn long_items_split_at_200_lines_and_syntax_errors_are_refused() {
        let body: String = (0..450).map(|i| format!("    let v{i} = {i};\n")).collect();
        let text = format!("fn big() {{\n{body}}}\n");
        let chunks = chunk(&parse("big.rs", text.as_bytes()).unwrap());
        let bounds: Vec<(u32, u32)> = chunks
            .iter()
            .map(|c| c.spans[0].line_bounds().unwrap())
            .collect();
        assert_eq!(bounds, vec![(1, 200), (201, 400), (401, 452)]);
        assert!(
            matches!(parse("bad.rs", b"fn broken( {"), Err(PluginError::Malformed(m)) if m.contains("syntax error"))
        );
        assert!(matches!(
            parse("x.zig", b"const x = 1;"),
            Err(PluginError::Unsupported(_))
        ));
    }
}

#[cfg(test)]
mod language_fixtures {
    use super::*;

    fn listing(path: &str) -> Vec<(u32, u32, Option<String>)> {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/{path}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let lang = Lang::of_path(path).unwrap();
        pieces(lang, path, &text)
            .unwrap()
            .1
            .into_iter()
            .map(|p| (p.start, p.end, p.symbol))
            .collect()
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn go_functions_and_methods_with_package() {
        assert_eq!(
            listing("server.go"),
            vec![
                (1, 8, None),
                (10, 13, s("server.Server")),
                (15, 18, s("server.NewServer")),
                (20, 23, s("server.(*Server).Start")),
                (25, 27, s("server.Server.Addr")),
            ]
        );
    }

    #[test]
    fn typescript_and_javascript_with_module_paths() {
        assert_eq!(
            listing("widget.ts"),
            vec![
                (1, 1, None),
                (3, 5, s("widget.WidgetProps")),
                (7, 7, s("widget.Size")),
                (9, 11, s("widget.Widget")),
                (13, 15, s("widget.Widget.constructor")),
                (17, 19, s("widget.Widget.search")),
                (20, 20, s("widget.Widget")),
                (22, 24, s("widget.mount")),
                (26, 26, s("widget.helper")),
            ]
        );
        assert_eq!(
            listing("cart.js"),
            vec![
                (1, 1, None),
                (3, 6, s("cart.total")),
                (8, 8, s("cart.Cart")),
                (9, 11, s("cart.Cart.add")),
                (12, 12, s("cart.Cart")),
                (14, 14, None),
            ]
        );
    }

    #[test]
    fn java_methods_under_package_and_class() {
        assert_eq!(
            listing("Invoice.java"),
            vec![
                (1, 3, None),
                (5, 7, s("com.acme.billing.Invoice")),
                (9, 11, s("com.acme.billing.Invoice.Invoice")),
                (13, 16, s("com.acme.billing.Invoice.total")),
                (17, 17, s("com.acme.billing.Invoice")),
            ]
        );
    }

    #[test]
    fn c_and_cpp_functions_structs_namespaces_classes() {
        assert_eq!(
            listing("ring.c"),
            vec![
                (1, 3, None),
                (5, 8, s("struct ring")),
                (10, 14, s("ring_push")),
                (16, 18, s("ring_head"))
            ]
        );
        assert_eq!(
            listing("geometry.cpp"),
            vec![
                (1, 1, None),
                (3, 3, s("geo")),
                (5, 6, s("geo::Circle")),
                (7, 7, s("geo::Circle::Circle")),
                (8, 8, s("geo::Circle::area")),
                (10, 12, s("geo::Circle")),
                (14, 16, s("geo::distance")),
                (18, 18, s("geo")),
                (20, 20, s("geo_area")),
            ]
        );
    }

    #[test]
    fn a_header_with_cpp_is_read_as_cpp() {
        let header = b"namespace geo {\nclass Circle {\npublic:\n  double area() const { return r * r; }\n  double r;\n};\n}\n";
        let doc = parse("geo.h", header).unwrap();
        assert!(doc.metadata.contains(&("code_lang".into(), "cpp".into())));
        assert!(
            doc.metadata
                .contains(&(CHUNKER_KEY.into(), "code-cpp-ast-v1".into()))
        );
        let symbols: Vec<_> = doc
            .blocks
            .iter()
            .filter_map(|b| b.heading_path.first().cloned())
            .collect();
        assert!(
            symbols.contains(&"geo::Circle::area".to_string()),
            "{symbols:?}"
        );
        let c = parse("ring.h", b"int ring_push(int v);\n").unwrap();
        assert!(c.metadata.contains(&("code_lang".into(), "c".into())));
    }

    #[test]
    fn kotlin_classes_objects_and_functions() {
        assert_eq!(
            listing("Billing.kt"),
            vec![
                (1, 3, None),
                (5, 7, s("com.acme.billing.Ledger")),
                (9, 11, s("com.acme.billing.Ledger.add")),
                (13, 13, s("com.acme.billing.Ledger.balance")),
                (14, 14, s("com.acme.billing.Ledger")),
                (16, 17, s("com.acme.billing.today")),
                (19, 19, s("com.acme.billing.Registry")),
                (20, 20, s("com.acme.billing.Registry.lookup")),
                (21, 21, s("com.acme.billing.Registry")),
            ]
        );
    }

    #[test]
    fn every_fixture_line_belongs_to_one_chunk() {
        for f in [
            "server.go",
            "widget.ts",
            "cart.js",
            "Invoice.java",
            "ring.c",
            "geometry.cpp",
        ] {
            let text = std::fs::read_to_string(format!(
                "{}/tests/fixtures/{f}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            let chunks = chunk(&parse(f, text.as_bytes()).unwrap());
            for (i, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let n = i as u32 + 1;
                let holders = chunks
                    .iter()
                    .filter(|c| {
                        c.spans[0]
                            .line_bounds()
                            .is_some_and(|(a, b)| a <= n && n <= b)
                    })
                    .count();
                assert_eq!(holders, 1, "{f} line {n} {line:?}");
            }
        }
    }
}
