//! The image plugin end to end but for the engine: real files (made by
//! Pillow, see `tests/fixtures/formats/image/make_images.py`) decoded,
//! turned upright and prepared, then "read" by a stand-in engine that
//! reports what it was given (size, ink, where the ink is) as one line
//! covering the whole image — so the blocks, regions, pages and metadata
//! the plugin builds are checked exactly. Natively the real engine is
//! unavailable, and the plugin says so. (Bombs: `tests/bombs.rs`.)

use kebab_plugin_image::read::{self, NO_TEXT, Ocr};
use kebab_plugin_image::{ImagePlugin, exif};
use kebab_plugin_sdk::ocr::{self, Prepared};
use kebab_plugin_sdk::{
    Block, ChunkPolicy, Document, Guest, OcrError, PluginError, Region, Span, TextLine,
};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/formats/image/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A stand-in engine: one line, the whole image, saying
/// `W×H ink N% darkest Q` (Q the darkest quarter); nothing for a blank
/// image.
fn describe(prepared: &Prepared, page: Option<u32>) -> Result<Vec<Block>, OcrError> {
    let image = &prepared.image;
    let (w, h) = (image.width, image.height);
    let dark = image.pixels.iter().filter(|&&p| p < 128).count();
    if dark == 0 {
        return Ok(Vec::new());
    }
    let quarter_ink = |qx: u32, qy: u32| {
        let mut sum = 0u64;
        for y in qy * h / 2..(qy + 1) * h / 2 {
            for x in qx * w / 2..(qx + 1) * w / 2 {
                sum += 255 - u64::from(image.pixels[(y * w + x) as usize]);
            }
        }
        sum
    };
    let quarters = [
        ("top-left", 0, 0),
        ("top-right", 1, 0),
        ("bottom-left", 0, 1),
        ("bottom-right", 1, 1),
    ];
    let darkest = quarters
        .iter()
        .max_by_key(|(_, x, y)| quarter_ink(*x, *y))
        .unwrap()
        .0;
    let percent = dark * 100 / image.pixels.len();
    let line = TextLine {
        text: format!("{w}×{h} ink {percent}% darkest {darkest}"),
        x: 0,
        y: 0,
        width: w,
        height: h,
        confidence: 0.9,
    };
    Ok(ocr::blocks_from_lines(&[line], prepared.scale, page, &[]))
}

const DESCRIBE: Ocr = Ocr {
    ready: || Ok(()),
    read: describe,
};

fn parse(name: &str) -> Result<Document, PluginError> {
    read::parse(&fixture(name), DESCRIBE)
}

fn region(block: &Block) -> Region {
    match &block.span {
        Span::Region(r) => *r,
        other => panic!("not a region: {other:?}"),
    }
}

fn meta<'a>(doc: &'a Document, key: &str) -> Option<&'a str> {
    doc.metadata
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The stand-in's percentage of ink.
fn ink(block: &Block) -> u32 {
    let after = block.text.split("ink ").nth(1).unwrap();
    after.split('%').next().unwrap().parse().unwrap()
}

#[test]
fn every_format_decodes_to_its_page() {
    for (name, format) in [
        ("text.png", "png"),
        ("text.jpg", "jpeg"),
        ("text.webp", "webp"),
        ("text.bmp", "bmp"),
        ("text.gif", "gif"),
        ("transparent.png", "png"),
    ] {
        let doc = parse(name).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(doc.blocks.len(), 1, "{name}");
        let block = &doc.blocks[0];
        assert!(block.text.starts_with("480×160 "), "{name}: {}", block.text);
        assert!(
            block.text.ends_with("darkest top-left"),
            "{name}: {}",
            block.text
        );
        // Text on white: the GIF's second (black) frame and a transparent
        // background read as black would both fail this.
        assert!((1..30).contains(&ink(block)), "{name}: {}", block.text);
        let r = region(block);
        assert_eq!(
            (r.page, r.x, r.y, r.width, r.height),
            (None, 0, 0, 480, 160),
            "{name}"
        );
        assert_eq!(meta(&doc, "format"), Some(format), "{name}");
        assert_eq!(
            (meta(&doc, "width"), meta(&doc, "height")),
            (Some("480"), Some("160")),
            "{name}"
        );
        assert_eq!(doc.title, None, "{name}");
    }
}

#[test]
fn every_tiff_page_is_read_and_cited_by_page() {
    let doc = parse("pages.tif").unwrap();
    let pages: Vec<(Option<u32>, String)> = doc
        .blocks
        .iter()
        .map(|b| {
            (
                region(b).page,
                b.text.split(" ink").next().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        pages,
        vec![
            (Some(1), "320×120".to_string()),
            (Some(2), "300×100".to_string()),
            (Some(3), "200×80".to_string()),
        ]
    );
    for block in &doc.blocks {
        assert!(
            (1..30).contains(&ink(block)),
            "G4, LZW and JPEG pages are text on white: {}",
            block.text
        );
    }
    assert_eq!(meta(&doc, "pages"), Some("3"));
    assert_eq!(meta(&doc, "format"), Some("tiff"));
    assert_eq!(
        (meta(&doc, "width"), meta(&doc, "height")),
        (Some("320"), Some("120"))
    );
}

#[test]
fn exif_orientation_turns_the_photo_upright() {
    let doc = parse("exif.jpg").unwrap();
    let block = &doc.blocks[0];
    // Stored 240×120, shown (orientation 6) 120×240 with its top-right
    // quarter black.
    assert!(block.text.starts_with("120×240 "), "{}", block.text);
    assert!(block.text.ends_with("darkest top-right"), "{}", block.text);
    assert_eq!((region(block).width, region(block).height), (120, 240));
    assert_eq!(doc.title.as_deref(), Some("Whiteboard notes"));
    assert_eq!(meta(&doc, "taken"), Some("2023-07-14T09:30:00+09:00"));
    assert_eq!(meta(&doc, "camera"), Some("Canon EOS 5D Mark IV"));
    assert_eq!(
        meta(&doc, "gps"),
        None,
        "GPS only when the gps setting is true"
    );
    assert_eq!(
        (meta(&doc, "width"), meta(&doc, "height")),
        (Some("240"), Some("120")),
        "as stored"
    );
}

#[test]
fn gps_comes_from_exif_when_allowed() {
    let facts = exif::read(&fixture("exif.jpg"));
    let (latitude, longitude) = facts.gps.unwrap();
    assert!(
        (latitude - 37.5665).abs() < 1e-4 && (longitude - 126.978).abs() < 1e-4,
        "{latitude},{longitude}"
    );
    let kind = kebab_plugin_image::decode::kind(&fixture("exif.jpg")).unwrap();
    let with = read::metadata(kind, None, 1, &facts, true);
    assert!(
        with.contains(&("gps".to_string(), "37.566500,126.978000".to_string())),
        "{with:?}"
    );
    let without = read::metadata(kind, None, 1, &facts, false);
    assert!(!without.iter().any(|(k, _)| k == "gps"));
    assert_eq!(exif::read(&fixture("text.png")), exif::Facts::default());
}

#[test]
fn large_images_are_downscaled_and_cited_in_their_own_pixels() {
    // 8000×6000 (48 megapixels) is over the host's 40 million.
    let mut big = image::GrayImage::from_pixel(8000, 6000, image::Luma([255]));
    for y in 100..400 {
        for x in 100..2000 {
            big.put_pixel(x, y, image::Luma([0]));
        }
    }
    let mut png = Vec::new();
    big.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    drop(big);
    let doc = read::parse(&png, DESCRIBE).unwrap();
    let block = &doc.blocks[0];
    assert!(block.text.starts_with("7302×5477 "), "{}", block.text);
    let r = region(block);
    assert_eq!((r.x, r.y, r.width), (0, 0, 8000));
    assert!((6000..=6001).contains(&r.height), "{}", r.height);
}

#[test]
fn blank_and_unreadable_images_say_why() {
    assert!(matches!(parse("blank.png"), Err(PluginError::Unsupported(m)) if m == NO_TEXT));
    let truncated = parse("truncated.png");
    assert!(
        matches!(&truncated, Err(PluginError::Malformed(m)) if m.starts_with("corrupt image")),
        "{truncated:?}"
    );
    assert!(matches!(
        read::parse(b"GIF89a", DESCRIBE),
        Err(PluginError::Malformed(_))
    ));
    assert!(
        matches!(read::parse(b"just text", DESCRIBE), Err(PluginError::Malformed(m)) if m.contains("unknown signature"))
    );
    let mut cut_tiff = fixture("pages.tif");
    cut_tiff.truncate(200);
    assert!(matches!(
        read::parse(&cut_tiff, DESCRIBE),
        Err(PluginError::Malformed(_))
    ));
}

#[test]
fn without_the_host_ocr_is_unavailable() {
    let answer = ImagePlugin::parse("text.png".into(), fixture("text.png"));
    assert!(
        matches!(&answer, Err(PluginError::Unsupported(m)) if m.starts_with("OCR unavailable: ")),
        "{answer:?}"
    );
    let answer = ImagePlugin::parse("pages.tif".into(), fixture("pages.tif"));
    assert!(
        matches!(&answer, Err(PluginError::Unsupported(m)) if m.starts_with("OCR unavailable: ")),
        "{answer:?}"
    );
}

#[test]
fn regions_chunk_a_page_at_a_time() {
    let doc = parse("pages.tif").unwrap();
    let chunks = ImagePlugin::chunk_document(
        doc,
        ChunkPolicy {
            target_tokens: 400,
            overlap_tokens: 40,
        },
    )
    .unwrap();
    assert_eq!(chunks.len(), 3);
    for (i, chunk) in chunks.iter().enumerate() {
        assert_eq!(chunk.blocks, vec![i as u32]);
        assert!(matches!(&chunk.spans[..], [Span::Region(r)] if r.page == Some(i as u32 + 1)));
    }
    let info = ImagePlugin::info();
    assert_eq!(
        (info.name.as_str(), info.chunker_version.as_str()),
        ("image", "image-ocr-v1")
    );
    assert_eq!(info.parser_version, "image-0.25-v1");
    assert!(info.accepts_binary && info.handles.contains(&"*.jpe".to_string()));
}
