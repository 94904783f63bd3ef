//! Windows code pages (RTF `\ansicpg` and font charsets, OLE property
//! sets, legacy Word's 8-bit text) mapped to `encoding_rs` decoders.

use encoding_rs::Encoding;

/// The decoder of Windows code page `cp`; `None` for pages without one
/// (callers fall back to Windows-1252).
pub fn encoding(cp: u32) -> Option<&'static Encoding> {
    Some(match cp {
        874 => encoding_rs::WINDOWS_874,
        932 => encoding_rs::SHIFT_JIS,
        936 => encoding_rs::GBK,
        949 => encoding_rs::EUC_KR,
        950 => encoding_rs::BIG5,
        1200 => encoding_rs::UTF_16LE,
        1250 => encoding_rs::WINDOWS_1250,
        1251 => encoding_rs::WINDOWS_1251,
        1252 => encoding_rs::WINDOWS_1252,
        1253 => encoding_rs::WINDOWS_1253,
        1254 => encoding_rs::WINDOWS_1254,
        1255 => encoding_rs::WINDOWS_1255,
        1256 => encoding_rs::WINDOWS_1256,
        1257 => encoding_rs::WINDOWS_1257,
        1258 => encoding_rs::WINDOWS_1258,
        10000 => encoding_rs::MACINTOSH,
        20866 => encoding_rs::KOI8_R,
        28591 => encoding_rs::WINDOWS_1252,
        65001 => encoding_rs::UTF_8,
        _ => return None,
    })
}

/// The code page of an RTF font charset (`\fcharsetN`); `None` for the
/// default charset (the document's code page applies) and unknown ones.
pub fn charset_codepage(charset: i32) -> Option<u32> {
    Some(match charset {
        128 => 932,
        129 => 949,
        134 => 936,
        136 => 950,
        161 => 1253,
        162 => 1254,
        163 => 1258,
        177 => 1255,
        178 => 1256,
        186 => 1257,
        204 => 1251,
        222 => 874,
        238 => 1250,
        _ => return None,
    })
}

/// `bytes` decoded with `encoding` (Windows-1252 when `None`), invalid
/// sequences replaced.
pub fn decode(bytes: &[u8], encoding: Option<&'static Encoding>) -> String {
    let (text, _) = encoding
        .unwrap_or(encoding_rs::WINDOWS_1252)
        .decode_without_bom_handling(bytes);
    text.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn korean_and_western_pages() {
        assert_eq!(decode(&[0xc7, 0xd1], encoding(949)), "한");
        assert_eq!(decode(&[0xe9], None), "é");
        assert_eq!(charset_codepage(129), Some(949));
        assert!(encoding(437).is_none());
    }
}
