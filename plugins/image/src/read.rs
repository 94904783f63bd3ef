//! An image file → a document of the text OCR reads in it.
//!
//! Each image (each page of a TIFF) is decoded under the bounds, turned
//! upright, prepared by the SDK (grayscale, downscaled to the host's bound)
//! and read by the host's OCR into paragraph blocks cited by region (and
//! page, for a TIFF of several pages). EXIF gives the metadata and, from
//! `ImageDescription`, the title.
//!
//! Two answers are not failures of the file and keep fixed prefixes so the
//! host can tell them apart: `OCR unavailable: …` (no engine) and
//! `no text found in the image` (a photo without text).

use std::ops::ControlFlow;

use image::DynamicImage;
use image::metadata::Orientation;
use kebab_plugin_sdk::ocr::{self, Prepared};
use kebab_plugin_sdk::{Block, Document, LogLevel, OcrError, PluginError, Span, log, setting};

use crate::decode::{self, Kind};
use crate::exif::{self, Facts};
use crate::pages;

/// The answer when OCR read nothing in any image of the file.
pub const NO_TEXT: &str = "no text found in the image";

/// What reads text in prepared pixels: the host, or a stand-in in tests.
#[derive(Debug, Clone, Copy)]
pub struct Ocr {
    /// `Ok` when text can be read at all (checked before decoding).
    pub ready: fn() -> Result<(), OcrError>,
    /// The paragraph blocks of one prepared image on `page`.
    pub read: fn(&Prepared, Option<u32>) -> Result<Vec<Block>, OcrError>,
}

impl Ocr {
    /// The host's OCR, through the SDK.
    pub const HOST: Ocr = Ocr {
        ready: ocr::engine_ready,
        read: read_with_host,
    };
}

fn read_with_host(prepared: &Prepared, page: Option<u32>) -> Result<Vec<Block>, OcrError> {
    ocr::read_blocks(prepared, page, &[])
}

/// Parse an image file, reading its text with `engine`.
pub fn parse(bytes: &[u8], engine: Ocr) -> Result<Document, PluginError> {
    let kind = decode::kind(bytes)?;
    let facts = exif::read(bytes);
    let mut reading = Reading::new(engine);
    let pages = match kind {
        Kind::Single(format) => {
            decode::checked_dimensions(bytes, format)?;
            (engine.ready)().map_err(|e| unreadable(&e))?;
            let image = decode::single(bytes, format)?;
            let upright = facts.orientation.unwrap_or(Orientation::NoTransforms);
            let _ = reading.image(None, image, upright);
            1
        }
        Kind::Tiff => {
            (engine.ready)().map_err(|e| unreadable(&e))?;
            let count = pages::for_each_page(bytes, |page| {
                reading.image(Some(page.number), page.image, page.orientation)
            })?;
            if count == 1 {
                reading.drop_page_numbers();
            }
            count
        }
    };
    reading.finish(kind, pages, facts)
}

/// The error for an image OCR could not read, with the host's reason.
fn unreadable(error: &OcrError) -> PluginError {
    PluginError::Unsupported(match error {
        OcrError::Unavailable(why) => format!("OCR unavailable: {why}"),
        OcrError::Rejected(why) => format!("image refused: {why}"),
        OcrError::Failed(why) => format!("OCR failed: {why}"),
    })
}

/// The blocks read so far from a file's images.
struct Reading {
    engine: Ocr,
    blocks: Vec<Block>,
    /// Width and height of the first image, as stored.
    size: Option<(u32, u32)>,
    /// The first error OCR gave; `Unavailable` stops the file.
    error: Option<OcrError>,
}

impl Reading {
    fn new(engine: Ocr) -> Reading {
        Reading {
            engine,
            blocks: Vec::new(),
            size: None,
            error: None,
        }
    }

    /// OCR one image (a page when `page` is given); stop when OCR is
    /// unavailable.
    fn image(
        &mut self,
        page: Option<u32>,
        image: DynamicImage,
        upright: Orientation,
    ) -> ControlFlow<()> {
        self.size.get_or_insert((image.width(), image.height()));
        let prepared = ocr::prepare(image, upright);
        match (self.engine.read)(&prepared, page) {
            Ok(blocks) => self.blocks.extend(blocks),
            Err(error) => {
                let stop = matches!(error, OcrError::Unavailable(_));
                log(
                    LogLevel::Warn,
                    &format!("page {}: {}", page.unwrap_or(1), message(&error)),
                );
                self.error.get_or_insert(error);
                if stop {
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// A file of one page cites regions without a page number.
    fn drop_page_numbers(&mut self) {
        for block in &mut self.blocks {
            if let Span::Region(region) = &mut block.span {
                region.page = None;
            }
        }
    }

    fn finish(self, kind: Kind, pages: u32, facts: Facts) -> Result<Document, PluginError> {
        if let Some(error @ OcrError::Unavailable(_)) = &self.error {
            return Err(unreadable(error));
        }
        if self.blocks.is_empty() {
            return Err(match &self.error {
                Some(error) => unreadable(error),
                None => PluginError::Unsupported(NO_TEXT.into()),
            });
        }
        let with_gps = setting("gps").is_some_and(|v| v.trim() == "true");
        Ok(Document {
            title: facts.description.clone(),
            lang: None,
            metadata: metadata(kind, self.size, pages, &facts, with_gps),
            blocks: self.blocks,
        })
    }
}

fn message(error: &OcrError) -> String {
    match unreadable(error) {
        PluginError::Unsupported(m) | PluginError::Malformed(m) => m,
    }
}

/// The document's metadata: `format`, `width` and `height` (of the first
/// image, as stored), `pages` (a TIFF's), and from EXIF `taken`, `camera`
/// and — only `with_gps` — `gps` as "latitude,longitude".
pub fn metadata(
    kind: Kind,
    size: Option<(u32, u32)>,
    pages: u32,
    facts: &Facts,
    with_gps: bool,
) -> Vec<(String, String)> {
    let mut out = vec![("format".to_string(), kind.name().to_string())];
    if let Some((width, height)) = size {
        out.push(("width".into(), width.to_string()));
        out.push(("height".into(), height.to_string()));
    }
    if kind == Kind::Tiff {
        out.push(("pages".into(), pages.to_string()));
    }
    if let Some(taken) = &facts.taken {
        out.push(("taken".into(), taken.clone()));
    }
    if let Some(camera) = &facts.camera {
        out.push(("camera".into(), camera.clone()));
    }
    if let (true, Some((latitude, longitude))) = (with_gps, facts.gps) {
        out.push(("gps".into(), format!("{latitude:.6},{longitude:.6}")));
    }
    out
}
