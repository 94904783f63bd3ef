//! Results of OCR kept on disk, so a re-ingest never reads an unchanged
//! image twice: [`CachedOcr`] wraps any engine and keys each result by
//! blake3 over the engine's [`Fingerprint`] (library version, languages and
//! their data, settings) and the image (width, height, pixels).
//!
//! One small JSON file per image under `<dir>/<2 hex>/<62 hex>.json`,
//! written to a temporary file and renamed into place (a reader sees the
//! old entry, the new one or none, never half of one). An entry that does
//! not parse or names another key is read as missing and written again.
//! Only answers are kept — lines, or no lines for a page without text —
//! never errors: an image that ran past its budget is tried again next
//! time.
//!
//! Bounded: when the entries pass `max_bytes` the least recently used are
//! removed (a hit refreshes an entry's time), checked on the first write
//! and then every [`PRUNE_EVERY`] writes. A page of text is 1-5 KB, so the
//! default 256 MiB holds ~100 000 pages.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::{GrayImage, OcrEngine, OcrError, TextLine, check_image};

/// Default bound on the cache's size on disk.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;
/// Writes between two size checks.
pub const PRUNE_EVERY: u64 = 512;
/// Format of an entry; a change makes every older entry a miss.
const ENTRY_VERSION: u32 = 1;

/// What an engine's results depend on besides the image: two engines with
/// the same fingerprint read the same pixels the same way.
pub trait Fingerprint {
    /// The engine's version and settings as a string; an error when the
    /// engine cannot run (its results are then not cached either).
    fn fingerprint(&self) -> Result<String, OcrError>;
}

impl Fingerprint for super::tesseract::TesseractEngine {
    fn fingerprint(&self) -> Result<String, OcrError> {
        super::tesseract::TesseractEngine::fingerprint(self)
    }
}

/// Counts since the cache was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Images answered from disk.
    pub hits: u64,
    /// Images the engine read.
    pub misses: u64,
    /// Entries written.
    pub stored: u64,
    /// Entries removed to stay under the bound.
    pub pruned: u64,
}

/// An engine whose answers are kept on disk.
#[derive(Debug)]
pub struct CachedOcr<E> {
    engine: E,
    dir: PathBuf,
    max_bytes: u64,
    hits: AtomicU64,
    misses: AtomicU64,
    stored: AtomicU64,
    pruned: AtomicU64,
}

/// One entry on disk.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    version: u32,
    /// The key, hex: an entry renamed or copied to another name is a miss.
    key: String,
    lines: Vec<Line>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Line {
    text: String,
    x: u32,
    y: u32,
    w: u32,
    h: u32,
    /// Confidence, 0 to 1.
    c: f32,
}

impl<E: OcrEngine + Fingerprint> CachedOcr<E> {
    /// Keep `engine`'s answers under `dir` (created on first write), at most
    /// [`DEFAULT_MAX_BYTES`].
    pub fn new(engine: E, dir: impl Into<PathBuf>) -> CachedOcr<E> {
        CachedOcr::with_max_bytes(engine, dir, DEFAULT_MAX_BYTES)
    }

    /// As [`CachedOcr::new`], bounded to `max_bytes` on disk.
    pub fn with_max_bytes(engine: E, dir: impl Into<PathBuf>, max_bytes: u64) -> CachedOcr<E> {
        CachedOcr {
            engine,
            dir: dir.into(),
            max_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            stored: AtomicU64::new(0),
            pruned: AtomicU64::new(0),
        }
    }

    /// The engine underneath.
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// Counts since the cache was opened.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            pruned: self.pruned.load(Ordering::Relaxed),
        }
    }

    /// Read `image`, from disk when an entry for it and this engine is
    /// there; `true` with the lines when they came from disk.
    fn read_traced(&self, image: &GrayImage) -> Result<(Vec<TextLine>, bool), OcrError> {
        check_image(image, self.engine.max_pixels())?;
        let Ok(fingerprint) = self.engine.fingerprint() else {
            // The engine cannot run: let it say why.
            return self.engine.recognize(image).map(|lines| (lines, false));
        };
        let key = cache_key(&fingerprint, image);
        let path = self.entry_path(&key);
        if let Some(lines) = read_entry(&path, &key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            // Refresh its time: pruning removes the least recently used.
            if let Ok(file) = std::fs::File::options().append(true).open(&path) {
                let _ = file.set_modified(SystemTime::now());
            }
            return Ok((lines, true));
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let lines = self.engine.recognize(image)?;
        match write_entry(&path, &key, &lines) {
            Ok(()) => {
                let stored = self.stored.fetch_add(1, Ordering::Relaxed);
                if stored.is_multiple_of(PRUNE_EVERY) {
                    match prune(&self.dir, self.max_bytes) {
                        Ok(removed) => {
                            self.pruned.fetch_add(removed, Ordering::Relaxed);
                        }
                        Err(e) => {
                            tracing::warn!(dir = %self.dir.display(), error = %e, "OCR cache: pruning failed")
                        }
                    }
                }
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "OCR cache: entry not written")
            }
        }
        Ok((lines, false))
    }

    fn entry_path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{}.json", &key[2..]))
    }
}

impl<E: OcrEngine + Fingerprint> OcrEngine for CachedOcr<E> {
    fn max_pixels(&self) -> u64 {
        self.engine.max_pixels()
    }

    fn recognize(&self, image: &GrayImage) -> Result<Vec<TextLine>, OcrError> {
        self.read_traced(image).map(|(lines, _)| lines)
    }

    fn recognize_traced(&self, image: &GrayImage) -> Result<(Vec<TextLine>, bool), OcrError> {
        self.read_traced(image)
    }
}

/// blake3 over the fingerprint (length-prefixed) and the image, hex.
fn cache_key(fingerprint: &str, image: &GrayImage) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"kebab-ocr-cache\0");
    hasher.update(&(fingerprint.len() as u64).to_le_bytes());
    hasher.update(fingerprint.as_bytes());
    hasher.update(&image.width.to_le_bytes());
    hasher.update(&image.height.to_le_bytes());
    hasher.update(&image.pixels);
    hasher.finalize().to_hex().to_string()
}

/// The entry's lines when it is there, parses and is for `key`.
fn read_entry(path: &Path, key: &str) -> Option<Vec<TextLine>> {
    let bytes = std::fs::read(path).ok()?;
    let entry: Entry = serde_json::from_slice(&bytes).ok()?;
    if entry.version != ENTRY_VERSION || entry.key != key {
        return None;
    }
    Some(
        entry
            .lines
            .into_iter()
            .map(|l| TextLine {
                text: l.text,
                x: l.x,
                y: l.y,
                width: l.w,
                height: l.h,
                confidence: l.c,
            })
            .collect(),
    )
}

/// Write the entry through a temporary file in the same folder, renamed
/// over whatever was there.
fn write_entry(path: &Path, key: &str, lines: &[TextLine]) -> std::io::Result<()> {
    let folder = path
        .parent()
        .ok_or_else(|| std::io::Error::other("an entry path without a folder"))?;
    std::fs::create_dir_all(folder)?;
    let entry = Entry {
        version: ENTRY_VERSION,
        key: key.to_string(),
        lines: lines
            .iter()
            .map(|l| Line {
                text: l.text.clone(),
                x: l.x,
                y: l.y,
                w: l.width,
                h: l.height,
                c: if l.confidence.is_finite() {
                    l.confidence
                } else {
                    0.0
                },
            })
            .collect(),
    };
    let json = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
    let mut file = tempfile::NamedTempFile::new_in(folder)?;
    file.write_all(&json)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Remove the least recently used entries until those left take at most
/// nine tenths of `max_bytes`; nothing when already under `max_bytes`.
/// Returns how many were removed. Stray temporary files older than an hour
/// (a write cut short) go too.
pub fn prune(dir: &Path, max_bytes: u64) -> std::io::Result<u64> {
    let Ok(folders) = std::fs::read_dir(dir) else {
        return Ok(0);
    };
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    let mut total = 0u64;
    let mut removed = 0u64;
    let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
    for folder in folders.filter_map(Result::ok) {
        if !folder.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(folder.path()) else {
            continue;
        };
        for file in files.filter_map(Result::ok) {
            let Ok(meta) = file.metadata() else { continue };
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let path = file.path();
            if path.extension().is_some_and(|e| e == "json") {
                total += meta.len();
                entries.push((modified, meta.len(), path));
            } else if modified < hour_ago && std::fs::remove_file(&path).is_ok() {
                removed += 1;
            }
        }
    }
    if total <= max_bytes {
        return Ok(removed);
    }
    entries.sort();
    let target = max_bytes / 10 * 9;
    for (_, len, path) in entries {
        if total <= target {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Answers one line naming the image's first pixel; counts its calls.
    struct Counting {
        calls: AtomicUsize,
        fingerprint: String,
    }

    impl OcrEngine for Counting {
        fn max_pixels(&self) -> u64 {
            1_000_000
        }
        fn recognize(&self, image: &GrayImage) -> Result<Vec<TextLine>, OcrError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if image.pixels[0] == 0 {
                return Err(OcrError::Failed("ran past 1 s".into()));
            }
            Ok(vec![TextLine {
                text: format!("첫 픽셀 {}", image.pixels[0]),
                x: 1,
                y: 2,
                width: 3,
                height: 4,
                confidence: 0.5,
            }])
        }
    }

    impl Fingerprint for Counting {
        fn fingerprint(&self) -> Result<String, OcrError> {
            Ok(self.fingerprint.clone())
        }
    }

    fn engine(fingerprint: &str) -> Counting {
        Counting {
            calls: AtomicUsize::new(0),
            fingerprint: fingerprint.into(),
        }
    }

    fn image(first: u8) -> GrayImage {
        let mut pixels = vec![255u8; 64];
        pixels[0] = first;
        GrayImage {
            width: 8,
            height: 8,
            pixels,
        }
    }

    #[test]
    fn a_second_read_of_the_same_image_comes_from_disk() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cached = CachedOcr::new(engine("v1"), dir.path());
        let (first, from_disk) = cached.recognize_traced(&image(7)).expect("reads");
        assert!(!from_disk);
        let (second, from_disk) = cached.recognize_traced(&image(7)).expect("reads");
        assert!(from_disk);
        assert_eq!(first, second);
        assert_eq!(cached.engine().calls.load(Ordering::SeqCst), 1);
        // Another image, and the same image under another engine, are misses.
        cached.recognize(&image(8)).expect("reads");
        assert_eq!(cached.engine().calls.load(Ordering::SeqCst), 2);
        let other = CachedOcr::new(engine("v2"), dir.path());
        other.recognize(&image(7)).expect("reads");
        assert_eq!(other.engine().calls.load(Ordering::SeqCst), 1);
        assert_eq!(
            cached.stats(),
            CacheStats {
                hits: 1,
                misses: 2,
                stored: 2,
                pruned: 0
            }
        );
        // A new cache over the same folder (the next ingest) hits too.
        let reopened = CachedOcr::new(engine("v1"), dir.path());
        assert_eq!(reopened.recognize(&image(7)).expect("reads"), first);
        assert_eq!(reopened.engine().calls.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn errors_are_not_kept_and_rejected_images_never_reach_the_engine() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cached = CachedOcr::new(engine("v1"), dir.path());
        assert!(cached.recognize(&image(0)).is_err());
        assert!(cached.recognize(&image(0)).is_err());
        assert_eq!(cached.engine().calls.load(Ordering::SeqCst), 2);
        let broken = GrayImage {
            width: 8,
            height: 8,
            pixels: vec![255; 3],
        };
        assert!(matches!(
            cached.recognize(&broken),
            Err(OcrError::Rejected(_))
        ));
        assert_eq!(cached.engine().calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_corrupt_entry_is_read_again_and_rewritten() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cached = CachedOcr::new(engine("v1"), dir.path());
        let lines = cached.recognize(&image(9)).expect("reads");
        let key = cache_key("v1", &image(9));
        let path = cached.entry_path(&key);
        std::fs::write(&path, b"{\"version\": 1, \"key\": tru").expect("corrupt it");
        assert_eq!(cached.recognize(&image(9)).expect("reads"), lines);
        assert_eq!(cached.engine().calls.load(Ordering::SeqCst), 2);
        // Rewritten: the next read is a hit.
        assert_eq!(cached.recognize(&image(9)).expect("reads"), lines);
        assert_eq!(cached.engine().calls.load(Ordering::SeqCst), 2);
        // An entry copied under another key's name is a miss.
        let other = cached.entry_path(&cache_key("v1", &image(10)));
        std::fs::create_dir_all(other.parent().expect("folder")).expect("mkdir");
        std::fs::copy(&path, &other).expect("copy");
        cached.recognize(&image(10)).expect("reads");
        assert_eq!(cached.engine().calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn pruning_keeps_the_cache_under_its_bound_dropping_the_oldest() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cached = CachedOcr::new(engine("v1"), dir.path());
        for first in 1..=20u8 {
            cached.recognize(&image(first)).expect("reads");
        }
        let size = |d: &Path| -> u64 {
            std::fs::read_dir(d)
                .expect("dir")
                .filter_map(Result::ok)
                .flat_map(|f| {
                    std::fs::read_dir(f.path())
                        .expect("dir")
                        .filter_map(Result::ok)
                })
                .map(|f| f.metadata().expect("meta").len())
                .sum()
        };
        let full = size(dir.path());
        // Make image 20's entry the oldest, then bound to half.
        let oldest = cached.entry_path(&cache_key("v1", &image(20)));
        std::fs::File::options()
            .append(true)
            .open(&oldest)
            .expect("open")
            .set_modified(SystemTime::UNIX_EPOCH)
            .expect("set time");
        let removed = prune(dir.path(), full / 2).expect("prunes");
        assert!(removed >= 10, "{removed}");
        assert!(size(dir.path()) <= full / 2);
        assert!(!oldest.exists());
        // Under the bound: nothing to do.
        assert_eq!(prune(dir.path(), full).expect("prunes"), 0);
    }
}
