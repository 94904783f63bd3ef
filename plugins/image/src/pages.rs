//! Every page of a TIFF file (a multi-page scan, a fax) as grayscale, one
//! at a time, with the `tiff` crate: 1 to 16-bit gray (either polarity),
//! gray with alpha, RGB(A), CMYK, YCbCr (JPEG-in-TIFF) and palette images,
//! uncompressed, LZW, Deflate, PackBits, CCITT group 4 or JPEG.
//!
//! Reduced-resolution copies (thumbnails) and transparency masks are not
//! pages. Each page is bounded from its header; the file is bounded in
//! pages ([`MAX_PAGES`]) and in pixels ([`MAX_FILE_PIXELS`]), and what is
//! left out is logged.

use std::io::Cursor;
use std::ops::ControlFlow;

use image::metadata::Orientation;
use image::{DynamicImage, GrayImage};
use kebab_plugin_sdk::{LogLevel, PluginError, log};
use tiff::ColorType;
use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::tags::Tag;

use crate::decode::{MAX_DECODED_BYTES, check_size};

/// The most pages read from one file.
pub const MAX_PAGES: u32 = 1_000;
/// The most pixels read from one file, all pages together.
pub const MAX_FILE_PIXELS: u64 = 1_000_000_000;
/// The most directories (pages and thumbnails) walked in one file.
const MAX_DIRECTORIES: u32 = 4 * MAX_PAGES;

/// One page of a TIFF file.
#[derive(Debug)]
pub struct Page {
    /// 1-based, counting pages only (not thumbnails).
    pub number: u32,
    /// Its pixels, gray.
    pub image: DynamicImage,
    /// The page's orientation tag as the turn a viewer applies.
    pub orientation: Orientation,
}

/// Hand every page of `bytes` to `visit`, in order, until it says stop.
/// Returns the number of pages seen. A first page that cannot be read is
/// an error; a later one is logged and passed over.
pub fn for_each_page(
    bytes: &[u8],
    mut visit: impl FnMut(Page) -> ControlFlow<()>,
) -> Result<u32, PluginError> {
    let mut decoder = Decoder::new(Cursor::new(bytes))
        .map_err(|e| PluginError::Malformed(format!("corrupt TIFF: {e}")))?
        .with_limits(limits());
    let (mut pages, mut pixels) = (0u32, 0u64);
    for directory in 0..MAX_DIRECTORIES {
        if directory > 0 {
            if !decoder.more_images() {
                return Ok(pages);
            }
            if let Err(e) = decoder.next_image() {
                log(
                    LogLevel::Warn,
                    &format!(
                        "TIFF directory {}: {e}; the pages after it are left out",
                        directory + 1
                    ),
                );
                return Ok(pages);
            }
        }
        if !is_page(&mut decoder) {
            continue;
        }
        if pages == MAX_PAGES {
            log(
                LogLevel::Warn,
                &format!("only the first {MAX_PAGES} pages of the TIFF are read"),
            );
            return Ok(pages);
        }
        pages += 1;
        let page = read_page(&mut decoder, pages, &mut pixels);
        match page {
            Ok(Some(page)) => {
                if visit(page).is_break() {
                    return Ok(pages);
                }
            }
            Ok(None) => return Ok(pages),
            Err(e) if pages == 1 => return Err(e),
            Err(e) => log(
                LogLevel::Warn,
                &format!("TIFF page {pages} left out: {}", message(&e)),
            ),
        }
    }
    Ok(pages)
}

fn message(error: &PluginError) -> &str {
    match error {
        PluginError::Malformed(m) | PluginError::Unsupported(m) => m,
    }
}

fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.decoding_buffer_size = MAX_DECODED_BYTES as usize;
    limits.intermediate_buffer_size = MAX_DECODED_BYTES as usize;
    limits
}

/// Whether the current directory is a page: not a reduced-resolution copy
/// or a transparency mask (`NewSubfileType` bits 0 and 2).
fn is_page(decoder: &mut Decoder<Cursor<&[u8]>>) -> bool {
    let kind: u32 = decoder
        .find_tag_unsigned(Tag::NewSubfileType)
        .ok()
        .flatten()
        .unwrap_or(0);
    kind & 0b101 == 0
}

/// The current directory's page; `None` once the file's pixel bound is
/// reached (logged).
fn read_page(
    decoder: &mut Decoder<Cursor<&[u8]>>,
    number: u32,
    pixels: &mut u64,
) -> Result<Option<Page>, PluginError> {
    let corrupt = |e: tiff::TiffError| match e {
        tiff::TiffError::UnsupportedError(u) => {
            PluginError::Unsupported(format!("unsupported TIFF: {u}"))
        }
        other => PluginError::Malformed(format!("corrupt TIFF: {other}")),
    };
    let (width, height) = decoder.dimensions().map_err(corrupt)?;
    let color = decoder.colortype().map_err(corrupt)?;
    let bytes_per_pixel = u64::from(color.bit_depth()).div_ceil(8) * u64::from(color.num_samples());
    check_size(width, height, bytes_per_pixel)?;
    *pixels += u64::from(width) * u64::from(height);
    if *pixels > MAX_FILE_PIXELS {
        log(
            LogLevel::Warn,
            &format!("TIFF pages from {number} on left out: over {MAX_FILE_PIXELS} pixels in all"),
        );
        return Ok(None);
    }
    let orientation = decoder
        .find_tag_unsigned::<u8>(Tag::Orientation)
        .ok()
        .flatten()
        .and_then(Orientation::from_exif)
        .unwrap_or(Orientation::NoTransforms);
    let palette = match color {
        ColorType::Palette(_) => Some(decoder.get_tag_u16_vec(Tag::ColorMap).map_err(corrupt)?),
        _ => None,
    };
    let samples = decoder.read_image().map_err(corrupt)?;
    let gray = to_gray(samples, width, height, color, palette.as_deref())
        .map_err(PluginError::Unsupported)?;
    Ok(Some(Page {
        number,
        image: DynamicImage::ImageLuma8(gray),
        orientation,
    }))
}

/// How a page's samples become gray.
enum Model {
    /// The first sample is gray; a second, when `alpha`, its opacity.
    Gray {
        alpha: bool,
    },
    /// RGB, then maybe alpha.
    Rgb {
        alpha: bool,
    },
    Cmyk,
    /// A palette's gray value per index.
    Palette(Vec<u8>),
}

impl Model {
    fn gray(&self, s: &[u8]) -> u8 {
        let at = |i: usize| u32::from(s.get(i).copied().unwrap_or(0));
        let over_white =
            |value: u32, alpha: u32| ((value * alpha + 255 * (255 - alpha)) / 255) as u8;
        match self {
            Model::Gray { alpha: false } => at(0) as u8,
            Model::Gray { alpha: true } => over_white(at(0), at(1)),
            Model::Rgb { alpha } => {
                let luma = (299 * at(0) + 587 * at(1) + 114 * at(2)) / 1000;
                if *alpha {
                    over_white(luma, at(3))
                } else {
                    luma as u8
                }
            }
            Model::Cmyk => {
                let ink = (30 * at(0) + 59 * at(1) + 11 * at(2)) / 100 + at(3);
                (255 - ink.min(255)) as u8
            }
            Model::Palette(grays) => grays.get(at(0) as usize).copied().unwrap_or(0),
        }
    }
}

/// The colour model and sample count of a TIFF colour type.
fn model_of(color: ColorType, palette: Option<&[u16]>) -> Result<(Model, usize), String> {
    Ok(match color {
        ColorType::Gray(_) => (Model::Gray { alpha: false }, 1),
        ColorType::GrayA(_) => (Model::Gray { alpha: true }, 2),
        // JPEG-in-TIFF YCbCr arrives unconverted: Y is the gray.
        ColorType::YCbCr(_) => (Model::Gray { alpha: false }, 3),
        ColorType::RGB(_) => (Model::Rgb { alpha: false }, 3),
        ColorType::RGBA(_) => (Model::Rgb { alpha: true }, 4),
        ColorType::CMYK(_) => (Model::Cmyk, 4),
        ColorType::CMYKA(_) => (Model::Cmyk, 5),
        ColorType::Multiband { num_samples, .. } => (
            Model::Gray { alpha: false },
            usize::from(num_samples.max(1)),
        ),
        ColorType::Palette(bits) => {
            let map = palette.ok_or("a palette image without a colour map")?;
            let entries = 1usize << bits.min(8);
            let grays = (0..entries)
                .map(|i| {
                    let channel =
                        |c: usize| u32::from(map.get(c * entries + i).copied().unwrap_or(0) >> 8);
                    ((299 * channel(0) + 587 * channel(1) + 114 * channel(2)) / 1000) as u8
                })
                .collect();
            (Model::Palette(grays), 1)
        }
        other => return Err(format!("TIFF colour type {other:?} is not read")),
    })
}

/// Decoded samples → gray pixels.
fn to_gray(
    samples: DecodingResult,
    width: u32,
    height: u32,
    color: ColorType,
    palette: Option<&[u16]>,
) -> Result<GrayImage, String> {
    let (model, channels) = model_of(color, palette)?;
    let indices = matches!(model, Model::Palette(_));
    let values = normalized(
        samples,
        width as usize,
        channels,
        color.bit_depth(),
        indices,
    )?;
    let pixels: Vec<u8> = values
        .chunks(channels)
        .take(width as usize * height as usize)
        .map(|pixel| model.gray(pixel))
        .collect();
    let mut pixels = pixels;
    pixels.resize(width as usize * height as usize, 255);
    GrayImage::from_raw(width, height, pixels).ok_or_else(|| "TIFF page buffer size".into())
}

/// Every sample as 0–255 (or, for `indices`, as read), unpacking rows of
/// 1, 2 or 4-bit samples.
fn normalized(
    samples: DecodingResult,
    width: usize,
    channels: usize,
    bits: u8,
    indices: bool,
) -> Result<Vec<u8>, String> {
    Ok(match samples {
        DecodingResult::U8(bytes) if bits < 8 => unpack(&bytes, width * channels, bits, indices),
        DecodingResult::U8(bytes) => bytes,
        DecodingResult::U16(words) => words.iter().map(|&w| (w >> 8) as u8).collect(),
        DecodingResult::U32(words) => words.iter().map(|&w| (w >> 24) as u8).collect(),
        DecodingResult::F32(floats) => floats
            .iter()
            .map(|&f| (f.clamp(0.0, 1.0) * 255.0) as u8)
            .collect(),
        DecodingResult::F64(floats) => floats
            .iter()
            .map(|&f| (f.clamp(0.0, 1.0) * 255.0) as u8)
            .collect(),
        _ => {
            return Err(format!(
                "TIFF samples of {bits} bits of this type are not read"
            ));
        }
    })
}

/// Packed rows of `per_row` samples of `bits` (1 to 7) each (rows padded
/// to whole bytes) → one byte per sample, scaled to 0–255 unless
/// `indices`. A sample may straddle two bytes (3, 5, 6 or 7 bits).
fn unpack(bytes: &[u8], per_row: usize, bits: u8, indices: bool) -> Vec<u8> {
    let bits = usize::from(bits.clamp(1, 7));
    let top = (1usize << bits) - 1;
    let row_bytes = (per_row * bits).div_ceil(8).max(1);
    let mut out = Vec::with_capacity(bytes.len() * 8 / bits);
    for row in bytes.chunks(row_bytes) {
        for index in 0..per_row {
            let bit = index * bits;
            let pair = [row.get(bit / 8), row.get(bit / 8 + 1)].map(|b| b.copied().unwrap_or(0));
            let window = usize::from(u16::from_be_bytes(pair));
            let value = (window >> (16 - bits - bit % 8)) & top;
            out.push(if indices {
                value as u8
            } else {
                (value * 255 / top) as u8
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_rows_unpack_and_scale() {
        // Two rows of three 1-bit samples, each row padded to a byte.
        assert_eq!(
            unpack(&[0b1010_0000, 0b0110_0000], 3, 1, false),
            vec![255, 0, 255, 0, 255, 255]
        );
        assert_eq!(unpack(&[0b1101_0000], 2, 2, true), vec![3, 1]);
        assert_eq!(unpack(&[0xf0], 2, 4, false), vec![255, 0]);
        // 3-bit samples straddle bytes: 101 110 01|1 000...
        assert_eq!(
            unpack(&[0b1011_1001, 0b1000_0000], 3, 3, true),
            vec![5, 6, 3]
        );
    }

    #[test]
    fn palettes_and_alpha_turn_gray() {
        // A 1-bit palette: black, white (16-bit colour map, reds then greens then blues).
        let (model, channels) = model_of(
            ColorType::Palette(1),
            Some(&[0, 0xffff, 0, 0xffff, 0, 0xffff]),
        )
        .unwrap();
        assert_eq!(channels, 1);
        assert_eq!((model.gray(&[0]), model.gray(&[1])), (0, 255));
        assert_eq!(
            Model::Gray { alpha: true }.gray(&[0, 0]),
            255,
            "transparent is paper"
        );
        assert_eq!(Model::Rgb { alpha: false }.gray(&[255, 255, 255]), 255);
        assert!(model_of(ColorType::Palette(8), None).is_err());
    }
}
