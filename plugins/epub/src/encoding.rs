//! Text of an XML member from its bytes. EPUB requires UTF-8 or UTF-16;
//! older books also declare ISO-8859-1 or windows-1252, which are decoded
//! when the bytes are not UTF-8. Anything else is read as UTF-8 with
//! invalid sequences replaced, so a mislabelled chapter still yields text.

/// Characters of windows-1252 at bytes 0x80..=0x9F (where ISO-8859-1 has
/// control codes); undefined bytes map to themselves.
const WINDOWS_1252_HIGH: [char; 32] = [
    '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž', '\u{8f}',
    '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}', 'ž', 'Ÿ',
];

/// How far into a member its XML declaration is looked for.
const DECLARATION_WINDOW: usize = 200;

/// The member's text, byte-order mark dropped.
pub fn decode(bytes: &[u8]) -> String {
    match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        [b'<', 0, b'?', 0, ..] => utf16(bytes, u16::from_le_bytes),
        [0, b'<', 0, b'?', ..] => utf16(bytes, u16::from_be_bytes),
        _ => match std::str::from_utf8(bytes) {
            Ok(text) => text.to_string(),
            Err(_) if declares_latin(bytes) => windows_1252(bytes),
            Err(_) => String::from_utf8_lossy(bytes).into_owned(),
        },
    }
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// Whether the XML declaration names ISO-8859-1 or windows-1252.
fn declares_latin(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(DECLARATION_WINDOW)];
    let head = String::from_utf8_lossy(head).to_ascii_lowercase();
    let Some(declaration) = head.strip_prefix("<?xml") else {
        return false;
    };
    let declaration = declaration.split("?>").next().unwrap_or_default();
    ["iso-8859-1", "latin1", "latin-1", "windows-1252", "cp1252"]
        .iter()
        .any(|name| declaration.contains(name))
}

fn windows_1252(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0x9F => WINDOWS_1252_HIGH[usize::from(b - 0x80)],
            _ => char::from(b),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_utf16_and_latin_are_decoded() {
        assert_eq!(decode("\u{feff}<p>한</p>".as_bytes()), "<p>한</p>");
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("<p>é한</p>".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&le), "<p>é한</p>");
        let be: Vec<u8> = "<?xml?><a/>"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        assert_eq!(decode(&be), "<?xml?><a/>");
        let latin = b"<?xml version='1.0' encoding='windows-1252'?><p>caf\xe9 \x93q\x94</p>";
        assert_eq!(
            decode(latin),
            "<?xml version='1.0' encoding='windows-1252'?><p>café “q”</p>"
        );
        assert_eq!(decode(b"<p>\xff</p>"), "<p>\u{fffd}</p>");
    }
}
