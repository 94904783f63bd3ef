//! Image bytes → pixels, refused from their header when too large.
//!
//! The format is told by the bytes, not the name. PNG, JPEG, WebP, GIF
//! (its first frame) and BMP decode with the `image` crate under
//! [`image::Limits`]; TIFF goes to [`crate::tiff`] for every page. Before
//! anything is decoded the header's size is checked against
//! [`MAX_DECODED_BYTES`], so a 100 000 × 100 000 PNG or a small JPEG that
//! claims gigapixels costs nothing.

use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};
use kebab_plugin_sdk::PluginError;

/// The longest side of an image this plugin decodes.
pub const MAX_SIDE: u32 = 100_000;
/// The most bytes one decoded image (or TIFF page) may take: a 64
/// megapixel RGB photo. With the file itself, its gray copy and the
/// downscaled one this stays well inside the sandbox's 512 MiB.
pub const MAX_DECODED_BYTES: u64 = 192 << 20;

/// The formats this plugin reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Decoded by the `image` crate.
    Single(ImageFormat),
    /// Every page, by the `tiff` crate.
    Tiff,
}

impl Kind {
    /// Lowercase name, as metadata `format`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Tiff => "tiff",
            Kind::Single(ImageFormat::Png) => "png",
            Kind::Single(ImageFormat::Jpeg) => "jpeg",
            Kind::Single(ImageFormat::WebP) => "webp",
            Kind::Single(ImageFormat::Gif) => "gif",
            Kind::Single(ImageFormat::Bmp) => "bmp",
            Kind::Single(_) => "image",
        }
    }
}

/// The format of `bytes`, from their signature.
pub fn kind(bytes: &[u8]) -> Result<Kind, PluginError> {
    match image::guess_format(bytes) {
        Ok(ImageFormat::Tiff) => Ok(Kind::Tiff),
        Ok(
            format @ (ImageFormat::Png
            | ImageFormat::Jpeg
            | ImageFormat::WebP
            | ImageFormat::Gif
            | ImageFormat::Bmp),
        ) => Ok(Kind::Single(format)),
        Ok(other) => Err(PluginError::Unsupported(format!(
            "{} images are not read (PNG, JPEG, WebP, TIFF, GIF and BMP are): convert it to PNG and ingest again",
            other
                .extensions_str()
                .first()
                .unwrap_or(&"these")
                .to_uppercase()
        ))),
        Err(_) if bytes.is_empty() => Err(PluginError::Malformed("empty file".into())),
        Err(_) => Err(PluginError::Malformed(
            "not a PNG, JPEG, WebP, TIFF, GIF or BMP image (unknown signature)".into(),
        )),
    }
}

/// Refuse `width × height` pixels of `bytes_per_pixel` each when over the
/// bounds, naming the size.
pub fn check_size(width: u32, height: u32, bytes_per_pixel: u64) -> Result<(), PluginError> {
    let bytes = u64::from(width) * u64::from(height) * bytes_per_pixel.max(1);
    if width == 0 || height == 0 {
        return Err(PluginError::Malformed(format!(
            "image of {width}×{height} pixels is empty"
        )));
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(PluginError::Malformed(format!(
            "image of {width}×{height} pixels is over the {MAX_SIDE}-pixel side bound"
        )));
    }
    if bytes > MAX_DECODED_BYTES {
        return Err(PluginError::Malformed(format!(
            "image of {width}×{height} pixels is over the {} MiB decoding bound",
            MAX_DECODED_BYTES >> 20
        )));
    }
    Ok(())
}

/// The `image` crate's limits matching [`check_size`].
pub fn limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    limits
}

/// What a decoder error means for the user.
pub fn malformed(error: image::ImageError) -> PluginError {
    match error {
        image::ImageError::Unsupported(e) => {
            PluginError::Unsupported(format!("unsupported image: {e}"))
        }
        other => PluginError::Malformed(format!("corrupt image: {other}")),
    }
}

/// Width and height from the header, read without any allocation bound
/// (no pixels are decoded), checked against the bounds.
pub fn checked_dimensions(bytes: &[u8], format: ImageFormat) -> Result<(u32, u32), PluginError> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.no_limits();
    let decoder = reader.into_decoder().map_err(malformed)?;
    let (width, height) = decoder.dimensions();
    let pixel = u64::from(decoder.color_type().bytes_per_pixel());
    check_size(width, height, pixel)?;
    Ok((width, height))
}

/// Decode a PNG, JPEG, WebP, GIF (first frame) or BMP under the bounds.
pub fn single(bytes: &[u8], format: ImageFormat) -> Result<DynamicImage, PluginError> {
    checked_dimensions(bytes, format)?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits());
    reader.decode().map_err(malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_signature() {
        assert_eq!(
            kind(b"\x89PNG\r\n\x1a\n....").unwrap(),
            Kind::Single(ImageFormat::Png)
        );
        assert_eq!(kind(b"II*\0....").unwrap(), Kind::Tiff);
        assert!(
            matches!(kind(b"hello"), Err(PluginError::Malformed(m)) if m.contains("unknown signature"))
        );
        assert!(matches!(kind(b""), Err(PluginError::Malformed(m)) if m == "empty file"));
        assert!(matches!(kind(b"qoif...."), Err(PluginError::Unsupported(m)) if m.contains("QOI")));
    }

    #[test]
    fn sizes_are_bounded() {
        assert!(check_size(8000, 8000, 3).is_ok());
        let side = check_size(100_001, 10, 1).unwrap_err();
        assert!(
            matches!(side, PluginError::Malformed(m) if m.contains("100001×10") && m.contains("side bound"))
        );
        let bytes = check_size(65_535, 65_535, 3).unwrap_err();
        assert!(
            matches!(bytes, PluginError::Malformed(m) if m == "image of 65535×65535 pixels is over the 192 MiB decoding bound")
        );
    }
}
