//! The host's OCR seam: what a plugin's `ocr` import (API 1.2.0) is
//! answered by. The runtime holds at most one [`OcrEngine`]; without one
//! every call answers [`OcrError::Unavailable`], so a plugin reports "no
//! OCR engine" for that file and the run goes on. An engine is host code
//! with its own bounds (pixels, time); it sees only plain grayscale pixels
//! a plugin decoded in its sandbox, never the file's bytes.

pub mod cache;
pub mod pixels;
pub mod tesseract;

/// An image as 8-bit grayscale pixels, rows top to bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct GrayImage {
    pub width: u32,
    pub height: u32,
    /// `width × height` bytes, 0 black, 255 white.
    pub pixels: Vec<u8>,
}

/// A line of text found in an image, its box in the image's pixels and the
/// engine's confidence (0 to 1).
#[derive(Debug, Clone, PartialEq)]
pub struct TextLine {
    pub text: String,
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    pub confidence: f32,
}

/// Why no text was read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OcrError {
    /// No engine, or OCR turned off; says how to turn it on.
    #[error("OCR unavailable: {0}")]
    Unavailable(String),
    /// The image is empty, malformed or over the bounds.
    #[error("image refused: {0}")]
    Rejected(String),
    /// The engine failed or ran past its budget.
    #[error("OCR failed: {0}")]
    Failed(String),
}

/// An OCR engine the host runs for plugins.
pub trait OcrEngine: Send + Sync {
    /// The most pixels one image may have.
    fn max_pixels(&self) -> u64;
    /// The lines of text in `image`, in reading order.
    fn recognize(&self, image: &GrayImage) -> Result<Vec<TextLine>, OcrError>;

    /// [`OcrEngine::recognize`], and whether the lines came from a cache
    /// rather than the engine (an engine without one: never).
    fn recognize_traced(&self, image: &GrayImage) -> Result<(Vec<TextLine>, bool), OcrError> {
        self.recognize(image).map(|lines| (lines, false))
    }
}

/// What a plugin asked of the engine during one call: images read and the
/// time it took (the report says how many pages were OCR'd).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OcrUse {
    /// Images the engine read.
    pub images: u32,
    /// Of those, images whose text came from the cache.
    pub cached: u32,
    /// Time spent in the engine.
    pub elapsed: std::time::Duration,
}

impl std::ops::AddAssign for OcrUse {
    fn add_assign(&mut self, other: OcrUse) {
        self.images += other.images;
        self.cached += other.cached;
        self.elapsed += other.elapsed;
    }
}

/// Check an image's shape against the engine's bound before any engine
/// sees it.
pub fn check_image(image: &GrayImage, max_pixels: u64) -> Result<(), OcrError> {
    let pixels = u64::from(image.width) * u64::from(image.height);
    if pixels == 0 {
        return Err(OcrError::Rejected("the image is empty".into()));
    }
    if pixels > max_pixels {
        return Err(OcrError::Rejected(format!(
            "{}×{} is {pixels} pixels, over the {max_pixels} allowed: scale it down",
            image.width, image.height
        )));
    }
    if image.pixels.len() as u64 != pixels {
        return Err(OcrError::Rejected(format!(
            "{} bytes of pixels for a {}×{} image",
            image.pixels.len(),
            image.width,
            image.height
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_checked_before_an_engine_sees_them() {
        let image = |w, h, n| GrayImage {
            width: w,
            height: h,
            pixels: vec![255; n],
        };
        assert!(check_image(&image(4, 3, 12), 100).is_ok());
        assert!(matches!(
            check_image(&image(0, 3, 0), 100),
            Err(OcrError::Rejected(_))
        ));
        assert!(
            matches!(check_image(&image(20, 20, 400), 100), Err(OcrError::Rejected(m)) if m.contains("scale it down"))
        );
        assert!(matches!(
            check_image(&image(4, 3, 11), 100),
            Err(OcrError::Rejected(_))
        ));
    }
}
