//! The piece table of a legacy Word document: which runs of the
//! `WordDocument` stream hold which characters, as 8-bit Windows-1252
//! text or UTF-16, and the document's characters read through it.

use kebab_plugin_sdk::PluginError;

use super::unseen::Unseen;
use crate::bytes::Bytes;
use crate::codepage;
use crate::limits::MAX_DOC_PIECES;

/// Stands in for a character that is not shown (hidden or deleted), so
/// that character positions still line up with the stories' lengths.
pub const UNSEEN: u16 = 0xFFFF;

/// One run of text: characters `cp_start..cp_end` stored at byte `fc`.
pub struct Piece {
    cp_start: usize,
    cp_end: usize,
    fc: usize,
    compressed: bool,
}

/// The piece table in the `CLX` at `(offset, length)` of the table stream.
pub fn pieces(table: &[u8], (offset, length): (usize, usize)) -> Result<Vec<Piece>, PluginError> {
    let bad = |what: &str| PluginError::Malformed(format!("legacy Word .doc: {what}"));
    let clx = table
        .get(offset..offset.saturating_add(length))
        .ok_or_else(|| bad("the piece table lies outside the table stream"))?;
    let mut at = 0usize;
    while clx.get(at) == Some(&0x01) {
        let skip = usize::from(
            clx.u16_at(at + 1)
                .ok_or_else(|| bad("a truncated piece table"))?,
        );
        at += 3 + skip;
    }
    if clx.get(at) != Some(&0x02) {
        return Err(bad("no piece table"));
    }
    let size = clx
        .u32_at(at + 1)
        .ok_or_else(|| bad("a truncated piece table"))? as usize;
    let plc = clx
        .get(at + 5..(at + 5).saturating_add(size))
        .ok_or_else(|| bad("a truncated piece table"))?;
    let count = (size.saturating_sub(4) / 12).min(MAX_DOC_PIECES);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let (Some(cp_start), Some(cp_end), Some(fc)) = (
            plc.u32_at(i * 4),
            plc.u32_at(i * 4 + 4),
            plc.u32_at((count + 1) * 4 + i * 8 + 2),
        ) else {
            break;
        };
        let compressed = fc & 0x4000_0000 != 0;
        let fc = (fc & 0x3FFF_FFFF) as usize;
        out.push(Piece {
            cp_start: cp_start as usize,
            cp_end: (cp_end as usize).max(cp_start as usize),
            fc: if compressed { fc / 2 } else { fc },
            compressed,
        });
    }
    Ok(out)
}

/// Every character of the document in character-position order, as
/// UTF-16 code units, characters that `unseen` hides replaced by
/// [`UNSEEN`] (a piece reaching past the stream is cut short; no more
/// characters than the stream has bytes are read).
pub fn characters(word: &[u8], pieces: &[Piece], unseen: &Unseen) -> Vec<u16> {
    let mut out: Vec<u16> = Vec::new();
    for piece in pieces {
        if out.len() > word.len() {
            break;
        }
        if piece.cp_start != out.len() {
            out.resize(piece.cp_start.min(word.len()), u16::from(b'\r'));
        }
        let count = piece.cp_end - piece.cp_start;
        let width = if piece.compressed { 1 } else { 2 };
        let bytes = word.get(piece.fc..).unwrap_or(&[]);
        let bytes = &bytes[..(count * width).min(bytes.len() / width * width)];
        let units: Vec<u16> = if piece.compressed {
            codepage::decode(bytes, None).encode_utf16().collect()
        } else {
            bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect()
        };
        for (i, unit) in units.into_iter().enumerate() {
            let structural = matches!(unit, 0x07 | 0x0D);
            let hidden = !structural && unseen.contains(piece.fc + i * width);
            out.push(if hidden { UNSEEN } else { unit });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_map_compressed_and_unicode_text() {
        let mut word = b"hello".to_vec();
        word.extend("한".encode_utf16().flat_map(u16::to_le_bytes));
        let mut clx = vec![0x02];
        let mut plc = Vec::new();
        for cp in [0u32, 5, 6] {
            plc.extend(cp.to_le_bytes());
        }
        for (fc, compressed) in [(0u32, true), (5, false)] {
            plc.extend([0, 0]);
            let raw = if compressed {
                (fc * 2) | 0x4000_0000
            } else {
                fc
            };
            plc.extend(raw.to_le_bytes());
            plc.extend([0, 0]);
        }
        clx.extend((plc.len() as u32).to_le_bytes());
        clx.extend(&plc);
        let pieces = pieces(&clx, (0, clx.len())).unwrap();
        let all = characters(&word, &pieces, &Unseen::default());
        assert_eq!(String::from_utf16_lossy(&all), "hello한");
        let hidden = characters(&word, &pieces, &Unseen::from_ranges(vec![(1, 3)]));
        assert_eq!(
            hidden[..4],
            [u16::from(b'h'), UNSEEN, UNSEEN, u16::from(b'l')]
        );
        assert!(pieces_fail(&[0x05]));
        assert!(pieces_fail(&[0x01, 0xff, 0xff]));
    }

    fn pieces_fail(clx: &[u8]) -> bool {
        pieces(clx, (0, clx.len())).is_err()
    }
}
