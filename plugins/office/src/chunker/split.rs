//! Cutting one long text into pieces of about a target size: at line
//! ends first, then at spaces, then between characters (text without
//! spaces, such as a long run of Korean or Chinese), with consecutive
//! pieces sharing about an overlap's worth of their edge.

use kebab_plugin_sdk::text::estimate_tokens;

/// Pieces of `text` of at most about `target` tokens; each piece after
/// the first repeats about `overlap` tokens of the end of the one before
/// (never all of it). Blank pieces are dropped.
pub fn split(text: &str, target: u32, overlap: u32) -> Vec<String> {
    let target = target.max(1);
    let atoms = atoms(text, target);
    let tokens: Vec<u32> = atoms.iter().map(|a| estimate_tokens(a)).collect();
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < atoms.len() {
        let mut end = start;
        let mut sum = 0u32;
        while end < atoms.len() && (end == start || sum + tokens[end] <= target) {
            sum += tokens[end];
            end += 1;
        }
        let piece = atoms[start..end].concat();
        if !piece.trim().is_empty() {
            out.push(piece.trim().to_string());
        }
        if end >= atoms.len() {
            break;
        }
        let mut back = end;
        let mut kept = 0u32;
        while back > start + 1 && kept + tokens[back - 1] <= overlap {
            kept += tokens[back - 1];
            back -= 1;
        }
        start = back;
    }
    out
}

/// `text` cut into consecutive slices of at most `target` tokens each:
/// whole lines where they fit, else words, else runs of characters.
fn atoms(text: &str, target: u32) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.split_inclusive('\n') {
        if estimate_tokens(line) <= target {
            out.push(line);
            continue;
        }
        for word in line.split_inclusive(' ') {
            if estimate_tokens(word) <= target {
                out.push(word);
            } else {
                out.extend(char_runs(word, target));
            }
        }
    }
    out
}

/// `word` cut between characters into runs of at most `target` tokens
/// (counted as [`estimate_tokens`] counts them, incrementally).
fn char_runs(word: &str, target: u32) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let (mut ascii, mut other) = (0u32, 0u32);
    for (i, c) in word.char_indices() {
        let (a, o) = if c.is_whitespace() {
            (ascii, other)
        } else if c.is_ascii() {
            (ascii + 1, other)
        } else {
            (ascii, other + 1)
        };
        if a.div_ceil(4) + o > target && i > start {
            out.push(&word[start..i]);
            start = i;
            (ascii, other) = (
                u32::from(c.is_ascii() && !c.is_whitespace()),
                u32::from(!c.is_ascii()),
            );
        } else {
            (ascii, other) = (a, o);
        }
    }
    if start < word.len() {
        out.push(&word[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_piece() {
        assert_eq!(split("a short line", 100, 10), vec!["a short line"]);
    }

    #[test]
    fn lines_then_words_then_characters() {
        let text = (0..50)
            .map(|i| format!("line {i} of text"))
            .collect::<Vec<_>>()
            .join("\n");
        let pieces = split(&text, 20, 0);
        assert!(pieces.len() > 3);
        assert!(pieces.iter().all(|p| estimate_tokens(p) <= 20));
        assert_eq!(pieces.join("\n"), text);
        let korean = "가".repeat(100);
        let pieces = split(&korean, 30, 0);
        assert_eq!(pieces.len(), 4);
        assert_eq!(pieces.concat(), korean);
    }

    #[test]
    fn pieces_overlap() {
        let text = (0..40)
            .map(|i| format!("word{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let pieces = split(&text, 10, 4);
        for pair in pieces.windows(2) {
            let last_word = pair[0].split(' ').next_back().unwrap();
            assert!(pair[1].contains(last_word), "{pair:?}");
            assert!(!pair[0].ends_with(&pair[1]), "{pair:?}");
        }
    }
}
