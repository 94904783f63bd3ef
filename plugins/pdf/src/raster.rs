//! A PDF image XObject → 8-bit grayscale pixels as a viewer shows them.
//!
//! Raw samples (after the byte filters: 1, 2, 4, 8 or 16 bits per
//! component) in DeviceGray, DeviceRGB, DeviceCMYK, their calibrated and
//! ICC-based forms, Separation (one ink) and Indexed colour spaces, with
//! `/Decode` arrays and stencil masks (`/ImageMask`); and the image codecs:
//! `DCTDecode` (JPEG), `JPXDecode` (JPEG 2000, decoded at a reduced
//! resolution level when large), `CCITTFaxDecode` (group 3 1-D and 2-D,
//! group 4) and `JBIG2Decode` (with `/JBIG2Globals`). Every image is bounded
//! from its dictionary before anything is decoded.

use std::io::Cursor;

use image::{DynamicImage, GrayImage, ImageDecoder};
use lopdf::{Dictionary, Document as Pdf, Object, Stream};

use crate::filters::{self, Codec, parm_int, resolve};

/// The longest side of an image this plugin decodes.
pub const MAX_SIDE: u32 = 100_000;
/// The most pixels of one image (a 600 dpi A3 scan is ~70 million).
pub const MAX_PIXELS: u64 = 80_000_000;
/// The most bytes one image's samples (or codec buffers) may take.
pub const MAX_DECODED_BYTES: usize = 192 << 20;
/// JPEG 2000 images are decoded at the smallest resolution level that
/// still has at least about this many pixels: enough for OCR, and its
/// decoder keeps every component as 32-bit floats.
const JPX_TARGET_PIXELS: u64 = 4_000_000;
/// The most bytes of a palette (`/Indexed` lookup) stream.
const MAX_PALETTE_BYTES: usize = 4 * 256;
/// The most bytes of a `/JBIG2Globals` stream.
const MAX_GLOBALS_BYTES: usize = 16 << 20;

/// What an image XObject's dictionary says, before decoding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    /// Width in samples.
    pub width: u32,
    /// Height in rows.
    pub height: u32,
    /// A stencil mask: its unpainted pixels are transparent.
    pub mask: bool,
}

/// Width, height and mask flag of an image dictionary; `None` when it has
/// no usable size.
pub fn info(pdf: &Pdf, dict: &Dictionary) -> Option<ImageInfo> {
    let side = |keys: [&[u8]; 2]| {
        keys.iter()
            .find_map(|k| dict.get(k).ok())
            .map(|v| resolve(pdf, v))
            .and_then(|v| v.as_i64().ok())
            .and_then(|v| u32::try_from(v).ok())
            .filter(|&v| v > 0)
    };
    Some(ImageInfo {
        width: side([b"Width", b"W"])?,
        height: side([b"Height", b"H"])?,
        mask: flag(pdf, dict, [b"ImageMask", b"IM"]),
    })
}

fn flag(pdf: &Pdf, dict: &Dictionary, keys: [&[u8]; 2]) -> bool {
    keys.iter()
        .find_map(|k| dict.get(k).ok())
        .and_then(|v| resolve(pdf, v).as_bool().ok())
        .unwrap_or(false)
}

/// Decode an image XObject to grayscale, or say why not.
pub fn decode(pdf: &Pdf, stream: &Stream) -> Result<GrayImage, String> {
    let dict = &stream.dict;
    let info = info(pdf, dict).ok_or("an image without a width and height")?;
    check_size(info.width, info.height)?;
    let bits = bits_per_component(dict, info);
    let color = color_of(pdf, dict);
    // Raw samples decompress to exactly their rows (plus PNG predictor
    // bytes); a codec's input is about as large as the stream. Either way a
    // deflate bomb stops there.
    let components = color.as_ref().map_or(1, Color::components);
    let raw = row_bytes(info.width, components, bits.unwrap_or(8)) * info.height as usize;
    let limit = (raw + info.height as usize + 1024)
        .max(stream.content.len().saturating_mul(2) + 1024)
        .min(MAX_DECODED_BYTES);
    let filtered = filters::decode(pdf, stream, limit)?;
    let decode = decode_array(pdf, dict);
    let decode = decode.as_deref();
    match filtered.codec {
        Some((Codec::Dct, _)) => jpeg(&filtered.data, inverted(decode)),
        Some((Codec::Jpx, _)) => jpx(&filtered.data),
        Some((Codec::Ccitt, parm)) => {
            let bits = ccitt(&filtered.data, parm, info)?;
            samples(&bits, info, &color?, 1, decode)
        }
        Some((Codec::Jbig2, parm)) => {
            let bits = jbig2(pdf, &filtered.data, parm, info)?;
            samples(&bits, info, &color?, 1, decode)
        }
        None => {
            let bits = bits.ok_or("an image without a usable /BitsPerComponent")?;
            samples(&filtered.data, info, &color?, bits, decode)
        }
    }
}

/// `/BitsPerComponent` (1 for a stencil mask), when it is one this module
/// unpacks.
fn bits_per_component(dict: &Dictionary, info: ImageInfo) -> Option<u8> {
    if info.mask {
        return Some(1);
    }
    let bits = parm_int(
        Some(dict),
        b"BitsPerComponent",
        parm_int(Some(dict), b"BPC", 8),
    );
    u8::try_from(bits)
        .ok()
        .filter(|b| [1, 2, 4, 8, 16].contains(b))
}

/// Bytes in one row of packed samples.
fn row_bytes(width: u32, components: usize, bits: u8) -> usize {
    (width as usize * components * usize::from(bits)).div_ceil(8)
}

/// Refuse an image too large to decode, from its size alone.
pub fn check_size(width: u32, height: u32) -> Result<(), String> {
    let pixels = u64::from(width) * u64::from(height);
    if width > MAX_SIDE || height > MAX_SIDE || pixels > MAX_PIXELS {
        return Err(format!(
            "image of {width}×{height} pixels is over the {MAX_PIXELS}-pixel bound"
        ));
    }
    Ok(())
}

/// `/Decode` as numbers.
fn decode_array(pdf: &Pdf, dict: &Dictionary) -> Option<Vec<f32>> {
    let array = dict.get(b"Decode").or_else(|_| dict.get(b"D")).ok()?;
    let items = resolve(pdf, array).as_array().ok()?;
    items
        .iter()
        .map(|v| resolve(pdf, v).as_float().ok())
        .collect()
}

/// Whether a `/Decode` array swaps the first component's range (`[1 0 …]`).
fn inverted(decode: Option<&[f32]>) -> bool {
    matches!(decode, Some([low, high, ..]) if low > high)
}

/// How samples become gray.
#[derive(Debug, Clone, PartialEq)]
enum Color {
    Gray,
    Rgb,
    Cmyk,
    /// One colorant (Separation): 0 is no ink (white), 1 full ink.
    Ink,
    /// A palette of gray values, indexed by the sample.
    Indexed(Vec<u8>),
}

impl Color {
    fn components(&self) -> usize {
        match self {
            Color::Rgb => 3,
            Color::Cmyk => 4,
            Color::Gray | Color::Ink | Color::Indexed(_) => 1,
        }
    }

    /// Gray of one pixel's components (each 0–255; an index for Indexed).
    fn gray(&self, c: &[u8]) -> u8 {
        let at = |i: usize| u32::from(c.get(i).copied().unwrap_or(0));
        match self {
            Color::Gray => at(0) as u8,
            Color::Rgb => ((299 * at(0) + 587 * at(1) + 114 * at(2)) / 1000) as u8,
            Color::Cmyk => {
                let ink = (30 * at(0) + 59 * at(1) + 11 * at(2)) / 100 + at(3);
                (255 - ink.min(255)) as u8
            }
            Color::Ink => (255 - at(0)) as u8,
            Color::Indexed(palette) => palette.get(at(0) as usize).copied().unwrap_or(0),
        }
    }
}

/// The image's colour space (a stencil mask is gray: 0 paints).
fn color_of(pdf: &Pdf, dict: &Dictionary) -> Result<Color, String> {
    if flag(pdf, dict, [b"ImageMask", b"IM"]) {
        return Ok(Color::Gray);
    }
    let Some(space) = dict.get(b"ColorSpace").or_else(|_| dict.get(b"CS")).ok() else {
        return Ok(Color::Gray);
    };
    let space = resolve(pdf, space);
    match space
        .as_array()
        .ok()
        .and_then(|a| a.first())
        .map(|f| resolve(pdf, f))
    {
        Some(Object::Name(family)) if matches!(family.as_slice(), b"Indexed" | b"I") => {
            indexed(pdf, space.as_array().map_err(|e| e.to_string())?)
        }
        _ => direct_color(pdf, space),
    }
}

/// A colour space that is not a palette.
fn direct_color(pdf: &Pdf, space: &Object) -> Result<Color, String> {
    let (family, items) = match resolve(pdf, space) {
        Object::Name(name) => (name.as_slice(), &[][..]),
        Object::Array(items) => match items.first().map(|f| resolve(pdf, f)) {
            Some(Object::Name(name)) => (name.as_slice(), &items[1..]),
            _ => return Err("a colour space without a family name".into()),
        },
        _ => return Err("a colour space that is neither a name nor an array".into()),
    };
    match family {
        b"DeviceGray" | b"G" | b"CalGray" => Ok(Color::Gray),
        b"DeviceRGB" | b"RGB" | b"CalRGB" => Ok(Color::Rgb),
        b"DeviceCMYK" | b"CMYK" | b"CalCMYK" => Ok(Color::Cmyk),
        b"Separation" => Ok(Color::Ink),
        b"DeviceN" => match items
            .first()
            .map(|n| resolve(pdf, n).as_array().map(Vec::len))
        {
            Some(Ok(1)) => Ok(Color::Ink),
            _ => Err("a DeviceN colour space of several colorants".into()),
        },
        b"ICCBased" => {
            let stream = items
                .first()
                .map(|s| resolve(pdf, s))
                .and_then(|s| s.as_stream().ok())
                .ok_or("an ICCBased colour space without its profile")?;
            match parm_int(Some(&stream.dict), b"N", 0) {
                1 => Ok(Color::Gray),
                3 => Ok(Color::Rgb),
                4 => Ok(Color::Cmyk),
                n => Err(format!("an ICC profile of {n} components")),
            }
        }
        other => Err(format!(
            "the {} colour space",
            String::from_utf8_lossy(other)
        )),
    }
}

/// `[/Indexed base hival lookup]` as a gray palette.
fn indexed(pdf: &Pdf, items: &[Object]) -> Result<Color, String> {
    let base = direct_color(
        pdf,
        items
            .get(1)
            .ok_or("an Indexed colour space without a base")?,
    )?;
    let hival = items
        .get(2)
        .and_then(|h| resolve(pdf, h).as_i64().ok())
        .unwrap_or(255)
        .clamp(0, 255) as usize;
    let lookup = match items.get(3).map(|l| resolve(pdf, l)) {
        Some(Object::String(bytes, _)) => bytes.clone(),
        Some(Object::Stream(stream)) => filters::decode_plain(pdf, stream, MAX_PALETTE_BYTES)?,
        _ => return Err("an Indexed colour space without its palette".into()),
    };
    let width = base.components();
    let palette = (0..=hival)
        .map(|i| {
            let entry = lookup.get(i * width..(i + 1) * width).unwrap_or(&[]);
            base.gray(entry)
        })
        .collect();
    Ok(Color::Indexed(palette))
}

/// Per component, the value (0–255, or a palette index) of every sample
/// value `0..2^bits` after `/Decode`.
fn component_tables(color: &Color, bits: u8, decode: Option<&[f32]>) -> Vec<Vec<u8>> {
    let table_bits = bits.min(8);
    let top = ((1u32 << table_bits) - 1) as f32;
    let indexed = matches!(color, Color::Indexed(_));
    (0..color.components())
        .map(|c| {
            let default = if indexed { (0.0, top) } else { (0.0, 1.0) };
            let (low, high) = match decode {
                Some(d) if d.len() >= 2 * (c + 1) => (d[2 * c], d[2 * c + 1]),
                _ => default,
            };
            (0..=top as u32)
                .map(|s| {
                    let value = low + s as f32 * (high - low) / top.max(1.0);
                    let scaled = if indexed { value } else { value * 255.0 };
                    scaled.round().clamp(0.0, 255.0) as u8
                })
                .collect()
        })
        .collect()
}

/// Packed samples (rows padded to whole bytes) → gray pixels. Rows the
/// data does not reach (a truncated stream) stay white.
fn samples(
    data: &[u8],
    info: ImageInfo,
    color: &Color,
    bits: u8,
    decode: Option<&[f32]>,
) -> Result<GrayImage, String> {
    let (width, height) = (info.width as usize, info.height as usize);
    let components = color.components();
    let row_bytes = row_bytes(info.width, components, bits);
    if row_bytes.saturating_mul(height) > MAX_DECODED_BYTES {
        return Err(format!(
            "image samples over {} MiB",
            MAX_DECODED_BYTES >> 20
        ));
    }
    let tables = component_tables(color, bits, decode);
    let mut pixels = vec![255u8; width * height];
    let mut values = [0u8; 4];
    for (row, out) in data.chunks(row_bytes).zip(pixels.chunks_mut(width)) {
        for (x, pixel) in out.iter_mut().enumerate() {
            let mut complete = true;
            for (c, value) in values.iter_mut().enumerate().take(components) {
                match sample(row, x * components + c, bits) {
                    Some(s) => *value = tables[c].get(s).copied().unwrap_or(0),
                    None => complete = false,
                }
            }
            if complete {
                *pixel = color.gray(&values[..components]);
            }
        }
    }
    GrayImage::from_raw(info.width, info.height, pixels).ok_or_else(|| "image buffer size".into())
}

/// The `index`th sample of a packed row (16-bit samples: their high byte;
/// `bits` is 1, 2, 4, 8 or 16, so a sample never crosses a byte).
fn sample(row: &[u8], index: usize, bits: u8) -> Option<usize> {
    match bits {
        8 => row.get(index).map(|&b| usize::from(b)),
        16 => row.get(index * 2).map(|&b| usize::from(b)),
        _ => {
            let bit = index * usize::from(bits);
            let byte = row.get(bit / 8)?;
            let shift = 8 - usize::from(bits) - bit % 8;
            Some(usize::from(byte >> shift) & ((1 << bits) - 1))
        }
    }
}

/// Limits for the `image` crate's decoders.
fn image_limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES as u64);
    limits
}

fn jpeg(data: &[u8], invert: bool) -> Result<GrayImage, String> {
    let mut decoder = image::codecs::jpeg::JpegDecoder::new(Cursor::new(data))
        .map_err(|e| format!("JPEG: {e}"))?;
    let (width, height) = decoder.dimensions();
    check_size(width, height)?;
    decoder
        .set_limits(image_limits())
        .map_err(|e| format!("JPEG: {e}"))?;
    let mut gray = DynamicImage::from_decoder(decoder)
        .map_err(|e| format!("JPEG: {e}"))?
        .into_luma8();
    if invert {
        image::imageops::invert(&mut gray);
    }
    Ok(gray)
}

fn jpx(data: &[u8]) -> Result<GrayImage, String> {
    use hayro_jpeg2000::{DecodeSettings, DecoderContext, Image};
    let full =
        Image::new(data, &DecodeSettings::default()).map_err(|e| format!("JPEG 2000: {e:?}"))?;
    let (width, height) = (full.width(), full.height());
    check_size(width, height)?;
    let area = u64::from(width) * u64::from(height);
    let shrink = (area as f64 / JPX_TARGET_PIXELS as f64).sqrt().max(1.0);
    let settings = DecodeSettings {
        target_resolution: Some((
            ((f64::from(width) / shrink) as u32).max(1),
            ((f64::from(height) / shrink) as u32).max(1),
        )),
        ..DecodeSettings::default()
    };
    let image = Image::new(data, &settings).map_err(|e| format!("JPEG 2000: {e:?}"))?;
    let (width, height) = (image.width(), image.height());
    let channels = usize::from(image.color_space().num_channels()) + usize::from(image.has_alpha());
    let float_bytes = (width as usize)
        .saturating_mul(height as usize)
        .saturating_mul(channels.max(1) * 4);
    if float_bytes > MAX_DECODED_BYTES {
        return Err(format!(
            "JPEG 2000 image of {width}×{height}×{channels} is over {} MiB to decode",
            MAX_DECODED_BYTES >> 20
        ));
    }
    let color = match image.color_space().num_channels() {
        1 => Color::Gray,
        3 => Color::Rgb,
        4 => Color::Cmyk,
        n => return Err(format!("JPEG 2000 image of {n} colour channels")),
    };
    let mut context = DecoderContext::default();
    let decoded = image
        .decode(&mut context)
        .map_err(|e| format!("JPEG 2000: {e:?}"))?;
    let interleaved = decoded.data_u8();
    let pixels = interleaved
        .chunks(channels.max(1))
        .map(|c| color.gray(c))
        .collect();
    GrayImage::from_raw(width, height, pixels).ok_or_else(|| "JPEG 2000: short image".into())
}

/// A packed 1-bit image being filled by a bi-level decoder: 1 bits are
/// white, as a PDF's bi-level filters hand them to the colour space.
struct Bilevel {
    data: Vec<u8>,
    width: usize,
    height: usize,
    row_bytes: usize,
    x: usize,
    y: usize,
}

impl Bilevel {
    fn new(info: ImageInfo) -> Bilevel {
        let (width, height) = (info.width as usize, info.height as usize);
        let row_bytes = width.div_ceil(8);
        Bilevel {
            data: vec![0xff; row_bytes * height],
            width,
            height,
            row_bytes,
            x: 0,
            y: 0,
        }
    }

    /// Set the next `count` pixels of the current row to `sample`.
    fn run(&mut self, sample: bool, count: usize) {
        let end = (self.x + count).min(self.width);
        if self.y < self.height && !sample {
            let row = self.y * self.row_bytes;
            for x in self.x..end {
                if let Some(byte) = self.data.get_mut(row + x / 8) {
                    *byte &= !(0x80 >> (x % 8));
                }
            }
        }
        self.x = end;
    }

    fn next_row(&mut self) {
        self.y += 1;
        self.x = 0;
    }
}

/// CCITT fax data (`/K` < 0: group 4, 0: group 3 1-D, > 0: group 3 2-D).
/// With `/BlackIs1` false (the default) black pixels are 0 samples.
fn ccitt(data: &[u8], parm: Option<&Dictionary>, info: ImageInfo) -> Result<Vec<u8>, String> {
    use hayro_ccitt::{DecodeSettings, DecoderContext, EncodingMode};
    let k = parm_int(parm, b"K", 0);
    let columns =
        parm_int(parm, b"Columns", i64::from(info.width)).clamp(1, i64::from(MAX_SIDE)) as u32;
    let settings = DecodeSettings {
        columns,
        rows: info.height,
        end_of_block: parm_flag(parm, b"EndOfBlock", true),
        end_of_line: parm_flag(parm, b"EndOfLine", false),
        rows_are_byte_aligned: parm_flag(parm, b"EncodedByteAlign", false),
        encoding: match k {
            k if k < 0 => EncodingMode::Group4,
            0 => EncodingMode::Group3_1D,
            _ => EncodingMode::Group3_2D,
        },
        strict: false,
    };
    let black_is_1 = parm_flag(parm, b"BlackIs1", false);
    let mut image = Bilevel::new(info);
    let mut context = DecoderContext::new(settings);
    let mut rows = FaxRows {
        image: &mut image,
        black_is_1,
    };
    let result = hayro_ccitt::decode(data, &mut rows, &mut context);
    if let Err(e) = result
        && image.y == 0
    {
        return Err(format!("CCITT fax data: {e:?}"));
    }
    Ok(image.data)
}

/// Rows of CCITT runs into a [`Bilevel`]: a white run's samples are 1,
/// or 0 with `/BlackIs1`.
struct FaxRows<'a> {
    image: &'a mut Bilevel,
    black_is_1: bool,
}

impl hayro_ccitt::Decoder for FaxRows<'_> {
    fn push_row(&mut self, changes: &[u32]) {
        let image = &mut *self.image;
        let mut start = 0usize;
        let mut white = true;
        for &change in changes.iter().chain(std::iter::once(&(image.width as u32))) {
            let change = (change as usize).clamp(start, image.width);
            image.run(white != self.black_is_1, change - start);
            start = change;
            white = !white;
        }
        image.next_row();
    }
}

fn parm_flag(parm: Option<&Dictionary>, key: &[u8], default: bool) -> bool {
    parm.and_then(|p| p.get(key).ok())
        .and_then(|v| v.as_bool().ok())
        .unwrap_or(default)
}

impl hayro_jbig2::Decoder for Bilevel {
    fn push_pixel(&mut self, black: bool) {
        self.run(!black, 1);
    }

    fn push_pixel_chunk(&mut self, black: bool, chunk_count: u32) {
        self.run(!black, chunk_count as usize * 8);
    }

    fn next_line(&mut self) {
        self.next_row();
    }
}

/// JBIG2 data embedded in a PDF (black pixels become 0 samples).
fn jbig2(
    pdf: &Pdf,
    data: &[u8],
    parm: Option<&Dictionary>,
    info: ImageInfo,
) -> Result<Vec<u8>, String> {
    use hayro_jbig2::{DecodeSettings, Globals, Page};
    let settings = DecodeSettings::default();
    let globals_data = match parm
        .and_then(|p| p.get(b"JBIG2Globals").ok())
        .map(|g| resolve(pdf, g))
    {
        Some(Object::Stream(stream)) => {
            Some(filters::decode_plain(pdf, stream, MAX_GLOBALS_BYTES)?)
        }
        _ => None,
    };
    let globals = globals_data
        .as_deref()
        .map(|g| Globals::new(g, &settings))
        .transpose()
        .map_err(|e| format!("JBIG2 globals: {e:?}"))?;
    let page = Page::new_embedded(data, globals.as_ref(), &settings)
        .map_err(|e| format!("JBIG2: {e:?}"))?;
    check_size(page.width(), page.height())?;
    let mut image = Bilevel::new(info);
    page.decode(&mut image)
        .map_err(|e| format!("JBIG2: {e:?}"))?;
    Ok(image.data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_unpack_at_every_depth() {
        assert_eq!(sample(&[0b1010_0000], 0, 1), Some(1));
        assert_eq!(sample(&[0b1010_0000], 1, 1), Some(0));
        assert_eq!(sample(&[0b1110_0100], 1, 2), Some(0b10));
        assert_eq!(sample(&[0x3c], 1, 4), Some(0xc));
        assert_eq!(sample(&[0x12, 0x34, 0xab, 0xcd], 1, 16), Some(0xab));
        assert_eq!(sample(&[0x12], 4, 8), None);
    }

    #[test]
    fn decode_arrays_invert_and_index() {
        let gray = component_tables(&Color::Gray, 1, Some(&[1.0, 0.0]));
        assert_eq!(gray, vec![vec![255, 0]]);
        let plain = component_tables(&Color::Gray, 2, None);
        assert_eq!(plain, vec![vec![0, 85, 170, 255]]);
        let palette = component_tables(&Color::Indexed(vec![0; 4]), 2, None);
        assert_eq!(palette, vec![vec![0, 1, 2, 3]]);
    }

    #[test]
    fn colours_turn_gray() {
        assert_eq!(Color::Rgb.gray(&[255, 255, 255]), 255);
        assert_eq!(Color::Rgb.gray(&[255, 0, 0]), 76);
        assert_eq!(Color::Cmyk.gray(&[0, 0, 0, 255]), 0);
        assert_eq!(Color::Cmyk.gray(&[0, 0, 0, 0]), 255);
        assert_eq!(Color::Ink.gray(&[255]), 0);
        assert_eq!(Color::Indexed(vec![9, 200]).gray(&[1]), 200);
        assert_eq!(Color::Indexed(vec![9]).gray(&[7]), 0, "past the palette");
    }

    #[test]
    fn huge_sizes_are_refused_before_decoding() {
        assert!(check_size(8000, 8000).is_ok());
        let err = check_size(100_000, 100_000).unwrap_err();
        assert!(err.contains("100000×100000"), "{err}");
        assert!(check_size(100_001, 1).is_err());
    }

    #[test]
    fn bilevel_runs_fill_packed_rows() {
        let mut image = Bilevel::new(ImageInfo {
            width: 10,
            height: 2,
            mask: false,
        });
        let mut rows = FaxRows {
            image: &mut image,
            black_is_1: false,
        };
        hayro_ccitt::Decoder::push_row(&mut rows, &[2, 5]);
        rows.black_is_1 = true;
        hayro_ccitt::Decoder::push_row(&mut rows, &[9]);
        // Row 1: white ×2 (1s), black ×3 (0s), white ×5; row 2 inverted:
        // white ×9 as 0s, black ×1 as 1. Padding bits stay 1.
        assert_eq!(
            image.data,
            vec![0b1100_0111, 0xff, 0b0000_0000, 0b0111_1111]
        );
    }
}
