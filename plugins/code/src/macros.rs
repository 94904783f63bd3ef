//! Macro uses the C and C++ grammars cannot parse, blanked before parsing.
//!
//! Tree-sitter does not expand macros, and two common uses derail it for
//! the rest of a file: an export or attribute macro between `class` and the
//! class name (`class GTEST_API_ Test {`), and a statement-like macro call
//! outside any function (`GTEST_DISABLE_MSC_WARNINGS_PUSH_(4251)` with no
//! `;`). Both are replaced by spaces, byte for byte, so every position in
//! the blanked text is the same position in the source: lines, spans and
//! chunk text still come from the source itself.

/// `text` with export macros in class heads and statement-like macro calls
/// replaced by spaces (line breaks kept).
pub fn blank_macros(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    blank_class_head_macros(text.as_bytes(), &mut bytes);
    blank_statement_macros(text.as_bytes(), &mut bytes);
    blank_trailing_annotations(text.as_bytes(), &mut bytes);
    blank_leading_specifiers(text.as_bytes(), &mut bytes);
    // Only ASCII bytes are replaced, by ASCII spaces: still valid UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|_| text.to_string())
}

/// `class|struct|union MACRO… Name` followed by `{`, `:` or `final`: each
/// all-caps word before the name is blanked.
fn blank_class_head_macros(src: &[u8], out: &mut [u8]) {
    let mut at = 0;
    while let Some((start, end)) = next_word(src, at) {
        at = end;
        if !matches!(&src[start..end], b"class" | b"struct" | b"union") {
            continue;
        }
        let mut macros = Vec::new();
        let mut cursor = end;
        while let Some((s, e)) = next_word_after_space(src, cursor) {
            if is_macro_name(&src[s..e]) && next_word_after_space(src, e).is_some() {
                macros.push((s, e));
                cursor = e;
                continue;
            }
            // `s..e` is the class name: a definition head follows it.
            let rest = skip_space(src, e);
            let head = src.get(rest) == Some(&b'{')
                || (src.get(rest) == Some(&b':') && src.get(rest + 1) != Some(&b':'))
                || src[rest..].starts_with(b"final");
            if head {
                for (s, e) in &macros {
                    out[*s..*e].fill(b' ');
                }
            }
            break;
        }
    }
}

/// A line that is only `MACRO(…)` (with an optional `;` and comment), not
/// followed by a `{` body: the call is blanked.
fn blank_statement_macros(src: &[u8], out: &mut [u8]) {
    let mut line_start = 0;
    while line_start < src.len() {
        let start = skip_blanks(src, line_start);
        match statement_macro_end(src, start).filter(|_| at_statement_start(src, line_start)) {
            Some(end) => {
                blank(out, start, end);
                line_start = next_line(src, end);
            }
            None => line_start = next_line(src, line_start),
        }
    }
}

/// The end of the statement-like macro call starting at `start` (past its
/// `;`, if any), when the rest of its line is empty or a comment and what
/// follows starts a statement of its own: not a `{` body, not an operator
/// continuing an expression.
fn statement_macro_end(src: &[u8], start: usize) -> Option<usize> {
    let name_end = word_end(src, start);
    if name_end == start || !is_macro_name(&src[start..name_end]) {
        return None;
    }
    let open = skip_space(src, name_end);
    if src.get(open) != Some(&b'(') {
        return None;
    }
    let mut end = matching_paren(src, open)? + 1;
    let after = skip_blanks(src, end);
    if src.get(after) == Some(&b';') {
        end = after + 1;
    }
    let rest = &src[skip_blanks(src, end)..];
    let line_ends =
        rest.is_empty() || rest[0] == b'\n' || rest.starts_with(b"//") || rest.starts_with(b"/*");
    let statement_follows = src
        .get(skip_space(src, end))
        .is_none_or(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'#' | b'}' | b'/' | b'~'));
    (line_ends && statement_follows).then_some(end)
}

/// Spaces over `out[start..end]`, line breaks kept.
fn blank(out: &mut [u8], start: usize, end: usize) {
    for b in &mut out[start..end] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

/// The start of the line after the one holding `at`.
fn next_line(src: &[u8], at: usize) -> usize {
    src[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |p| at + p + 1)
}

/// `f(args) [const] MACRO(…) {` (or `;`, `:`, `=`): an annotation macro
/// after a parameter list (`GTEST_LOCK_EXCLUDED_(mu)`, `NOEXCEPT`) is
/// blanked, so the function keeps its own name.
fn blank_trailing_annotations(src: &[u8], out: &mut [u8]) {
    let mut at = 0;
    while let Some((start, end)) = next_word(src, at) {
        at = end;
        if !is_macro_name(&src[start..end]) || !after_parameter_list(src, start) {
            continue;
        }
        let mut stop = end;
        let open = skip_space(src, end);
        if src.get(open) == Some(&b'(') {
            match matching_paren(src, open) {
                Some(close) => stop = close + 1,
                None => continue,
            }
        }
        let next = skip_space(src, stop);
        let closes = matches!(src.get(next), Some(b'{' | b';' | b':' | b'='))
            || next_word_after_space(src, stop).is_some_and(|(s, e)| {
                is_macro_name(&src[s..e])
                    || matches!(&src[s..e], b"const" | b"override" | b"final" | b"noexcept")
            });
        if closes {
            blank(out, start, stop);
            at = stop;
        }
    }
}

/// `MEM_STATIC U16 MEM_read16(…)` at the start of a line: a macro with an
/// underscore standing for storage specifiers (`static inline`) before a
/// return type and a function name is blanked. With a single word before
/// the `(` (`MACRO f(`), the macro is the return type and stays.
fn blank_leading_specifiers(src: &[u8], out: &mut [u8]) {
    let mut line_start = 0;
    while line_start < src.len() {
        let start = skip_blanks(src, line_start);
        let end = word_end(src, start);
        let word = &src[start..end];
        if end > start && is_macro_name(word) && word.contains(&b'_') {
            // Words (and `*`/`&`) between the macro and the `(`.
            let mut at = end;
            let mut words = 0;
            loop {
                at = skip_blanks(src, at);
                match src.get(at) {
                    Some(b'*' | b'&') => at += 1,
                    Some(b) if b.is_ascii_alphabetic() || *b == b'_' => {
                        words += 1;
                        at = word_end(src, at);
                    }
                    _ => break,
                }
            }
            if words >= 2 && src.get(at) == Some(&b'(') {
                out[start..end].fill(b' ');
            }
        }
        line_start = next_line(src, line_start);
    }
}

/// Whether the code before `at` ends a parameter list: `)` or a `)`
/// followed by qualifiers (`const`, `override`, `noexcept`).
fn after_parameter_list(src: &[u8], at: usize) -> bool {
    let mut end = at;
    loop {
        let before = &src[..end];
        let trimmed = before.trim_ascii_end();
        if trimmed.ends_with(b")") {
            return !closes_a_condition(trimmed);
        }
        let word = trimmed
            .iter()
            .rev()
            .take_while(|b| is_word_byte(**b))
            .count();
        let w = &trimmed[trimmed.len() - word..];
        if word == 0 || !matches!(w, b"const" | b"override" | b"final" | b"noexcept") {
            return false;
        }
        end = trimmed.len() - word;
    }
}

/// Whether `code`, ending in `)`, ends the condition of an `if`, `while`,
/// `for` or `switch` (a statement follows, not a function's qualifiers).
fn closes_a_condition(code: &[u8]) -> bool {
    let mut depth = 0usize;
    for (i, b) in code.iter().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    let head = code[..i].trim_ascii_end();
                    let word = head.iter().rev().take_while(|b| is_word_byte(**b)).count();
                    return matches!(
                        &head[head.len() - word..],
                        b"if" | b"while" | b"for" | b"switch"
                    );
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether a statement can begin on the line starting at `line_start`: the
/// previous non-blank line ends one (`;`, `{`, `}`, a `label:`) or is a
/// comment or preprocessor line; not the middle of an expression.
fn at_statement_start(src: &[u8], line_start: usize) -> bool {
    let Some(prev) = src[..line_start]
        .rsplit(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .find(|l| !l.is_empty())
    else {
        return true;
    };
    prev.starts_with(b"#")
        || prev.starts_with(b"//")
        || prev.starts_with(b"*")
        || prev.ends_with(b"*/")
        || matches!(prev.last(), Some(b';' | b'{' | b'}'))
        || (prev.ends_with(b":") && !prev.ends_with(b"::"))
}

/// All capitals, digits and underscores, at least two characters, starting
/// with a capital: the way C and C++ projects spell macros.
fn is_macro_name(word: &[u8]) -> bool {
    word.len() >= 2
        && word[0].is_ascii_uppercase()
        && word
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The end of the identifier starting at `at` (`at` itself if none does).
fn word_end(src: &[u8], at: usize) -> usize {
    let starts = src
        .get(at)
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
    if !starts {
        return at;
    }
    at + src[at..].iter().take_while(|b| is_word_byte(**b)).count()
}

/// The next whole identifier at or after `at`.
fn next_word(src: &[u8], mut at: usize) -> Option<(usize, usize)> {
    while at < src.len() {
        let starts = (src[at].is_ascii_alphabetic() || src[at] == b'_')
            && (at == 0 || !is_word_byte(src[at - 1]));
        if starts {
            return Some((at, word_end(src, at)));
        }
        at += 1;
    }
    None
}

/// The identifier right after the whitespace following `at`, if one is.
fn next_word_after_space(src: &[u8], at: usize) -> Option<(usize, usize)> {
    let start = skip_space(src, at);
    let end = word_end(src, start);
    (end > start).then_some((start, end))
}

/// Past spaces, tabs and line breaks.
fn skip_space(src: &[u8], at: usize) -> usize {
    at + src[at.min(src.len())..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

/// Past spaces and tabs on the same line.
fn skip_blanks(src: &[u8], at: usize) -> usize {
    at + src[at.min(src.len())..]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t' || **b == b'\r')
        .count()
}

/// The `)` closing the `(` at `open`, skipping comments and string and
/// character literals.
fn matching_paren(src: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = open;
    while at < src.len() {
        match src[at] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            b'/' if src.get(at + 1) == Some(&b'*') => {
                at = src[at + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(src.len(), |p| at + 2 + p + 1);
            }
            b'/' if src.get(at + 1) == Some(&b'/') => {
                at = src[at..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(src.len(), |p| at + p);
            }
            quote @ (b'"' | b'\'') => {
                at += 1;
                while at < src.len() && src[at] != quote {
                    if src[at] == b'\\' {
                        at += 1;
                    }
                    at += 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_macros_in_class_heads_are_blanked_in_place() {
        let src = "class GTEST_API_ Test {\n};\nstruct A_EXPORT B_ATTR Point : Base {};\n";
        let out = blank_macros(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(
            out,
            "class            Test {\n};\nstruct                 Point : Base {};\n"
        );
    }

    #[test]
    fn class_heads_without_macros_and_declarations_stay() {
        for src in [
            "class Test {};\n",
            "struct FILE *open_it(void);\n",
            "typedef struct BYTE BYTE;\n",
            "struct DIR dir;\n",
            "class Outer::Inner {};\n",
        ] {
            assert_eq!(blank_macros(src), src);
        }
    }

    #[test]
    fn statement_like_macro_calls_are_blanked_with_their_lines_kept() {
        let src = "PUSH_WARNINGS(4251 /* x ) */\n    4275)\nint f(void) { return 1; }\nDECLARE_FLAG(bool, x);  // why\n";
        let out = blank_macros(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(out.starts_with(&" ".repeat(18)), "{out:?}");
        assert!(out.contains("int f(void) { return 1; }"));
        assert!(!out.contains("DECLARE_FLAG"));
        assert!(out.contains("// why"));
    }

    #[test]
    fn annotations_after_parameter_lists_are_blanked() {
        let src = "void Mock::Allow(int m)\n    LOCK_EXCLUDED_(mu) {\n}\nint count() const LOCKS_REQUIRED(mu);\n";
        let out = blank_macros(src);
        assert_eq!(out.len(), src.len());
        assert!(!out.contains("LOCK"), "{out:?}");
        assert!(out.contains("void Mock::Allow(int m)\n"));
        assert!(out.contains("int count() const"));
        // A macro call in an expression is code.
        let call = "int x = f(a) + MAX(b, c);\nif (ok) FAIL();\n";
        assert_eq!(blank_macros(call), call);
    }

    #[test]
    fn specifier_macros_before_a_return_type_are_blanked() {
        let src = "MEM_STATIC U16 MEM_read16(const void* p);\nLZ4_FORCE_INLINE unsigned long *f(int x) {\n";
        let out = blank_macros(src);
        assert_eq!(
            out,
            "           U16 MEM_read16(const void* p);\n                 unsigned long *f(int x) {\n"
        );
        // A macro that is the return type, or a type, stays.
        for src in [
            "SOME_TYPE f(int x);\n",
            "U32 MEM_read(void);\n",
            "XXH_API = 3;\n",
        ] {
            assert_eq!(blank_macros(src), src);
        }
    }

    #[test]
    fn macro_calls_with_a_body_or_more_code_stay() {
        for src in [
            "bool b = ok() ||\n    FLAG_GET(x);\n",
            "TEST(Suite, Name) {\n  return;\n}\n",
            "TEST(Suite, Name)\n{\n}\n",
            "LZ4_FORCE_INLINE(int) count(void);\n",
            "void f() {\n  CHECK_(fd != -1)\n      << \"open\";\n}\n",
            "assert(ok);\n",
        ] {
            assert_eq!(blank_macros(src), src);
        }
    }
}
