//! Decompression bombs: headers claiming gigapixels are refused from the
//! header, before any pixel buffer exists. A counting allocator measures
//! the most bytes live during the calls (this file holds one test, so no
//! other test allocates meanwhile).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use kebab_plugin_image::read::{self, Ocr};
use kebab_plugin_sdk::PluginError;

/// Counts the bytes live at once.
struct Peak;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Peak = Peak;

/// An engine that is never reached: bombs stop before OCR.
const UNREACHED: Ocr = Ocr {
    ready: || Ok(()),
    read: |_, _| panic!("a bomb reached the engine"),
};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/formats/image/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The CRC-32 of PNG chunks.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// `text.png` whose header claims `width × height`.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut png = fixture("text.png");
    // Signature (8), IHDR length (4) and type (4), then width and height.
    png[16..20].copy_from_slice(&width.to_be_bytes());
    png[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32(&png[12..29]);
    png[29..33].copy_from_slice(&crc.to_be_bytes());
    png
}

/// `text.jpg` whose frame header claims `width × height`.
fn jpeg_claiming(width: u16, height: u16) -> Vec<u8> {
    let mut jpeg = fixture("text.jpg");
    // Walk the marker segments to the baseline frame header (SOF0).
    let mut sof = 2;
    while jpeg[sof + 1] != 0xc0 {
        sof += 2 + usize::from(u16::from_be_bytes([jpeg[sof + 2], jpeg[sof + 3]]));
    }
    // Marker (2), length (2), precision (1), then height and width.
    jpeg[sof + 5..sof + 7].copy_from_slice(&height.to_be_bytes());
    jpeg[sof + 7..sof + 9].copy_from_slice(&width.to_be_bytes());
    jpeg
}

#[test]
fn bombs_are_refused_from_their_header() {
    let png = png_claiming(100_000, 100_000);
    let jpeg = jpeg_claiming(65_535, 65_535);
    let wide = png_claiming(100_001, 1);
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let png_answer = read::parse(&png, UNREACHED);
    let jpeg_answer = read::parse(&jpeg, UNREACHED);
    let wide_answer = read::parse(&wide, UNREACHED);
    let peak = PEAK.load(Ordering::Relaxed) - before;
    assert!(
        matches!(&png_answer, Err(PluginError::Malformed(m)) if m == "image of 100000×100000 pixels is over the 192 MiB decoding bound"),
        "{png_answer:?}"
    );
    assert!(
        matches!(&jpeg_answer, Err(PluginError::Malformed(m)) if m == "image of 65535×65535 pixels is over the 192 MiB decoding bound"),
        "{jpeg_answer:?}"
    );
    assert!(
        matches!(&wide_answer, Err(PluginError::Malformed(m)) if m.contains("100001×1") && m.contains("side bound")),
        "{wide_answer:?}"
    );
    assert!(peak < 4 << 20, "{peak} bytes live at the peak");
}
