//! Delimited text: `.csv` and `.tsv` files (and text saved under a workbook
//! name, as some web exports do). One sheet, named after the file without
//! its extension; a record is a row, so a quoted field spanning lines is
//! one cell and rows are numbered by record, as a spreadsheet opens them.
//!
//! Encodings: UTF-8 (a byte-order mark dropped), UTF-16 with a byte-order
//! mark (or without one, when every other byte is NUL), else
//! Windows-1252. Quoting is RFC 4180's (`""` inside quotes is a quote),
//! read leniently: a quote inside an unquoted field is text, an
//! unterminated quote runs to the end of the file. The delimiter is the one
//! a first line `sep=;` names (Excel's convention; that line is no row),
//! else a tab for a `.tsv`, else sniffed among `,` `;` tab and `|` from the
//! first lines: the one splitting most lines into the same number of
//! fields.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, WINDOWS_1252};

use crate::limits::{Budget, MAX_COLUMNS};
use crate::value::{Shown, looks_numeric};
use crate::workbook::{Sheet, Workbook};

/// The delimiters a `.csv` may use, in order of preference on a tie.
const CANDIDATES: [u8; 4] = [b',', b';', b'\t', b'|'];

/// How many lines the delimiter is sniffed from.
const SNIFF_LINES: usize = 50;

/// How many bytes the delimiter is sniffed from.
const SNIFF_BYTES: usize = 64 << 10;

/// Read delimited text as one sheet named `sheet_name`; `tab` when the
/// file says it is tab-separated.
pub fn read(sheet_name: &str, bytes: &[u8], tab: bool) -> Workbook {
    let (text, encoding) = decode(bytes);
    let (delimiter, body) = match separator_line(&text) {
        Some((named, rest)) => (named, rest),
        None if tab => (b'\t', &text[..]),
        None => (sniff(&text), &text[..]),
    };
    let mut sheet = Sheet::new(sheet_name, false);
    let mut budget = Budget::default();
    parse(body, delimiter, &mut sheet, &mut budget);
    let delimiter_name = match delimiter {
        b'\t' => "tab".to_string(),
        d => char::from(d).to_string(),
    };
    Workbook {
        format: if tab { "tsv" } else { "csv" },
        sheets: vec![sheet],
        title: None,
        author: None,
        notes: vec![
            ("encoding".into(), encoding.into()),
            ("delimiter".into(), delimiter_name),
        ],
    }
}

/// The text of `bytes` and the name of the encoding it was read in.
pub fn decode(bytes: &[u8]) -> (Cow<'_, str>, &'static str) {
    if let Some((encoding, bom)) = Encoding::for_bom(bytes) {
        let body = bytes.get(bom..).unwrap_or_default();
        let (text, _) = encoding.decode_without_bom_handling(body);
        return (text, encoding.name());
    }
    let encoding = match utf16_without_bom(bytes) {
        Some(utf16) => utf16,
        None => match std::str::from_utf8(bytes) {
            Ok(text) => return (Cow::Borrowed(text), "UTF-8"),
            Err(_) => WINDOWS_1252,
        },
    };
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    (text, encoding.name())
}

/// UTF-16 without a byte-order mark: NUL in most odd (little-endian) or
/// even (big-endian) bytes of the start, as ASCII text in UTF-16 has.
fn utf16_without_bom(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = bytes.get(..bytes.len().min(1024))?;
    let pairs = head.len() / 2;
    if pairs < 4 {
        return None;
    }
    let nul_at = |offset: usize| {
        head.iter()
            .skip(offset)
            .step_by(2)
            .filter(|&&b| b == 0)
            .count()
    };
    let (even, odd) = (nul_at(0), nul_at(1));
    if odd * 10 >= pairs * 8 && even * 10 < pairs {
        Some(UTF_16LE)
    } else if even * 10 >= pairs * 8 && odd * 10 < pairs {
        Some(UTF_16BE)
    } else {
        None
    }
}

/// The delimiter Excel's first line `sep=;` names, and the text after that
/// line (which is no row).
fn separator_line(text: &str) -> Option<(u8, &str)> {
    let head = text.get(..4)?;
    let &delimiter = text.as_bytes().get(4)?;
    let named = delimiter.is_ascii_punctuation() || delimiter == b'\t';
    if !head.eq_ignore_ascii_case("sep=") || !named {
        return None;
    }
    let rest = text.get(5..)?;
    let rest = rest
        .strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix(['\n', '\r']));
    match rest {
        Some(rest) => Some((delimiter, rest)),
        None if text.len() == 5 => Some((delimiter, "")),
        None => None,
    }
}

/// The delimiter that splits the first lines most consistently.
pub fn sniff(text: &str) -> u8 {
    let mut sample = &text[..floor_boundary(text, SNIFF_BYTES)];
    if sample.len() < text.len()
        && let Some(last_break) = sample.rfind('\n')
    {
        sample = &sample[..last_break];
    }
    let mut best = (b',', 0usize, 0usize);
    for candidate in CANDIDATES {
        let counts = field_counts(sample, candidate);
        let (mode, lines) = mode_of(&counts);
        if mode > 1 && (lines, mode) > (best.1, best.2) {
            best = (candidate, lines, mode);
        }
    }
    best.0
}

/// The largest byte index at most `at` that starts a character.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut i = at.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// How many fields each of the first records of `sample` has with
/// `delimiter` (quotes respected).
fn field_counts(sample: &str, delimiter: u8) -> Vec<usize> {
    let mut counts = Vec::new();
    let mut fields = 1usize;
    let mut quoted = false;
    let mut bytes = sample.bytes().peekable();
    while let Some(b) = bytes.next() {
        match b {
            b'"' => quoted = !quoted,
            _ if quoted => {}
            b'\r' | b'\n' => {
                if b == b'\r' && bytes.peek() == Some(&b'\n') {
                    bytes.next();
                }
                counts.push(fields);
                fields = 1;
                if counts.len() >= SNIFF_LINES {
                    return counts;
                }
            }
            _ if b == delimiter => fields += 1,
            _ => {}
        }
    }
    counts.push(fields);
    counts
}

/// The most common field count (the larger on a tie) and how many records
/// have it.
fn mode_of(counts: &[usize]) -> (usize, usize) {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let mut best = (0, 0);
    for run in sorted.chunk_by(|a, b| a == b) {
        if run.len() >= best.1 {
            best = (run[0], run.len());
        }
    }
    best
}

/// Split `text` into records and fields and add them to `sheet`, until
/// the budget runs out.
fn parse(text: &str, delimiter: u8, sheet: &mut Sheet, budget: &mut Budget) {
    let bytes = text.as_bytes();
    let mut pos = 0usize;
    let mut row = 0u32;
    let mut col = 0u32;
    let mut field = String::new();
    while pos < bytes.len() {
        let end = read_field(text, pos, delimiter, &mut field);
        let after = bytes.get(end).copied();
        let shown = (!field.is_empty()).then(|| Shown {
            is_text: !looks_numeric(&field),
            text: std::mem::take(&mut field),
        });
        if col < MAX_COLUMNS && !sheet.add(row, col, shown.as_ref(), budget) {
            return;
        }
        field.clear();
        match after {
            Some(d) if d == delimiter => {
                col = col.saturating_add(1);
                pos = end + 1;
            }
            Some(b'\r') => {
                pos = end
                    + if bytes.get(end + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    };
                (row, col) = (row.saturating_add(1), 0);
            }
            Some(b'\n') => {
                pos = end + 1;
                (row, col) = (row.saturating_add(1), 0);
            }
            _ => pos = bytes.len(),
        }
    }
}

/// Read one field starting at byte `start` into `out`; the byte index
/// where it ends (at a delimiter, a line break or the end of the text).
fn read_field(text: &str, start: usize, delimiter: u8, out: &mut String) -> usize {
    let bytes = text.as_bytes();
    let is_end = |b: u8| b == delimiter || b == b'\n' || b == b'\r';
    if bytes.get(start) != Some(&b'"') {
        let len = bytes[start..]
            .iter()
            .position(|&b| is_end(b))
            .unwrap_or(bytes.len() - start);
        out.push_str(&text[start..start + len]);
        return start + len;
    }
    let mut pos = start + 1;
    loop {
        let Some(offset) = bytes[pos..].iter().position(|&b| b == b'"') else {
            out.push_str(&text[pos..]);
            return bytes.len();
        };
        out.push_str(&text[pos..pos + offset]);
        pos += offset + 1;
        if bytes.get(pos) == Some(&b'"') {
            out.push('"');
            pos += 1;
            continue;
        }
        let len = bytes[pos..]
            .iter()
            .position(|&b| is_end(b))
            .unwrap_or(bytes.len() - pos);
        out.push_str(&text[pos..pos + len]);
        return pos + len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str, delimiter: u8) -> Vec<(u32, String)> {
        let mut sheet = Sheet::new("t", false);
        parse(text, delimiter, &mut sheet, &mut Budget::default());
        let mut room = usize::MAX;
        let rows = sheet.grid.into_rows(&mut room).0.rows;
        rows.into_iter().map(|r| (r.index, r.text)).collect()
    }

    #[test]
    fn quoting_follows_rfc_4180() {
        let text = "a,\"b, with comma\",\"say \"\"hi\"\"\"\r\n\"two\nlines\",,x\r\n\r\nlast,\"open";
        assert_eq!(
            rows(text, b','),
            vec![
                (0, "a | b, with comma | say \"hi\"".to_string()),
                (1, "two lines |  | x".to_string()),
                (3, "last | open".to_string()),
            ]
        );
        assert_eq!(
            rows("x\"y,\"q\"z\n", b','),
            vec![(0, "x\"y | qz".to_string())]
        );
    }

    #[test]
    fn an_excel_separator_line_names_the_delimiter() {
        assert_eq!(separator_line("sep=;\r\na;b\n"), Some((b';', "a;b\n")));
        assert_eq!(separator_line("SEP=|\n"), Some((b'|', "")));
        assert_eq!(separator_line("sep=;"), Some((b';', "")));
        assert_eq!(separator_line("sepal,width\n"), None);
        assert_eq!(separator_line("sep=ab\n"), None);
        let book = read("s", b"sep=;\nName;Note\nAda;a,b\n", false);
        let mut room = usize::MAX;
        let sheet = book.sheets.into_iter().next().unwrap();
        let lines: Vec<String> = sheet
            .grid
            .into_rows(&mut room)
            .0
            .rows
            .into_iter()
            .map(|r| r.text)
            .collect();
        assert_eq!(lines, vec!["Name | Note", "Ada | a,b"]);
    }

    #[test]
    fn delimiters_are_sniffed() {
        assert_eq!(sniff("a;b;c\n1,5;2,5;3\n"), b';');
        assert_eq!(sniff("a\tb\n1\t2\n"), b'\t');
        assert_eq!(sniff("a|b|c\n1|2|3"), b'|');
        assert_eq!(sniff("name,note\n\"x\",\"a;b;c\"\n"), b',');
        assert_eq!(sniff("just one column\n"), b',');
    }

    #[test]
    fn encodings_are_detected() {
        assert_eq!(decode(b"\xef\xbb\xbfa,b"), (Cow::Borrowed("a,b"), "UTF-8"));
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("한,b".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16).0, "한,b");
        let bare: Vec<u8> = "name,value\n"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        assert_eq!(
            decode(&bare),
            (Cow::Owned("name,value\n".to_string()), "UTF-16BE")
        );
        assert_eq!(
            decode(b"caf\xe9"),
            (Cow::Owned("café".to_string()), "windows-1252")
        );
    }
}
