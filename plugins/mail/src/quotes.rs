//! Within a mailbox, what a reply repeats from earlier messages of the same
//! file is not indexed again.
//!
//! The rule, applied to each message's body in file order:
//!
//! - **Quoted text**: a quoted line (one starting with `>`) is left out when
//!   its words already appeared in an earlier message of the file: every
//!   run of three consecutive words of the line occurred, in that order, in
//!   an earlier body (quote markers and line breaks ignored, so text the
//!   reply re-wrapped still matches). A quoted line of fewer than three
//!   words (a greeting, a name, a blank `>`) follows the quote it sits in:
//!   it is left out when most longer lines of that quote are, or, in a
//!   quote of short lines only, when the same line appeared earlier.
//!   Quoted lines that match nothing earlier (the message quotes mail that
//!   is not in this file) are kept.
//! - **Attribution**: the `On … wrote:` line (also `schrieb:`, `a écrit :`,
//!   `님이 작성:` and the like; two lines when the client wrapped it) just
//!   before a quote that was left out is left out too.
//! - **Signature**: the lines after the last `-- ` delimiter (up to the end,
//!   or to the next quote) are left out, with the delimiter, when the same
//!   signature ended an earlier message of the file.
//!
//! A single `.eml` or `.msg` keeps everything: the message it quotes may not
//! be indexed anywhere.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use kebab_plugin_sdk::{LogLevel, log};

use crate::body::is_quoted;

/// Word trigrams remembered from earlier messages; past this, later
/// messages' words are not remembered (their quotes are kept).
const MAX_REMEMBERED: usize = 2_000_000;

/// Endings of attribution lines, lower-cased.
const ATTRIBUTIONS: &[&str] = &[
    "wrote:",
    "writes:",
    "said:",
    "schrieb:",
    "a écrit :",
    "a écrit:",
    "escribió:",
    "scrisse:",
    "escreveu:",
    "написал:",
    "написала:",
    "작성:",
    "写道:",
    "写道：",
    "寫道：",
    "wrote：",
];

/// A set of FNV hashes, which are already spread well enough to index a
/// table as they are.
type Hashes = HashSet<u64, BuildHasherDefault<Prehashed>>;

/// The hasher of [`Hashes`]: the value itself.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// What earlier messages of a mailbox said.
#[derive(Default)]
pub struct Seen {
    /// Hashes of word trigrams of earlier bodies.
    trigrams: Hashes,
    /// Hashes of the short lines (under three words) of earlier bodies.
    short_lines: Hashes,
    /// Hashes of earlier signatures.
    signatures: Hashes,
    /// The trigram bound was reached (and logged).
    full: bool,
}

impl Seen {
    /// `body` without what earlier messages already said (see the module
    /// rule); then `body` counts as said.
    pub fn strip(&mut self, body: &str) -> String {
        let lines: Vec<&str> = body.lines().map(str::trim_end).collect();
        let mut keep = vec![true; lines.len()];
        self.drop_known_quotes(&lines, &mut keep);
        self.drop_known_signature(&lines, &mut keep);
        self.remember(&lines);
        lines
            .iter()
            .zip(&keep)
            .filter(|(_, kept)| **kept)
            .map(|(line, _)| *line)
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn drop_known_quotes(&self, lines: &[&str], keep: &mut [bool]) {
        let mut start = 0;
        while start < lines.len() {
            if !is_quoted(lines[start]) {
                start += 1;
                continue;
            }
            let end = start + lines[start..].iter().take_while(|l| is_quoted(l)).count();
            if self.drop_known_lines(&lines[start..end], &mut keep[start..end]) {
                drop_attribution(lines, keep, start);
            }
            start = end;
        }
    }

    /// Leave out the known lines of one quote; whether any was.
    fn drop_known_lines(&self, quote: &[&str], keep: &mut [bool]) -> bool {
        let words: Vec<Vec<&str>> = quote
            .iter()
            .map(|l| unquote(l).split_whitespace().collect())
            .collect();
        let long: Vec<bool> = words
            .iter()
            .filter(|w| w.len() >= 3)
            .map(|w| self.knows_words(w))
            .collect();
        let short_known = if long.is_empty() {
            words
                .iter()
                .filter(|w| !w.is_empty())
                .all(|w| self.short_lines.contains(&hash_words(w)))
        } else {
            long.iter().filter(|k| **k).count() * 2 > long.len()
        };
        let mut dropped = false;
        for (w, kept) in words.iter().zip(keep.iter_mut()) {
            let known = if w.len() >= 3 {
                self.knows_words(w)
            } else {
                short_known
            };
            if known {
                *kept = false;
                dropped |= !w.is_empty();
            }
        }
        dropped
    }

    fn knows_words(&self, words: &[&str]) -> bool {
        words
            .windows(3)
            .all(|w| self.trigrams.contains(&hash_words(w)))
    }

    fn drop_known_signature(&mut self, lines: &[&str], keep: &mut [bool]) {
        let Some(delimiter) = (0..lines.len())
            .rev()
            .find(|&i| keep[i] && lines[i] == "--")
        else {
            return;
        };
        let end = delimiter
            + 1
            + lines[delimiter + 1..]
                .iter()
                .take_while(|l| !is_quoted(l) && !is_attribution(l))
                .count();
        let signature: Vec<&str> = lines[delimiter + 1..end]
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        if signature.is_empty() {
            return;
        }
        let hash = hash_words(&signature);
        if !self.signatures.insert(hash) {
            keep[delimiter..end].iter_mut().for_each(|k| *k = false);
        }
    }

    /// Count the words of `lines` as said.
    fn remember(&mut self, lines: &[&str]) {
        let mut words: Vec<&str> = Vec::new();
        for line in lines {
            let line_words: Vec<&str> = unquote(line).split_whitespace().collect();
            if (1..3).contains(&line_words.len()) {
                self.short_lines.insert(hash_words(&line_words));
            }
            words.extend(line_words);
        }
        if self.full {
            return;
        }
        for trigram in words.windows(3) {
            if self.trigrams.len() >= MAX_REMEMBERED {
                self.full = true;
                log(
                    LogLevel::Warn,
                    &format!(
                        "mailbox: remembered {MAX_REMEMBERED} word triples of earlier messages; \
                         quotes in later messages are kept even when they repeat earlier text"
                    ),
                );
                return;
            }
            self.trigrams.insert(hash_words(trigram));
        }
    }
}

/// Leave out the attribution line(s) before the quote starting at `start`:
/// the nearest non-blank line above it (at most two blank lines up), when it
/// ends like `wrote:`, and the line above that when the client wrapped an
/// `On …` line.
fn drop_attribution(lines: &[&str], keep: &mut [bool], start: usize) {
    let Some(at) = (start.saturating_sub(3)..start)
        .rev()
        .find(|&i| !lines[i].trim().is_empty())
    else {
        return;
    };
    if !is_attribution(lines[at]) || is_quoted(lines[at]) {
        return;
    }
    keep[at] = false;
    if at > 0 && !lines[at].starts_with("On ") && lines[at - 1].starts_with("On ") {
        keep[at - 1] = false;
    }
}

/// Whether a line introduces a quote (`On Mon, Kim wrote:`).
fn is_attribution(line: &str) -> bool {
    let lower = line.trim_end().to_lowercase();
    ATTRIBUTIONS.iter().any(|a| lower.ends_with(a))
}

/// A quoted line without its quote markers (`> > text` → `text`).
fn unquote(line: &str) -> &str {
    line.trim_start_matches(|c: char| c == '>' || c.is_whitespace())
}

/// FNV-1a over words, each followed by a separator byte.
fn hash_words(words: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for word in words {
        for &b in word.as_bytes().iter().chain(&[0x1f]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_quotes_attributions_and_signatures_are_left_out() {
        let mut seen = Seen::default();
        let first = "Can we move the budget review to Thursday afternoon?\n\
                     The venue is booked until noon.\n\n-- \nKim Minsu\nPlanning team";
        assert_eq!(seen.strip(first), first.replace("-- ", "--"));
        let reply = "Thursday works for me.\n\n\
                     On Mon, 4 Mar 2024 at 09:00, Kim Minsu <minsu@example.com>\nwrote:\n\
                     > Can we move the budget review to Thursday\n> afternoon? The venue is booked\n\
                     > until noon.\n>\n> Kim Minsu\n> Also a line nobody wrote before today.\n\n\
                     -- \nKim Minsu\nPlanning team";
        assert_eq!(
            seen.strip(reply),
            "Thursday works for me.\n\n> Also a line nobody wrote before today.\n"
        );
    }

    #[test]
    fn quotes_of_unknown_mail_are_kept() {
        let mut seen = Seen::default();
        let text = "Agreed.\n\nKim wrote:\n> text from a message not in this file\n> Thanks";
        assert_eq!(seen.strip(text), text);
    }
}
