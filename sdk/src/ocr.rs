//! Text in images, read by the host (API 1.2.0): decode the image in the
//! plugin, make it 8-bit grayscale no larger than [`max_pixels`], and hand
//! the pixels to [`recognize`]; then turn the lines it found into blocks
//! ([`blocks_from_lines`]) and the blocks into chunks ([`chunk_regions`]).
//!
//! Every plugin that reads images (the `image` plugin, the `pdf` plugin's
//! scanned pages) shares this module, so OCR'd text is grouped, cited and
//! chunked the same way whatever file it came from. Preparing pixels
//! ([`prepare`]) needs the `image` feature; grouping and chunking do not.
//!
//! In a native build (unit tests, benchmarks) there is no host, so
//! [`recognize`] answers [`OcrError::Unavailable`].

use crate::text::estimate_tokens;
use crate::{
    Block, BlockKind, Chunk, ChunkPolicy, Document, GrayImage, OcrError, Region, Span, TextLine,
};

/// Lines the engine is less sure of than this (0 to 1) are dropped: at that
/// level they are mostly noise read from photos, rules or speckles.
pub const MIN_LINE_CONFIDENCE: f32 = 0.3;

/// A line starts a new paragraph when the blank space above it is taller
/// than this many line heights (ordinary line spacing is well under one).
const PARAGRAPH_GAP: f64 = 0.8;

/// A line starts a new paragraph when its left edge is farther right of the
/// line above than this many line heights (an indented first line, another
/// column).
const INDENT: f64 = 1.0;

/// A line starts a new paragraph when it is this many times taller (or
/// shorter) than the line above: a heading over body text.
const HEIGHT_CHANGE: f64 = 1.6;

/// The most pixels (width × height) the host reads in one image: 0 when the
/// host has no OCR engine.
pub fn max_pixels() -> u64 {
    #[cfg(target_arch = "wasm32")]
    return crate::kebab::plugin::ocr::max_pixels();
    #[cfg(not(target_arch = "wasm32"))]
    {
        // The host's default bound, so native tests scale as a component would.
        40_000_000
    }
}

/// The lines of text in `image`, in reading order.
pub fn recognize(image: &GrayImage) -> Result<Vec<TextLine>, OcrError> {
    #[cfg(target_arch = "wasm32")]
    return crate::kebab::plugin::ocr::recognize(image);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = image;
        Err(OcrError::Unavailable(
            "no host in a native build: OCR runs only inside kebab".into(),
        ))
    }
}

/// `Ok` when the host can read text, else its reason, learnt cheaply: a
/// host without an engine bounds images at 0 pixels, and its answer to a
/// 1-pixel image says why (and how to turn OCR on). Call it before decoding
/// anything large.
pub fn engine_ready() -> Result<(), OcrError> {
    if max_pixels() > 0 {
        return Ok(());
    }
    let probe = GrayImage {
        width: 1,
        height: 1,
        pixels: vec![255],
    };
    recognize(&probe).map(|_| ())
}

/// Pixels ready for [`recognize`], and how to map its boxes back.
#[cfg(feature = "image")]
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// Grayscale, upright, at most [`max_pixels`] pixels.
    pub image: GrayImage,
    /// Pixels of the original image per pixel of [`Prepared::image`]
    /// (1 when it was not downscaled).
    pub scale: f64,
}

/// `image` as 8-bit grayscale (transparent pixels over white), downscaled
/// by area averaging so that width × height ≤ [`max_pixels`], then turned
/// upright by `orientation` (an EXIF orientation, or a PDF page's flips).
/// Turning after scaling costs the small image, not the large one, and
/// keeps one scale for both axes.
#[cfg(feature = "image")]
pub fn prepare(image: image::DynamicImage, orientation: image::metadata::Orientation) -> Prepared {
    prepare_within(image, orientation, max_pixels().max(1))
}

/// [`prepare`] under an explicit pixel bound.
#[cfg(feature = "image")]
pub fn prepare_within(
    image: image::DynamicImage,
    orientation: image::metadata::Orientation,
    bound: u64,
) -> Prepared {
    let gray = to_gray(image);
    let (width, height) = gray.dimensions();
    let (fit_width, fit_height) = fit_within(width, height, bound);
    let small = if (fit_width, fit_height) == (width, height) {
        gray
    } else {
        image::imageops::thumbnail(&gray, fit_width, fit_height)
    };
    let mut upright = image::DynamicImage::ImageLuma8(small);
    upright.apply_orientation(orientation);
    let upright = upright.into_luma8();
    Prepared {
        scale: f64::from(width.max(1)) / f64::from(fit_width.max(1)),
        image: GrayImage {
            width: upright.width(),
            height: upright.height(),
            pixels: upright.into_raw(),
        },
    }
}

/// 8-bit luma; an image with an alpha channel is composed over white, so
/// dark text on a transparent background stays readable.
#[cfg(feature = "image")]
fn to_gray(image: image::DynamicImage) -> image::GrayImage {
    if !image.color().has_alpha() {
        return image.into_luma8();
    }
    let with_alpha = image.into_luma_alpha8();
    let (width, height) = with_alpha.dimensions();
    let pixels = with_alpha
        .pixels()
        .map(|p| {
            let [luma, alpha] = p.0;
            let (luma, alpha) = (u32::from(luma), u32::from(alpha));
            ((luma * alpha + 255 * (255 - alpha) + 127) / 255) as u8
        })
        .collect();
    image::GrayImage::from_raw(width, height, pixels).unwrap_or_default()
}

/// The largest size with the aspect of `width × height` whose area is at
/// most `bound` (never below 1×1).
#[cfg(feature = "image")]
fn fit_within(width: u32, height: u32, bound: u64) -> (u32, u32) {
    let area = u64::from(width) * u64::from(height);
    if area <= bound {
        return (width, height);
    }
    let shrink = (area as f64 / bound as f64).sqrt();
    let mut fit = (
        ((f64::from(width) / shrink).floor() as u32).clamp(1, width),
        ((f64::from(height) / shrink).floor() as u32).clamp(1, height),
    );
    // Rounding may leave the area a hair over the bound.
    while u64::from(fit.0) * u64::from(fit.1) > bound && (fit.0 > 1 || fit.1 > 1) {
        if fit.0 >= fit.1 {
            fit.0 -= 1;
        } else {
            fit.1 -= 1;
        }
    }
    fit
}

/// OCR `prepared` and group what the host read into paragraph blocks (see
/// [`blocks_from_lines`]).
#[cfg(feature = "image")]
pub fn read_blocks(
    prepared: &Prepared,
    page: Option<u32>,
    heading_path: &[String],
) -> Result<Vec<Block>, OcrError> {
    let lines = recognize(&prepared.image)?;
    Ok(blocks_from_lines(
        &lines,
        prepared.scale,
        page,
        heading_path,
    ))
}

/// A paragraph being gathered from lines, in the prepared image's pixels.
struct Paragraph<'a> {
    lines: Vec<&'a TextLine>,
    left: u32,
    top: u32,
    right: u64,
    bottom: u64,
    confidence: f32,
}

impl<'a> Paragraph<'a> {
    fn new(line: &'a TextLine) -> Paragraph<'a> {
        Paragraph {
            left: line.x,
            top: line.y,
            right: far_edge(line.x, line.width),
            bottom: far_edge(line.y, line.height),
            confidence: line.confidence,
            lines: vec![line],
        }
    }

    fn push(&mut self, line: &'a TextLine) {
        self.left = self.left.min(line.x);
        self.top = self.top.min(line.y);
        self.right = self.right.max(far_edge(line.x, line.width));
        self.bottom = self.bottom.max(far_edge(line.y, line.height));
        self.confidence = self.confidence.min(line.confidence);
        self.lines.push(line);
    }

    /// Whether `line` goes on this paragraph rather than starting another.
    fn continues_with(&self, line: &TextLine) -> bool {
        let Some(above) = self.lines.last() else {
            return false;
        };
        let height = f64::from(above.height.min(line.height).max(1));
        let tallest = f64::from(above.height.max(line.height).max(1));
        let gap = i64::from(line.y) - far_edge(above.y, above.height) as i64;
        let shift = i64::from(line.x) - i64::from(above.x);
        let moved_up = far_edge(line.y, line.height) <= u64::from(above.y);
        let outdented = (shift as f64) < -INDENT * height && self.lines.len() > 1;
        !(moved_up
            || gap as f64 > PARAGRAPH_GAP * height
            || tallest / height > HEIGHT_CHANGE
            || shift as f64 > INDENT * height
            || outdented)
    }

    /// The paragraph as a block, its box mapped to the original image by
    /// `scale`.
    fn into_block(self, scale: f64, page: Option<u32>, heading_path: &[String]) -> Block {
        let text = self
            .lines
            .iter()
            .map(|l| l.text.trim())
            .collect::<Vec<_>>()
            .join("\n");
        let x = scaled_floor(u64::from(self.left), scale);
        let y = scaled_floor(u64::from(self.top), scale);
        let right = scaled_ceil(self.right, scale).max(x + 1);
        let bottom = scaled_ceil(self.bottom, scale).max(y + 1);
        Block {
            kind: BlockKind::Paragraph,
            heading_path: heading_path.to_vec(),
            span: Span::Region(Region {
                page,
                x,
                y,
                width: right - x,
                height: bottom - y,
                confidence: self.confidence.clamp(0.0, 1.0),
            }),
            text,
            level: None,
            lang: None,
        }
    }
}

/// `start + length` without overflow.
fn far_edge(start: u32, length: u32) -> u64 {
    u64::from(start) + u64::from(length)
}

/// `value × scale` rounded down, within `u32` (less one, so an edge past it
/// still fits).
fn scaled_floor(value: u64, scale: f64) -> u32 {
    (value as f64 * scale)
        .floor()
        .clamp(0.0, f64::from(u32::MAX - 1)) as u32
}

/// `value × scale` rounded up, within `u32`.
fn scaled_ceil(value: u64, scale: f64) -> u32 {
    (value as f64 * scale)
        .ceil()
        .clamp(0.0, f64::from(u32::MAX)) as u32
}

/// Whether the engine's line is worth keeping: some text, a box, and a
/// confidence of at least [`MIN_LINE_CONFIDENCE`] (a NaN is none).
fn is_kept(line: &TextLine) -> bool {
    !line.text.trim().is_empty()
        && line.width > 0
        && line.height > 0
        && line.confidence >= MIN_LINE_CONFIDENCE
}

/// Group OCR'd `lines` (in reading order, boxes in the pixels of the image
/// the engine read) into paragraphs, one [`BlockKind::Paragraph`] block
/// each: its text is its lines joined by `\n` (a hyphen at a line's end is
/// kept as read), its span a [`Span::Region`] on `page` whose box is the
/// paragraph's in the original image (the engine's boxes times `scale`)
/// and whose confidence is its least sure line's.
///
/// A line starts a new paragraph when the gap above it is wider than
/// ordinary line spacing, it is much taller or shorter than the line above
/// (a heading), it sits above the line before (the next column), or its
/// left edge moves right of the line above (an indented first line) or,
/// after the paragraph's second line, left of it. Empty lines and lines
/// below [`MIN_LINE_CONFIDENCE`] are dropped.
pub fn blocks_from_lines(
    lines: &[TextLine],
    scale: f64,
    page: Option<u32>,
    heading_path: &[String],
) -> Vec<Block> {
    let scale = if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    };
    let mut blocks = Vec::new();
    let mut current: Option<Paragraph> = None;
    for line in lines.iter().filter(|l| is_kept(l)) {
        match current.as_mut() {
            Some(paragraph) if paragraph.continues_with(line) => paragraph.push(line),
            _ => {
                if let Some(done) = current.replace(Paragraph::new(line)) {
                    blocks.push(done.into_block(scale, page, heading_path));
                }
            }
        }
    }
    if let Some(done) = current {
        blocks.push(done.into_block(scale, page, heading_path));
    }
    blocks
}

/// A piece of one region block packed as a whole: the block, or a run of
/// its lines when the block alone is over the target.
struct Piece {
    block: u32,
    text: String,
    tokens: u32,
}

/// The pieces of `block`: itself when it fits `target` tokens, else runs of
/// its lines of at most `target` tokens (a single longer line stays whole).
fn pieces_of(index: u32, block: &Block, target: u32) -> Vec<Piece> {
    let tokens = estimate_tokens(&block.text);
    if tokens <= target {
        return vec![Piece {
            block: index,
            text: block.text.clone(),
            tokens,
        }];
    }
    let mut pieces: Vec<Piece> = Vec::new();
    for line in block.text.lines() {
        let line_tokens = estimate_tokens(line);
        match pieces.last_mut() {
            Some(last) if last.tokens + line_tokens <= target => {
                last.text.push('\n');
                last.text.push_str(line);
                last.tokens += line_tokens;
            }
            _ => pieces.push(Piece {
                block: index,
                text: line.to_string(),
                tokens: line_tokens,
            }),
        }
    }
    pieces
}

/// The page and heading path of a region block: a chunk never spans two.
fn region_key(block: &Block) -> Option<(Option<u32>, &[String])> {
    match &block.span {
        Span::Region(region) => Some((region.page, block.heading_path.as_slice())),
        _ => None,
    }
}

/// A chunk being packed.
#[derive(Default)]
struct Pack {
    text: String,
    tokens: u32,
    blocks: Vec<u32>,
}

impl Pack {
    fn add(&mut self, piece: Piece) {
        if !self.text.is_empty() {
            let same_block = self.blocks.last() == Some(&piece.block);
            self.text.push_str(if same_block { "\n" } else { "\n\n" });
        }
        self.text.push_str(&piece.text);
        self.tokens += piece.tokens;
        if self.blocks.last() != Some(&piece.block) {
            self.blocks.push(piece.block);
        }
    }

    fn into_chunk(self, doc: &Document) -> Option<Chunk> {
        let first = doc.blocks.get(*self.blocks.first()? as usize)?;
        Some(Chunk {
            heading_path: first.heading_path.clone(),
            spans: self
                .blocks
                .iter()
                .filter_map(|&b| doc.blocks.get(b as usize).map(|b| b.span.clone()))
                .collect(),
            blocks: self.blocks,
            text: self.text,
        })
    }
}

/// Chunk the OCR'd blocks of `doc` (those with a [`Span::Region`]; others
/// are left to the plugin's own chunker): paragraphs of one page or image
/// (and heading path) are packed in order up to `target_tokens`; a
/// paragraph over the target is cut between lines. A chunk's spans are its
/// paragraphs' regions, which the host merges into one citation of the
/// page or image. Paragraphs are visual units, so chunks do not overlap.
pub fn chunk_regions(doc: &Document, policy: &ChunkPolicy) -> Vec<Chunk> {
    let target = policy.target_tokens.max(1);
    let mut chunks = Vec::new();
    let mut pack = Pack::default();
    let mut pack_key = None;
    for (index, block) in doc.blocks.iter().enumerate() {
        let Some(key) = region_key(block) else {
            continue;
        };
        for piece in pieces_of(index as u32, block, target) {
            let fits = pack.tokens + piece.tokens <= target;
            if !pack.blocks.is_empty() && (pack_key != Some(key) || !fits) {
                chunks.extend(std::mem::take(&mut pack).into_chunk(doc));
            }
            pack_key = Some(key);
            pack.add(piece);
        }
    }
    chunks.extend(pack.into_chunk(doc));
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, x: u32, y: u32, width: u32, height: u32, confidence: f32) -> TextLine {
        TextLine {
            text: text.into(),
            x,
            y,
            width,
            height,
            confidence,
        }
    }

    fn region(block: &Block) -> &Region {
        match &block.span {
            Span::Region(r) => r,
            other => panic!("not a region: {other:?}"),
        }
    }

    /// A page as an engine reads it: a heading, an indented paragraph of
    /// three lines, a second paragraph after a blank gap, a low-confidence
    /// speck, then a right-hand column that starts back at the top.
    fn page_lines() -> Vec<TextLine> {
        vec![
            line("Quarterly report", 100, 50, 400, 40, 0.96),
            line(
                "  Sales rose in every region, led by",
                140,
                120,
                600,
                20,
                0.91,
            ),
            line(
                "Seoul and Busan; 서울 매출은 12% 늘었다.",
                100,
                146,
                640,
                20,
                0.88,
            ),
            line("Costs were flat.", 100, 172, 300, 20, 0.93),
            line("The outlook is well-", 100, 230, 420, 20, 0.90),
            line("balanced.", 100, 256, 160, 20, 0.85),
            line("~", 700, 300, 10, 10, 0.12),
            line("", 100, 330, 50, 20, 0.99),
            line("Right column", 800, 120, 300, 20, 0.80),
        ]
    }

    #[test]
    fn lines_group_into_paragraphs_with_boxes_in_original_pixels() {
        let blocks = blocks_from_lines(&page_lines(), 2.0, Some(3), &["Scan".to_string()]);
        let texts: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "Quarterly report",
                "Sales rose in every region, led by\nSeoul and Busan; 서울 매출은 12% 늘었다.\nCosts were flat.",
                "The outlook is well-\nbalanced.",
                "Right column",
            ]
        );
        let body = region(&blocks[1]);
        assert_eq!(body.page, Some(3));
        assert_eq!(
            (body.x, body.y, body.width, body.height),
            (200, 240, 1280, 144)
        );
        assert!((body.confidence - 0.88).abs() < 1e-6, "least sure line");
        let heading = region(&blocks[0]);
        assert_eq!(
            (heading.x, heading.y, heading.width, heading.height),
            (200, 100, 800, 80)
        );
        assert!(blocks.iter().all(|b| b.kind == BlockKind::Paragraph));
        assert!(
            blocks
                .iter()
                .all(|b| b.heading_path == vec!["Scan".to_string()])
        );
    }

    #[test]
    fn fractional_scales_round_boxes_outwards() {
        let blocks = blocks_from_lines(&[line("x", 3, 3, 1, 1, 0.9)], 1.5, None, &[]);
        let r = region(&blocks[0]);
        assert_eq!((r.x, r.y, r.width, r.height, r.page), (4, 4, 2, 2, None));
        let blocks = blocks_from_lines(&[line("x", 3, 3, 1, 1, 0.9)], f64::NAN, None, &[]);
        assert_eq!(region(&blocks[0]).width, 1, "a bad scale is taken as 1");
    }

    #[test]
    fn nothing_readable_gives_no_blocks() {
        let junk = [line(" ", 0, 0, 9, 9, 0.9), line("a", 0, 0, 9, 9, f32::NAN)];
        assert!(blocks_from_lines(&junk, 1.0, None, &[]).is_empty());
        assert!(blocks_from_lines(&[], 1.0, None, &[]).is_empty());
    }

    fn doc(blocks: Vec<Block>) -> Document {
        Document {
            title: None,
            lang: None,
            blocks,
            metadata: vec![],
        }
    }

    #[test]
    fn regions_pack_per_page_and_cite_their_paragraphs() {
        let mut blocks = blocks_from_lines(&page_lines(), 1.0, Some(1), &[]);
        let page_two = blocks_from_lines(&page_lines()[..2], 1.0, Some(2), &[]);
        blocks.push(Block {
            kind: BlockKind::Page,
            heading_path: vec![],
            span: Span::Page(2),
            text: "text layer".into(),
            level: None,
            lang: None,
        });
        blocks.extend(page_two);
        let doc = doc(blocks);
        let chunks = chunk_regions(
            &doc,
            &ChunkPolicy {
                target_tokens: 500,
                overlap_tokens: 50,
            },
        );
        assert_eq!(
            chunks.len(),
            2,
            "one chunk per page; the page block is left alone"
        );
        assert_eq!(chunks[0].blocks, vec![0, 1, 2, 3]);
        assert_eq!(chunks[0].spans.len(), 4);
        assert!(chunks[0].text.starts_with("Quarterly report\n\nSales rose"));
        assert!(chunks[0].text.ends_with("balanced.\n\nRight column"));
        assert_eq!(chunks[1].blocks, vec![5, 6]);
        assert!(
            chunks[1]
                .spans
                .iter()
                .all(|s| matches!(s, Span::Region(r) if r.page == Some(2)))
        );
    }

    #[test]
    fn a_paragraph_over_the_target_is_cut_between_lines() {
        let lines: Vec<TextLine> = (0..40)
            .map(|i| {
                line(
                    &format!("line {i} of a dense scan"),
                    10,
                    10 + i * 22,
                    500,
                    20,
                    0.9,
                )
            })
            .collect();
        let blocks = blocks_from_lines(&lines, 1.0, None, &[]);
        assert_eq!(blocks.len(), 1);
        let chunks = chunk_regions(
            &doc(blocks),
            &ChunkPolicy {
                target_tokens: 30,
                overlap_tokens: 0,
            },
        );
        assert!(chunks.len() > 5);
        for c in &chunks {
            assert!(estimate_tokens(&c.text) <= 30, "{}", c.text);
            assert_eq!(c.blocks, vec![0]);
            assert_eq!(c.spans.len(), 1);
        }
        let joined: Vec<String> = chunks.iter().map(|c| c.text.clone()).collect();
        assert_eq!(
            joined.join("\n"),
            (0..40)
                .map(|i| format!("line {i} of a dense scan"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    #[cfg(feature = "image")]
    #[test]
    fn prepare_grays_downscales_and_keeps_the_scale() {
        use image::metadata::Orientation;
        let rgb = image::RgbImage::from_pixel(400, 300, image::Rgb([255, 0, 0]));
        let prepared = prepare_within(
            image::DynamicImage::ImageRgb8(rgb),
            Orientation::NoTransforms,
            30_000,
        );
        assert_eq!((prepared.image.width, prepared.image.height), (200, 150));
        assert_eq!(prepared.image.pixels.len(), 200 * 150);
        assert!((prepared.scale - 2.0).abs() < 1e-9);
        // Rec. 709 luma of pure red.
        assert!(
            prepared
                .image
                .pixels
                .iter()
                .all(|&p| (50..=60).contains(&p))
        );

        let small = image::GrayImage::from_pixel(10, 20, image::Luma([7]));
        let kept = prepare_within(
            image::DynamicImage::ImageLuma8(small),
            Orientation::Rotate90,
            1_000,
        );
        assert_eq!(
            (kept.image.width, kept.image.height, kept.scale),
            (20, 10, 1.0)
        );
    }

    #[cfg(feature = "image")]
    #[test]
    fn transparency_is_composed_over_white() {
        use image::metadata::Orientation;
        let mut rgba = image::RgbaImage::from_pixel(2, 1, image::Rgba([0, 0, 0, 0]));
        rgba.put_pixel(1, 0, image::Rgba([0, 0, 0, 255]));
        let prepared = prepare_within(
            image::DynamicImage::ImageRgba8(rgba),
            Orientation::NoTransforms,
            100,
        );
        assert_eq!(prepared.image.pixels, vec![255, 0]);
    }

    #[cfg(feature = "image")]
    #[test]
    fn fitting_never_exceeds_the_bound() {
        for (w, h, bound) in [
            (100_000, 3, 1_000),
            (7, 13, 10),
            (40_000, 40_000, 40_000_000),
            (1, 1, 1),
        ] {
            let (fw, fh) = fit_within(w, h, bound);
            assert!(
                u64::from(fw) * u64::from(fh) <= bound.max(1),
                "{w}×{h} → {fw}×{fh}"
            );
            assert!(fw >= 1 && fh >= 1);
        }
        assert_eq!(fit_within(8000, 6000, 12_000_000), (4000, 3000));
    }
}
