//! Text helpers shared by chunkers: token estimates, line indexing, blank-line
//! paragraphs and overlapping line windows.

/// A rough token count for sizing chunks.
///
/// ASCII text averages about four characters per token in BERT/GPT-style
/// vocabularies; other scripts (Hangul, CJK, …) are closer to one token per
/// character. The estimate is stable, cheap and never zero for non-blank text.
pub fn estimate_tokens(text: &str) -> u32 {
    let mut ascii = 0u32;
    let mut other = 0u32;
    for c in text.chars() {
        if c.is_whitespace() {
            continue;
        }
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + other
}

/// Maps byte offsets of a text to 1-based line numbers.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Index the line starts of `text`.
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if starts.len() > 1 && *starts.last().unwrap_or(&0) == text.len() {
            // A trailing newline does not open a new line.
            starts.pop();
        }
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// Number of lines (a file without a trailing newline still counts its
    /// last line; an empty text has one empty line).
    pub fn line_count(&self) -> u32 {
        self.starts.len() as u32
    }

    /// The 1-based line holding byte `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> u32 {
        let offset = offset.min(self.len);
        match self.starts.binary_search(&offset) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }

    /// Lines `start..=end` (1-based, inclusive) of `text` — the text this
    /// index was built from — joined with `\n` as [`str::lines`] would
    /// (`\r\n` endings become `\n`, no final line break). Costs the length
    /// of the slice, not of the text before it, so cutting a whole file
    /// into chunks stays linear.
    pub fn slice(&self, text: &str, start: u32, end: u32) -> String {
        let count = self.starts.len() as u32;
        let (start, end) = (start.max(1), end.min(count));
        if start > end {
            return String::new();
        }
        let from = self.starts[start as usize - 1];
        let to = if end < count {
            self.starts[end as usize]
        } else {
            self.len
        };
        let mut piece = &text[from..to.min(text.len())];
        piece = piece.strip_suffix('\n').unwrap_or(piece);
        piece = piece.strip_suffix('\r').unwrap_or(piece);
        if piece.contains("\r\n") {
            piece.replace("\r\n", "\n")
        } else {
            piece.to_string()
        }
    }

    /// The 1-based inclusive line range of the byte range `start..end`
    /// (`end` exclusive). A trailing newline does not extend the range.
    pub fn line_range(&self, start: usize, end: usize) -> (u32, u32) {
        let first = self.line_of(start);
        let last = if end > start {
            self.line_of(end - 1)
        } else {
            first
        };
        (first, last.max(first))
    }
}

/// The inclusive 1-based line ranges of blank-line-separated paragraphs.
///
/// A line holding only whitespace is a boundary and belongs to no paragraph.
pub fn paragraphs(text: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut start: Option<u32> = None;
    let mut n = 0u32;
    for (i, line) in text.lines().enumerate() {
        n = i as u32 + 1;
        if line.trim().is_empty() {
            if let Some(s) = start.take() {
                out.push((s, n - 1));
            }
        } else if start.is_none() {
            start = Some(n);
        }
    }
    if let Some(s) = start {
        out.push((s, n));
    }
    out
}

/// Overlapping windows of at most `size` lines over `start..=end`, each
/// starting `size - overlap` lines after the previous; the last window ends
/// at `end`. A range of at most `size` lines is one window.
pub fn line_windows(start: u32, end: u32, size: u32, overlap: u32) -> Vec<(u32, u32)> {
    assert!(size > overlap, "window size must exceed the overlap");
    let stride = size - overlap;
    let mut out = Vec::new();
    let mut s = start;
    loop {
        let e = (s + size - 1).min(end);
        out.push((s, e));
        if e >= end {
            break;
        }
        s += stride;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_count_ascii_by_four_and_hangul_by_one() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd efgh"), 2);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("한국어"), 3);
    }

    #[test]
    fn line_index_maps_offsets() {
        let t = "ab\ncd\n\nef";
        let ix = LineIndex::new(t);
        assert_eq!(ix.line_count(), 4);
        assert_eq!(ix.line_of(0), 1);
        assert_eq!(ix.line_of(2), 1);
        assert_eq!(ix.line_of(3), 2);
        assert_eq!(ix.line_of(7), 4);
        assert_eq!(ix.line_range(3, 6), (2, 2));
        assert_eq!(ix.line_range(0, t.len()), (1, 4));
        assert_eq!(LineIndex::new("x\n").line_count(), 1);
    }

    #[test]
    fn paragraphs_split_on_whitespace_only_lines() {
        let t = "a\nb\n \t\nc\n\n\nd\n";
        assert_eq!(paragraphs(t), vec![(1, 2), (4, 4), (7, 7)]);
        assert!(paragraphs("\n  \n").is_empty());
    }

    #[test]
    fn windows_are_80_with_20_overlap() {
        assert_eq!(line_windows(1, 80, 80, 20), vec![(1, 80)]);
        assert_eq!(
            line_windows(1, 200, 80, 20),
            vec![(1, 80), (61, 140), (121, 200)]
        );
        assert_eq!(
            line_windows(5, 150, 80, 20),
            vec![(5, 84), (65, 144), (125, 150)]
        );
    }

    #[test]
    fn slices_are_inclusive_and_match_str_lines() {
        let t = "a\nb\nc\nd";
        let ix = LineIndex::new(t);
        assert_eq!(ix.slice(t, 2, 3), "b\nc");
        assert_eq!(ix.slice(t, 4, 4), "d");
        let t = "a\nb\n";
        assert_eq!(LineIndex::new(t).slice(t, 2, 9), "b");
        let crlf = "one\r\ntwo\r\n\r\nthree\r\n";
        let ix = LineIndex::new(crlf);
        for (s, e) in [(1, 1), (1, 2), (2, 4), (3, 3), (1, 4)] {
            let expected: Vec<&str> = crlf
                .lines()
                .skip(s as usize - 1)
                .take((e - s + 1) as usize)
                .collect();
            assert_eq!(ix.slice(crlf, s, e), expected.join("\n"), "{s}-{e}");
        }
        assert_eq!(ix.slice(crlf, 3, 2), "");
    }
}
