//! Bounded decoding of a PDF stream's byte filters (`FlateDecode`,
//! `LZWDecode`, `ASCII85Decode`, `ASCIIHexDecode`, `RunLengthDecode`, with
//! PNG and TIFF predictors), stopping at the first image codec
//! (`DCTDecode`, `JPXDecode`, `CCITTFaxDecode`, `JBIG2Decode`), whose data
//! and parameters are handed back for the raster module to decode.
//!
//! lopdf's own decoding reads a stream to its end whatever it expands to; a
//! few kilobytes of deflate can claim gigabytes, so every stage here stops
//! at a caller-given bound instead.

use std::io::{Read, Write};

use lopdf::{Dictionary, Document as Pdf, Object, Stream};

/// An image codec that ends a filter chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// `DCTDecode`: JPEG.
    Dct,
    /// `JPXDecode`: JPEG 2000.
    Jpx,
    /// `CCITTFaxDecode`: fax group 3 or 4.
    Ccitt,
    /// `JBIG2Decode`.
    Jbig2,
}

/// A stream's data after its byte filters.
#[derive(Debug)]
pub struct Filtered<'a> {
    /// The data after the byte filters (the codec's input, if any).
    pub data: Vec<u8>,
    /// The codec still to apply, with its decode parameters.
    pub codec: Option<(Codec, Option<&'a Dictionary>)>,
}

/// Decode `stream`'s byte filters, each stage's output bounded by `limit`
/// bytes (past it: an error naming the bound).
pub fn decode<'a>(pdf: &'a Pdf, stream: &'a Stream, limit: usize) -> Result<Filtered<'a>, String> {
    let names = filter_names(pdf, &stream.dict)?;
    let parms = decode_parms(pdf, &stream.dict, names.len());
    let mut data = stream.content.clone();
    for (position, name) in names.iter().enumerate() {
        let parm = parms.get(position).copied().flatten();
        if let Some(codec) = codec_of(name) {
            if position + 1 != names.len() {
                return Err(format!("filter {} followed by another", show(name)));
            }
            return Ok(Filtered {
                data,
                codec: Some((codec, parm)),
            });
        }
        data = apply(name, &data, parm, limit)?;
    }
    Ok(Filtered { data, codec: None })
}

/// A stream's data after all its filters, which must all be byte filters
/// (content streams, palettes, JBIG2 globals).
pub fn decode_plain(pdf: &Pdf, stream: &Stream, limit: usize) -> Result<Vec<u8>, String> {
    let filtered = decode(pdf, stream, limit)?;
    match filtered.codec {
        None => Ok(filtered.data),
        Some((codec, _)) => Err(format!("an image codec ({codec:?}) on a non-image stream")),
    }
}

/// `/Filter` as a list of names (abbreviations of inline images included).
fn filter_names(pdf: &Pdf, dict: &Dictionary) -> Result<Vec<Vec<u8>>, String> {
    let Ok(filter) = dict.get(b"Filter") else {
        return Ok(Vec::new());
    };
    let filter = resolve(pdf, filter);
    let names = match filter {
        Object::Name(name) => vec![name.clone()],
        Object::Array(items) => items
            .iter()
            .map(|item| match resolve(pdf, item) {
                Object::Name(name) => Ok(name.clone()),
                _ => Err("a /Filter entry that is not a name".to_string()),
            })
            .collect::<Result<_, _>>()?,
        Object::Null => Vec::new(),
        _ => return Err("a /Filter that is neither a name nor an array".into()),
    };
    Ok(names)
}

/// `/DecodeParms`, one (possibly absent) dictionary per filter.
fn decode_parms<'a>(
    pdf: &'a Pdf,
    dict: &'a Dictionary,
    filters: usize,
) -> Vec<Option<&'a Dictionary>> {
    let Ok(parms) = dict.get(b"DecodeParms").or_else(|_| dict.get(b"DP")) else {
        return vec![None; filters];
    };
    match resolve(pdf, parms) {
        Object::Dictionary(d) => vec![Some(d); filters.max(1)],
        Object::Array(items) => items
            .iter()
            .map(|item| resolve(pdf, item).as_dict().ok())
            .collect(),
        _ => vec![None; filters],
    }
}

/// The object `object` refers to (one level), or itself.
pub fn resolve<'a>(pdf: &'a Pdf, object: &'a Object) -> &'a Object {
    match object {
        Object::Reference(id) => pdf.get_object(*id).unwrap_or(&Object::Null),
        other => other,
    }
}

fn codec_of(name: &[u8]) -> Option<Codec> {
    match name {
        b"DCTDecode" | b"DCT" => Some(Codec::Dct),
        b"JPXDecode" => Some(Codec::Jpx),
        b"CCITTFaxDecode" | b"CCF" => Some(Codec::Ccitt),
        b"JBIG2Decode" => Some(Codec::Jbig2),
        _ => None,
    }
}

fn show(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

/// One byte filter over `data`.
fn apply(
    name: &[u8],
    data: &[u8],
    parm: Option<&Dictionary>,
    limit: usize,
) -> Result<Vec<u8>, String> {
    match name {
        b"FlateDecode" | b"Fl" => predict(inflate(data, limit)?, parm),
        b"LZWDecode" | b"LZW" => predict(lzw(data, parm, limit)?, parm),
        b"ASCII85Decode" | b"A85" => ascii85(data, limit),
        b"ASCIIHexDecode" | b"AHx" => Ok(ascii_hex(data, limit)),
        b"RunLengthDecode" | b"RL" => Ok(run_length(data, limit)),
        other => Err(format!("unsupported filter {}", show(other))),
    }
}

/// A writer that refuses to grow past its bound.
struct Bounded {
    out: Vec<u8>,
    limit: usize,
    overflowed: bool,
}

impl Write for Bounded {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.out.len() + bytes.len() > self.limit {
            self.overflowed = true;
            return Err(std::io::Error::other("over the bound"));
        }
        self.out.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn over(limit: usize) -> String {
    format!("a stream decompresses past {limit} bytes")
}

/// zlib (or, when the header is broken, raw deflate) data, at most `limit`
/// bytes. A stream cut short keeps what was decoded before the cut.
fn inflate(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut reader = flate2::read::ZlibDecoder::new(data).take(limit as u64 + 1);
    let read = reader.read_to_end(&mut out);
    if read.is_err() && out.is_empty() && data.len() > 2 {
        let mut raw = flate2::read::DeflateDecoder::new(&data[2..]).take(limit as u64 + 1);
        let _ = raw.read_to_end(&mut out);
    }
    if out.len() > limit {
        return Err(over(limit));
    }
    Ok(out)
}

fn lzw(data: &[u8], parm: Option<&Dictionary>, limit: usize) -> Result<Vec<u8>, String> {
    use weezl::{BitOrder, decode::Decoder};
    let early_change = parm
        .and_then(|p| p.get(b"EarlyChange").ok())
        .and_then(|v| v.as_i64().ok())
        != Some(0);
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut sink = Bounded {
        out: Vec::new(),
        limit,
        overflowed: false,
    };
    // A corrupt code ends the data early; what came before it is kept.
    let _ = decoder.into_stream(&mut sink).decode_all(data).status;
    if sink.overflowed {
        return Err(over(limit));
    }
    Ok(sink.out)
}

fn ascii85(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut group = [0u8; 5];
    let mut filled = 0;
    for &byte in data {
        if out.len() > limit {
            return Err(over(limit));
        }
        match byte {
            b'~' => break,
            b'z' if filled == 0 => out.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group[filled] = byte - b'!';
                filled += 1;
                if filled == 5 {
                    out.extend_from_slice(&base85(&group));
                    filled = 0;
                }
            }
            _ => {}
        }
    }
    if filled > 1 {
        for slot in group.iter_mut().skip(filled) {
            *slot = 84;
        }
        out.extend_from_slice(&base85(&group)[..filled - 1]);
    }
    Ok(out)
}

fn base85(group: &[u8; 5]) -> [u8; 4] {
    let value = group.iter().fold(0u32, |acc, &d| {
        acc.wrapping_mul(85).wrapping_add(u32::from(d))
    });
    value.to_be_bytes()
}

fn ascii_hex(data: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut high: Option<u8> = None;
    for &byte in data {
        if byte == b'>' || out.len() >= limit {
            break;
        }
        let Some(nibble) = (byte as char).to_digit(16) else {
            continue;
        };
        match high.take() {
            Some(h) => out.push(h << 4 | nibble as u8),
            None => high = Some(nibble as u8),
        }
    }
    if let Some(h) = high {
        out.push(h << 4);
    }
    out
}

fn run_length(data: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(&length) = data.get(at) {
        if length == 128 || out.len() >= limit {
            break;
        }
        if length < 128 {
            let run = data.get(at + 1..at + 2 + length as usize).unwrap_or(&[]);
            out.extend_from_slice(run);
            at += 2 + length as usize;
        } else {
            let byte = data.get(at + 1).copied().unwrap_or(0);
            out.resize(out.len() + 257 - length as usize, byte);
            at += 2;
        }
    }
    out.truncate(limit);
    out
}

/// An integer entry of a decode-parameters dictionary.
pub fn parm_int(parm: Option<&Dictionary>, key: &[u8], default: i64) -> i64 {
    parm.and_then(|p| p.get(key).ok())
        .and_then(|v| v.as_i64().ok())
        .unwrap_or(default)
}

/// Undo `/Predictor` (2: TIFF, 10–15: PNG) on decompressed rows.
fn predict(data: Vec<u8>, parm: Option<&Dictionary>) -> Result<Vec<u8>, String> {
    let predictor = parm_int(parm, b"Predictor", 1);
    if predictor < 2 {
        return Ok(data);
    }
    let colors = parm_int(parm, b"Colors", 1).clamp(1, 32) as usize;
    let bits = parm_int(parm, b"BitsPerComponent", 8).clamp(1, 16) as usize;
    let columns = parm_int(parm, b"Columns", 1).clamp(1, 1 << 20) as usize;
    let row = (columns * colors * bits).div_ceil(8);
    let pixel = (colors * bits).div_ceil(8).max(1);
    match predictor {
        2 if bits == 8 => Ok(tiff_predict(data, row, pixel)),
        2 => Err(format!("TIFF predictor with {bits}-bit components")),
        _ => Ok(png_predict(&data, row, pixel)),
    }
}

/// TIFF predictor 2 on 8-bit components: each byte adds the one a pixel
/// before it.
fn tiff_predict(mut data: Vec<u8>, row: usize, pixel: usize) -> Vec<u8> {
    for line in data.chunks_mut(row) {
        for i in pixel..line.len() {
            line[i] = line[i].wrapping_add(line[i - pixel]);
        }
    }
    data
}

/// PNG predictors: every row starts with its filter type byte.
fn png_predict(data: &[u8], row: usize, pixel: usize) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(data.len());
    let mut previous = vec![0u8; row];
    for encoded in data.chunks(row + 1) {
        let Some((&kind, bytes)) = encoded.split_first() else {
            break;
        };
        let mut line = bytes.to_vec();
        line.resize(row, 0);
        for i in 0..row {
            let left = if i >= pixel { line[i - pixel] } else { 0 };
            let up = previous[i];
            let up_left = if i >= pixel { previous[i - pixel] } else { 0 };
            line[i] = line[i].wrapping_add(match kind {
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => paeth(left, up, up_left),
                _ => 0,
            });
        }
        out.extend_from_slice(&line);
        previous = line;
    }
    out
}

fn paeth(left: u8, up: u8, up_left: u8) -> u8 {
    let estimate = i16::from(left) + i16::from(up) - i16::from(up_left);
    let (dl, du, dul) = (
        (estimate - i16::from(left)).abs(),
        (estimate - i16::from(up)).abs(),
        (estimate - i16::from(up_left)).abs(),
    );
    if dl <= du && dl <= dul {
        left
    } else if du <= dul {
        up
    } else {
        up_left
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compression, write::ZlibEncoder};

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn a_deflate_bomb_stops_at_the_bound() {
        let bomb = zlib(&vec![0u8; 50 << 20]);
        assert!(bomb.len() < 100_000);
        let err = inflate(&bomb, 1 << 20).unwrap_err();
        assert!(err.contains("past 1048576 bytes"), "{err}");
        assert_eq!(inflate(&zlib(b"hello"), 1 << 20).unwrap(), b"hello");
    }

    #[test]
    fn ascii_filters_decode() {
        assert_eq!(
            ascii85(b"87cURD]i,\"Ebo80~>", 100).unwrap(),
            b"Hello World!"
        );
        assert_eq!(ascii85(b"87cURD]i,\"Ebo7~>", 100).unwrap(), b"Hello World");
        assert_eq!(ascii85(b"z~>", 100).unwrap(), vec![0; 4]);
        assert_eq!(ascii_hex(b"48 65 6C6C 6f7>", 100), b"Hellop");
        assert_eq!(
            run_length(&[2, b'a', b'b', b'c', 254, b'z', 128], 100),
            b"abczzz"
        );
        assert_eq!(run_length(&[200, b'z'], 10).len(), 10, "runs are bounded");
    }

    #[test]
    fn png_predictors_restore_rows() {
        // Two rows of three 8-bit gray pixels: Sub, then Up.
        let encoded = [1, 10, 5, 5, 2, 1, 1, 1];
        assert_eq!(png_predict(&encoded, 3, 1), vec![10, 15, 20, 11, 16, 21]);
        // Paeth and Average on a single row.
        assert_eq!(png_predict(&[4, 7, 1], 2, 1), vec![7, 8]);
        assert_eq!(png_predict(&[3, 8, 1], 2, 1), vec![8, 5]);
    }

    #[test]
    fn tiff_predictor_adds_the_pixel_before() {
        assert_eq!(
            tiff_predict(vec![1, 2, 3, 4, 1, 1], 6, 2),
            vec![1, 2, 4, 6, 5, 7]
        );
    }
}
