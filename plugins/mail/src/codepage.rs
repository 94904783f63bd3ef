//! Windows code pages (as Outlook records them in `PR_MESSAGE_CODEPAGE` and
//! `PR_INTERNET_CPID`) to decoders: 8-bit strings and HTML bodies of an
//! Outlook message are in the message's code page.

use encoding_rs::{Encoding, WINDOWS_1252};

/// Code pages Outlook writes, with the WHATWG label `encoding_rs` knows
/// them by.
const CODE_PAGES: &[(u32, &str)] = &[
    (437, "ibm866"),
    (850, "windows-1252"),
    (866, "ibm866"),
    (874, "windows-874"),
    (932, "shift_jis"),
    (936, "gbk"),
    (949, "euc-kr"),
    (950, "big5"),
    (1200, "utf-16le"),
    (1201, "utf-16be"),
    (1250, "windows-1250"),
    (1251, "windows-1251"),
    (1252, "windows-1252"),
    (1253, "windows-1253"),
    (1254, "windows-1254"),
    (1255, "windows-1255"),
    (1256, "windows-1256"),
    (1257, "windows-1257"),
    (1258, "windows-1258"),
    (10000, "macintosh"),
    (20127, "windows-1252"),
    (20866, "koi8-r"),
    (21866, "koi8-u"),
    (28591, "windows-1252"),
    (28592, "iso-8859-2"),
    (28593, "iso-8859-3"),
    (28594, "iso-8859-4"),
    (28595, "iso-8859-5"),
    (28596, "iso-8859-6"),
    (28597, "iso-8859-7"),
    (28598, "iso-8859-8"),
    (28599, "windows-1254"),
    (28603, "iso-8859-13"),
    (28605, "iso-8859-15"),
    (50220, "iso-2022-jp"),
    (50221, "iso-2022-jp"),
    (50222, "iso-2022-jp"),
    (51932, "euc-jp"),
    (51936, "gbk"),
    (51949, "euc-kr"),
    (52936, "gbk"),
    (54936, "gb18030"),
    (65001, "utf-8"),
];

/// The decoder of a code page; Windows-1252 (Outlook's default) for an
/// unknown or missing one.
pub fn encoding(code_page: Option<u32>) -> &'static Encoding {
    code_page
        .and_then(|cp| CODE_PAGES.iter().find(|(n, _)| *n == cp))
        .and_then(|(_, label)| Encoding::for_label(label.as_bytes()))
        .unwrap_or(WINDOWS_1252)
}

/// `bytes` decoded from `code_page`, malformed sequences replaced; a byte
/// order mark (UTF-8, UTF-16) overrides the code page.
pub fn decode(bytes: &[u8], code_page: Option<u32>) -> String {
    let (text, _, _) = encoding(code_page).decode(bytes);
    text.into_owned()
}

/// `bytes` decoded from the first of `code_pages` they are valid in (an
/// Outlook message's declared code pages do not always agree with its
/// strings), else from the last one (Windows-1252 without any), malformed
/// sequences replaced.
pub fn decode_first(bytes: &[u8], code_pages: &[u32]) -> String {
    code_pages
        .iter()
        .find_map(|&cp| {
            encoding(Some(cp))
                .decode_without_bom_handling_and_without_replacement(bytes)
                .map(|text| text.into_owned())
        })
        .unwrap_or_else(|| decode(bytes, code_pages.last().copied()))
}

/// The ANSI code page Windows uses for a locale id (`PR_MESSAGE_LOCALE_ID`),
/// by its primary language; Windows-1252 for the rest.
pub fn for_locale(lcid: u32) -> u32 {
    match (lcid & 0x3FF, lcid) {
        (0x04, 2052 | 4100) => 936,
        (0x04, _) => 950,
        (0x01, _) => 1256,
        (0x02 | 0x19 | 0x22 | 0x23 | 0x2F, _) => 1251,
        (0x05 | 0x0E | 0x15 | 0x18 | 0x1A | 0x1B | 0x1C | 0x24, _) => 1250,
        (0x08, _) => 1253,
        (0x0D, _) => 1255,
        (0x11, _) => 932,
        (0x12, _) => 949,
        (0x1E, _) => 874,
        (0x1F, _) => 1254,
        (0x25..=0x27, _) => 1257,
        (0x2A, _) => 1258,
        _ => 1252,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_pages_decode_their_text() {
        assert_eq!(decode(b"caf\xe9", None), "café");
        assert_eq!(decode(b"\xc7\xd1\xb1\xb9", Some(949)), "한국");
        assert_eq!(decode(b"\xc0\xe1\xe2", Some(1251)), "Абв");
        assert_eq!(decode("한".as_bytes(), Some(65001)), "한");
        assert_eq!(decode(b"\xEF\xBB\xBF\xed\x95\x9c", Some(1252)), "한");
        assert_eq!(encoding(Some(99_999)), WINDOWS_1252);
        assert_eq!(decode_first(b"\xf6\xe4\xfc", &[65001, 1252]), "öäü");
        assert_eq!(decode_first("öäü".as_bytes(), &[65001, 1252]), "öäü");
        assert_eq!(decode_first(b"\xe0\xe2", &[]), "àâ");
        assert_eq!(for_locale(1042), 949);
        assert_eq!(for_locale(1049), 1251);
        assert_eq!(for_locale(2052), 936);
        assert_eq!(for_locale(1031), 1252);
    }
}
