//! The Tesseract engine on real renders (`tests/fixtures/ocr`, made by
//! `make_scans.py`): Korean and English lines clean, turned, skewed,
//! blurred, at 100 dpi, photographed, and a page with no text. Needs
//! Tesseract 5 with the Hangul script and OSD data (`scripts/setup-ocr.sh`
//! installs them).
//!
//! Error rates are characters wrong over characters expected, spaces
//! counted (runs of whitespace as one). Measured with Tesseract 5.3.0
//! (Debian 12): 0 % on every fixture but the photo (0.8 %); the bounds
//! below leave room for other Tesseract releases.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kebab_plugin_host::ocr::cache::CachedOcr;
use kebab_plugin_host::ocr::pixels;
use kebab_plugin_host::ocr::tesseract::{TesseractEngine, TesseractOptions};
use kebab_plugin_host::ocr::{GrayImage, OcrEngine, OcrError, TextLine};

/// Clean renders: at most this share of characters wrong.
const CLEAN_CER: f64 = 0.02;
/// Turned, skewed, blurred, small and photographed renders.
const HARD_CER: f64 = 0.05;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ocr")
}

fn load(name: &str) -> GrayImage {
    let path = fixtures().join(name);
    let decoded = image::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_luma8();
    GrayImage {
        width: decoded.width(),
        height: decoded.height(),
        pixels: decoded.into_raw(),
    }
}

fn expected() -> String {
    std::fs::read_to_string(fixtures().join("expected.txt")).expect("expected.txt")
}

fn options() -> TesseractOptions {
    TesseractOptions {
        workers: 2,
        ..TesseractOptions::default()
    }
}

/// The default engine, checked to be installed as setup-ocr.sh leaves it.
fn engine() -> TesseractEngine {
    let engine = TesseractEngine::new(options());
    let info = engine.probe().unwrap_or_else(|e| {
        panic!("Tesseract 5 with its Hangul and OSD data must be installed (run scripts/setup-ocr.sh): {e}")
    });
    assert_eq!(
        info.languages, "Hangul",
        "the default reads with the Hangul script model"
    );
    assert!(info.orientation, "osd.traineddata is installed");
    engine
}

fn text(lines: &[TextLine]) -> String {
    lines
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Character error rate: edit distance over the expected length, runs of
/// whitespace (line breaks included) read as one space.
fn cer(got: &str, want: &str) -> f64 {
    let norm = |s: &str| -> Vec<char> {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect()
    };
    let (g, w) = (norm(got), norm(want));
    let mut previous: Vec<usize> = (0..=w.len()).collect();
    for (i, a) in g.iter().enumerate() {
        let mut current = vec![i + 1; w.len() + 1];
        for (j, b) in w.iter().enumerate() {
            current[j + 1] = (previous[j + 1] + 1)
                .min(current[j] + 1)
                .min(previous[j] + usize::from(a != b));
        }
        previous = current;
    }
    previous[w.len()] as f64 / w.len().max(1) as f64
}

fn assert_boxes_inside(lines: &[TextLine], image: &GrayImage) {
    for l in lines {
        assert!(l.width > 0 && l.height > 0, "{l:?}");
        assert!(
            l.x + l.width <= image.width && l.y + l.height <= image.height,
            "{l:?} outside {}x{}",
            image.width,
            image.height
        );
        assert!((0.0..=1.0).contains(&l.confidence), "{l:?}");
    }
}

fn read_within(engine: &TesseractEngine, name: &str, bound: f64) -> Vec<TextLine> {
    let image = load(name);
    let lines = engine
        .recognize(&image)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let rate = cer(&text(&lines), &expected());
    assert!(
        rate <= bound,
        "{name}: {:.1} % of characters wrong:\n{}",
        rate * 100.0,
        text(&lines)
    );
    assert_boxes_inside(&lines, &image);
    lines
}

#[test]
fn clean_korean_and_english_read_exactly() {
    let engine = engine();
    let lines = read_within(&engine, "clean_300dpi.png", CLEAN_CER);
    assert_eq!(lines.len(), 4, "{}", text(&lines));
    assert!(
        lines[0].text.starts_with("케밥은 로컬"),
        "{}",
        lines[0].text
    );
    assert!(
        lines[1].text.starts_with("Kebab keeps"),
        "{}",
        lines[1].text
    );
    // Reading order is top to bottom.
    assert!(lines.windows(2).all(|w| w[0].y < w[1].y));
    assert!(lines.iter().all(|l| l.confidence > 0.8), "{lines:?}");
}

#[test]
fn hard_scans_read_within_their_bound() {
    let engine = engine();
    for name in ["skewed_4.png", "blurred.png", "dpi_100.png", "photo.png"] {
        let lines = read_within(&engine, name, HARD_CER);
        assert_eq!(lines.len(), 4, "{name}: {}", text(&lines));
    }
}

#[test]
fn a_turned_page_is_read_upright_and_boxed_in_its_own_pixels() {
    let engine = engine();
    let clean = load("clean_300dpi.png");
    let upright = engine.recognize(&clean).expect("reads");
    // The committed render turned a quarter counter-clockwise, and the clean
    // one turned here by one, two and three quarters clockwise.
    let mut cases = vec![(load("rotated_90.png"), 3u32)];
    for turns in 1..=3 {
        cases.push((pixels::turn(&clean, turns).0, turns));
    }
    for (image, turns) in cases {
        let lines = engine.recognize(&image).expect("reads");
        let rate = cer(&text(&lines), &expected());
        assert!(
            rate <= HARD_CER,
            "{turns} turns: {:.1} %:\n{}",
            rate * 100.0,
            text(&lines)
        );
        assert_boxes_inside(&lines, &image);
        // Each line's box is the upright line's box, turned with the page.
        let (_, to_upright) = pixels::turn(&clean, turns);
        for (line, upright_line) in lines.iter().zip(&upright) {
            let (x, y, w, h) = to_upright
                .map_box(
                    f64::from(line.x),
                    f64::from(line.y),
                    f64::from(line.x + line.width),
                    f64::from(line.y + line.height),
                    clean.width,
                    clean.height,
                )
                .expect("inside");
            let near = |a: u32, b: u32| a.abs_diff(b) <= 6;
            assert!(
                near(x, upright_line.x)
                    && near(y, upright_line.y)
                    && near(w, upright_line.width)
                    && near(h, upright_line.height),
                "{turns} turns: {line:?} maps to {x},{y} {w}x{h}, upright {upright_line:?}"
            );
        }
    }
}

#[test]
fn a_page_without_text_has_no_lines() {
    let engine = engine();
    let lines = engine.recognize(&load("blank.png")).expect("reads");
    assert!(lines.is_empty(), "{lines:?}");
}

#[test]
fn a_second_read_comes_from_the_cache() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cached = CachedOcr::new(engine(), dir.path());
    let image = load("clean_300dpi.png");
    let (first, from_disk) = cached.recognize_traced(&image).expect("reads");
    assert!(!from_disk);
    let started = std::time::Instant::now();
    let (second, from_disk) = cached.recognize_traced(&image).expect("reads");
    assert!(from_disk);
    assert_eq!(first, second);
    assert!(started.elapsed() < Duration::from_millis(500));
    let stats = cached.stats();
    assert_eq!((stats.hits, stats.misses, stats.stored), (1, 1, 1));
    // One Tesseract handle was ever made: the second read never reached it.
    assert_eq!(cached.engine().handles(), 1);
}

#[test]
fn an_image_past_its_budget_fails_and_says_so() {
    let engine = TesseractEngine::new(TesseractOptions {
        page_budget: Duration::from_millis(1),
        ..options()
    });
    match engine.recognize(&load("clean_300dpi.png")) {
        Err(OcrError::Failed(m)) => assert!(m.contains("ran past"), "{m}"),
        other => panic!("expected a budget failure, got {other:?}"),
    }
}

#[test]
fn missing_pieces_are_unavailable_with_what_to_install() {
    let image = load("clean_300dpi.png");
    let no_library = TesseractEngine::new(TesseractOptions {
        library: PathBuf::from("/nonexistent/libtesseract.so.5"),
        ..options()
    });
    match no_library.recognize(&image) {
        Err(OcrError::Unavailable(m)) => assert!(m.contains("tesseract-ocr"), "{m}"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    let no_language = TesseractEngine::new(TesseractOptions {
        languages: vec!["zzz".into()],
        ..options()
    });
    match no_language.recognize(&image) {
        Err(OcrError::Unavailable(m)) => assert!(m.contains("tesseract-ocr-zzz"), "{m}"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    let no_data = TesseractEngine::new(TesseractOptions {
        tessdata: Some(PathBuf::from("/nonexistent/tessdata")),
        ..options()
    });
    assert!(matches!(
        no_data.recognize(&image),
        Err(OcrError::Unavailable(_))
    ));
}

#[test]
fn an_image_over_the_pixel_bound_is_refused() {
    let engine = TesseractEngine::new(TesseractOptions {
        max_pixels: 100_000,
        ..options()
    });
    match engine.recognize(&load("clean_300dpi.png")) {
        Err(OcrError::Rejected(m)) => assert!(m.contains("scale it down"), "{m}"),
        other => panic!("expected Rejected, got {other:?}"),
    }
}

#[test]
fn workers_share_a_bounded_pool_of_handles() {
    let engine = Arc::new(engine());
    let image = Arc::new(load("photo.png"));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (engine, image) = (Arc::clone(&engine), Arc::clone(&image));
            std::thread::spawn(move || engine.recognize(&image))
        })
        .collect();
    for reader in readers {
        let lines = reader.join().expect("no panic").expect("reads");
        assert!(
            cer(&text(&lines), &expected()) <= HARD_CER,
            "{}",
            text(&lines)
        );
    }
    assert!(
        engine.handles() <= 2,
        "{} handles for 2 workers",
        engine.handles()
    );
}

#[test]
fn odd_images_get_an_answer() {
    let engine = engine();
    let gray = |width: u32, height: u32, pixel: &dyn Fn(u32, u32) -> u8| GrayImage {
        width,
        height,
        pixels: (0..height)
            .flat_map(|y| (0..width).map(move |x| (x, y)))
            .map(|(x, y)| pixel(x, y))
            .collect(),
    };
    let mut seed = 0x2545_f491_u32;
    let mut noise = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed >> 24) as u8
    };
    let noisy: Vec<u8> = (0..400 * 300).map(|_| noise()).collect();
    let cases = [
        gray(1, 1, &|_, _| 255),
        gray(1, 1, &|_, _| 0),
        gray(2, 3, &|x, _| if x == 0 { 0 } else { 255 }),
        gray(5000, 2, &|x, _| if x % 7 == 0 { 0 } else { 255 }),
        gray(2, 5000, &|_, y| if y % 7 == 0 { 0 } else { 255 }),
        gray(300, 300, &|_, _| 0),
        gray(300, 300, &|x, y| {
            if (x / 10 + y / 10) % 2 == 0 { 0 } else { 255 }
        }),
        GrayImage {
            width: 400,
            height: 300,
            pixels: noisy,
        },
    ];
    for image in &cases {
        match engine.recognize(image) {
            Ok(lines) => assert_boxes_inside(&lines, image),
            Err(OcrError::Failed(_)) => {}
            Err(e) => panic!("{}x{}: {e}", image.width, image.height),
        }
    }
}
