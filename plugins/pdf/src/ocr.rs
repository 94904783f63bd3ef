//! Pages without a text layer, read by the host's OCR: the page's images
//! become one grayscale picture of the page as a viewer shows it (the one
//! image of a scanned page, turned as the page turns it; or several images
//! — strips, tiles — composed at the resolution of the sharpest), which
//! the SDK prepares, hands to the host and groups into paragraph blocks
//! cited `Region{page: Some(n), …}`.
//!
//! One page is decoded at a time and dropped before the next, so a file of
//! huge scans stays within the sandbox's memory; at most
//! [`MAX_OCR_PAGES`] pages of a file are read.

use image::metadata::Orientation;
use image::{DynamicImage, GrayImage};
use kebab_plugin_sdk::{Block, LogLevel, OcrError, PluginError, log, ocr};
use lopdf::{Document as Pdf, ObjectId};

use crate::raster;
use crate::scan::{self, Placement};

/// The most pages of one file read by OCR.
pub const MAX_OCR_PAGES: u32 = 500;
/// How many reasons for unread pages the error message names.
const REASONS_SHOWN: usize = 3;

/// A page's picture, ready for OCR.
#[derive(Debug)]
pub struct PageImage {
    /// The page's images as one grayscale picture.
    pub image: GrayImage,
    /// How to turn it upright (applied after downscaling, by the SDK).
    pub orientation: Orientation,
}

/// The picture of a page's image `placements` ([`scan::placements`]):
/// the single image (or, when one is skewed, the largest) alone, else all
/// of them composed; `None` when there are none.
pub fn render(pdf: &Pdf, placements: &[Placement]) -> Result<Option<PageImage>, String> {
    let largest = placements
        .iter()
        .max_by(|a, b| a.area().total_cmp(&b.area()));
    let Some(largest) = largest else {
        return Ok(None);
    };
    let orientations: Option<Vec<Orientation>> =
        placements.iter().map(Placement::orientation).collect();
    match orientations {
        Some(turns) if placements.len() > 1 => compose(pdf, placements, &turns).map(Some),
        _ => Ok(Some(PageImage {
            image: raster::decode(pdf, largest.stream)?,
            orientation: largest.orientation().unwrap_or(Orientation::NoTransforms),
        })),
    }
}

/// Several images painted into one picture of the area they cover, at the
/// resolution of the sharpest (at most the OCR bound), in paint order;
/// stencil masks darken what is under them.
fn compose(
    pdf: &Pdf,
    placements: &[Placement],
    turns: &[Orientation],
) -> Result<PageImage, String> {
    let boxes: Vec<[f64; 4]> = placements.iter().map(Placement::bounds).collect();
    let union = boxes.iter().fold(
        [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ],
        |u, b| {
            [
                u[0].min(b[0]),
                u[1].min(b[1]),
                u[2].max(b[2]),
                u[3].max(b[3]),
            ]
        },
    );
    let (span_x, span_y) = (union[2] - union[0], union[3] - union[1]);
    if !(span_x > 0.0 && span_y > 0.0 && span_x.is_finite() && span_y.is_finite()) {
        return Err("images painted with no area".into());
    }
    let sharpest = placements
        .iter()
        .map(|p| {
            let pixels = f64::from(p.info.width) * f64::from(p.info.height);
            (pixels / p.area().max(f64::MIN_POSITIVE)).sqrt()
        })
        .fold(0.0, f64::max);
    let bound = ocr::max_pixels().clamp(1, raster::MAX_PIXELS) as f64;
    let density = sharpest.min((bound / (span_x * span_y)).sqrt());
    let width = ((span_x * density).floor() as u32).max(1);
    let height = ((span_y * density).floor() as u32).max(1);
    let mut canvas = GrayImage::from_pixel(width, height, image::Luma([255]));
    for ((placement, bounds), turn) in placements.iter().zip(&boxes).zip(turns) {
        let left = ((bounds[0] - union[0]) * density).round() as i64;
        let top = ((union[3] - bounds[3]) * density).round() as i64;
        let w = (((bounds[2] - bounds[0]) * density).round() as u32).max(1);
        let h = (((bounds[3] - bounds[1]) * density).round() as u32).max(1);
        let mut image = DynamicImage::ImageLuma8(raster::decode(pdf, placement.stream)?);
        image.apply_orientation(*turn);
        let image = fit(image.into_luma8(), w, h);
        if placement.info.mask {
            darken(&mut canvas, &image, left, top);
        } else {
            image::imageops::replace(&mut canvas, &image, left, top);
        }
    }
    Ok(PageImage {
        image: canvas,
        orientation: Orientation::NoTransforms,
    })
}

/// `image` at `width × height` (area-averaged down, interpolated up).
fn fit(image: GrayImage, width: u32, height: u32) -> GrayImage {
    if image.dimensions() == (width, height) {
        image
    } else if image.width() >= width && image.height() >= height {
        image::imageops::thumbnail(&image, width, height)
    } else {
        image::imageops::resize(&image, width, height, image::imageops::FilterType::Triangle)
    }
}

/// Paint the dark pixels of `top` over `canvas` at (`left`, `y`).
fn darken(canvas: &mut GrayImage, top: &GrayImage, left: i64, y: i64) {
    for (x, row, pixel) in top.enumerate_pixels() {
        let (cx, cy) = (left + i64::from(x), y + i64::from(row));
        if let (Ok(cx), Ok(cy)) = (u32::try_from(cx), u32::try_from(cy))
            && let Some(under) = canvas.get_pixel_mut_checked(cx, cy)
        {
            under.0[0] = under.0[0].min(pixel.0[0]);
        }
    }
}

/// OCR of a file's pages without a text layer: what was read, and why the
/// rest was not.
#[derive(Debug, Default)]
pub struct Scans {
    /// Pages without a text layer met so far.
    pub candidates: u32,
    /// Pages whose picture the engine read.
    pub read: u32,
    /// The host's reason when it has no engine.
    unavailable: Option<String>,
    /// Why some pages gave nothing (first few).
    reasons: Vec<String>,
    /// Whether the engine was asked if it is there.
    checked: bool,
    /// Whether [`MAX_OCR_PAGES`] was reached (and logged).
    capped: bool,
}

impl Scans {
    /// OCR page `number` (no text layer) and return its paragraph blocks;
    /// none when it could not be read (the reason is logged and kept).
    pub fn read_page(&mut self, pdf: &Pdf, number: u32, page_id: ObjectId) -> Vec<Block> {
        self.candidates += 1;
        if self.unavailable.is_some() {
            return Vec::new();
        }
        if self.read >= MAX_OCR_PAGES {
            if !self.capped {
                self.capped = true;
                log(
                    LogLevel::Warn,
                    &format!("only the first {MAX_OCR_PAGES} pages without a text layer are OCR'd"),
                );
            }
            return Vec::new();
        }
        let placements = scan::placements(pdf, page_id);
        if placements.is_empty() {
            // A blank page: nothing to warn about, but the reason for a
            // file of nothing else.
            self.remember(number, "no image to read".into());
            return Vec::new();
        }
        if !self.checked {
            self.checked = true;
            if let Err(e) = ocr::engine_ready() {
                self.fail(number, e);
                return Vec::new();
            }
        }
        let picture = match render(pdf, &placements) {
            Ok(Some(picture)) => picture,
            Ok(None) => return Vec::new(),
            Err(why) => {
                self.note(number, why);
                return Vec::new();
            }
        };
        let prepared = ocr::prepare(DynamicImage::ImageLuma8(picture.image), picture.orientation);
        match ocr::read_blocks(&prepared, Some(number), &[]) {
            Ok(blocks) => {
                self.read += 1;
                if blocks.is_empty() {
                    self.note(number, "OCR found no text".into());
                }
                blocks
            }
            Err(e) => {
                self.fail(number, e);
                Vec::new()
            }
        }
    }

    fn fail(&mut self, number: u32, error: OcrError) {
        match error {
            OcrError::Unavailable(reason) => {
                log(LogLevel::Warn, &format!("OCR unavailable: {reason}"));
                self.unavailable = Some(reason);
            }
            OcrError::Rejected(why) => self.note(number, format!("image refused: {why}")),
            OcrError::Failed(why) => self.note(number, format!("OCR failed: {why}")),
        }
    }

    /// Log why page `number` gave no text, and remember it.
    fn note(&mut self, number: u32, why: String) {
        log(LogLevel::Warn, &format!("page {number} not OCR'd: {why}"));
        self.remember(number, why);
    }

    /// Keep the first few reasons for the error message.
    fn remember(&mut self, number: u32, why: String) {
        if self.reasons.len() < REASONS_SHOWN {
            self.reasons.push(format!("page {number}: {why}"));
        }
    }

    /// Why a file whose pages all lack a text layer gave no text.
    pub fn failure(&self, pages: usize) -> PluginError {
        if let Some(reason) = &self.unavailable {
            return PluginError::Unsupported(format!(
                "OCR unavailable: {reason} ({} of {pages} pages have no text layer)",
                self.candidates
            ));
        }
        let why = if self.reasons.is_empty() {
            String::new()
        } else {
            format!("; {}", self.reasons.join("; "))
        };
        PluginError::Malformed(format!(
            "no text layer ({pages} pages, image-only or scanned PDF{why})"
        ))
    }

    /// Log that OCR was unavailable for some pages of a file that had text.
    pub fn report_skipped(&self) {
        if let Some(reason) = &self.unavailable {
            log(
                LogLevel::Warn,
                &format!(
                    "{} pages without a text layer not OCR'd: OCR unavailable: {reason}",
                    self.candidates
                ),
            );
        }
    }
}
