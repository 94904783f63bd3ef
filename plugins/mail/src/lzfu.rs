//! Compressed RTF (MS-OXRTFCP), the form of an Outlook message's RTF body
//! (`PR_RTF_COMPRESSED`, `0x1009`): a 16-byte header, then either the RTF
//! as it is (`MELA`) or LZ77 with a 4 KiB dictionary primed with common RTF
//! words (`LZFu`).

/// `LZFu`: compressed.
const COMPRESSED: u32 = 0x7546_5A4C;
/// `MELA`: stored as it is.
const UNCOMPRESSED: u32 = 0x414C_454D;

/// The dictionary's initial content (MS-OXRTFCP 3.1.3.1).
const PRIMER: &[u8] = b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \
\\fmodern \\fscript \\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\
\\blue0\r\n\\par \\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx";

const DICTIONARY: usize = 4096;

/// The RTF of a compressed-RTF property, at most `limit` bytes of it;
/// `None` when the header is not one.
pub fn decompress(data: &[u8], limit: usize) -> Option<Vec<u8>> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
    };
    let raw_size = (word(4)? as usize).min(limit);
    let body = data.get(16..)?;
    match word(8)? {
        UNCOMPRESSED => Some(body[..raw_size.min(body.len())].to_vec()),
        COMPRESSED => Some(inflate(body, raw_size)),
        _ => None,
    }
}

/// LZFu: each control byte flags its next 8 items, low bit first: 0 for a
/// literal byte, 1 for a big-endian 12-bit dictionary offset and 4-bit
/// length (+2). A reference to the current write position ends the data.
fn inflate(body: &[u8], limit: usize) -> Vec<u8> {
    let mut dictionary = [0u8; DICTIONARY];
    dictionary[..PRIMER.len()].copy_from_slice(PRIMER);
    let mut write = PRIMER.len();
    let mut out = Vec::with_capacity(limit.min(body.len().saturating_mul(8)));
    let mut input = body.iter().copied();
    while out.len() < limit {
        let Some(control) = input.next() else {
            break;
        };
        for bit in 0..8 {
            if control & (1 << bit) == 0 {
                let Some(byte) = input.next() else {
                    return out;
                };
                dictionary[write] = byte;
                write = (write + 1) % DICTIONARY;
                out.push(byte);
                continue;
            }
            let (Some(high), Some(low)) = (input.next(), input.next()) else {
                return out;
            };
            let reference = (usize::from(high) << 8) | usize::from(low);
            let offset = reference >> 4;
            if offset == write {
                return out;
            }
            for i in 0..(reference & 0xF) + 2 {
                let byte = dictionary[(offset + i) % DICTIONARY];
                dictionary[write] = byte;
                write = (write + 1) % DICTIONARY;
                out.push(byte);
            }
        }
    }
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specification_examples_decompress() {
        // MS-OXRTFCP 4.1: simple compressed RTF.
        let simple = [
            0x2d, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xf1, 0xc5,
            0xc7, 0xa7, 0x03, 0x00, 0x0a, 0x00, 0x72, 0x63, 0x70, 0x67, 0x31, 0x32, 0x35, 0x42,
            0x32, 0x0a, 0xf3, 0x20, 0x68, 0x65, 0x6c, 0x09, 0x00, 0x20, 0x62, 0x77, 0x05, 0xb0,
            0x6c, 0x64, 0x7d, 0x0a, 0x80, 0x0f, 0xa0,
        ];
        assert_eq!(
            decompress(&simple, 1 << 20).as_deref(),
            Some(&b"{\\rtf1\\ansi\\ansicpg1252\\pard hello world}\r\n"[..])
        );
        // MS-OXRTFCP 4.2: a reference that wraps the dictionary.
        let crossing = [
            0x1a, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xe2, 0xd4,
            0x4b, 0x51, 0x41, 0x00, 0x04, 0x20, 0x57, 0x58, 0x59, 0x5a, 0x0d, 0x6e, 0x7d, 0x01,
            0x0e, 0xb0,
        ];
        assert_eq!(
            decompress(&crossing, 1 << 20).as_deref(),
            Some(&b"{\\rtf1 WXYZWXYZWXYZWXYZWXYZ}"[..])
        );
    }

    #[test]
    fn stored_and_damaged_data_is_bounded() {
        let mut stored = vec![0u8; 16];
        stored[4] = 5;
        stored[8..12].copy_from_slice(b"MELA");
        stored.extend_from_slice(b"{\\rtf1}");
        assert_eq!(decompress(&stored, 100).as_deref(), Some(&b"{\\rtf"[..]));
        assert_eq!(decompress(b"short", 100), None);
        let mut bomb = vec![0u8; 16];
        bomb[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        bomb[8..12].copy_from_slice(b"LZFu");
        bomb.extend(std::iter::repeat_n(0xFF, 10_000));
        assert_eq!(decompress(&bomb, 4096).map(|v| v.len()), Some(4096));
    }
}
