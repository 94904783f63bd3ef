//! The OCR engine behind the `ocr` import: Tesseract 5 through its C API,
//! loaded at run time (`capi`), so kebab starts and works where Tesseract
//! is not installed — every image then answers `Unavailable` with the
//! packages to install.
//!
//! A page goes through: even light (a photographed page,
//! `pixels::even_light`) → layout analysis (text line boxes, baselines) →
//! orientation when the lines stand upright (a page turned a quarter) or
//! the read comes back unsure (upside down): Tesseract's OSD on its own
//! handle, the pixels turned here → level a skew over one degree and
//! enlarge small text, both decided from the layout → Sauvola thresholding
//! where the light was uneven, its window sized from the text height →
//! recognition under the page's deadline → syllables Tesseract split
//! joined again, boxes mapped back to the image as given. An upright page
//! that needs none of this is laid out once and read once.
//!
//! Initialised handles are pooled (at most `workers`, created on first
//! need, ~30 MB each with the Hangul model, plus ~7 bytes a pixel while a
//! page is read): a `TessBaseAPI` is not thread-safe and takes 0.1-0.4 s
//! to load its languages. Tesseract's own OpenMP threads are turned off
//! (`capi::Api::limit_openmp`): the pool already reads one page per
//! worker, and on a busy machine those threads spin (measured: 2.6 s of
//! CPU a page with, 8.5 s without).
//!
//! Useful for: printed pages, scanned or photographed, in the languages
//! whose data is installed. Not useful for: handwriting, vertical CJK text,
//! tables as structure (lines come back in reading order, cells as text).

mod capi;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use self::capi::{
    Api, BaseApi, LayoutLine, OEM_LSTM_ONLY, OEM_TESSERACT_ONLY, PSM_AUTO, PSM_OSD_ONLY, RawWord,
    Rect,
};
use super::pixels::{self, Affine};
use super::{GrayImage, OcrEngine, OcrError, TextLine, check_image};

/// The host's default pixel bound; the SDK's native `max_pixels()` answers
/// the same, so plugins scale the same in tests as under kebab.
pub const DEFAULT_MAX_PIXELS: u64 = 40_000_000;
/// The default time one image may take.
pub const DEFAULT_PAGE_BUDGET_MS: u64 = 30_000;
/// The default time the images of one file may take together.
pub const DEFAULT_FILE_BUDGET_SECS: u64 = 600;
/// `page_budget_ms` bounds: a tenth of a second to ten minutes.
pub const PAGE_BUDGET_MS_RANGE: (u64, u64) = (100, 600_000);
/// `max_pixels` bounds: from a thumbnail to 100 MP (A3 at 1200 dpi is
/// 70 MP; a page being read costs ~7 bytes a pixel, measured at A4 300 dpi).
pub const MAX_PIXELS_RANGE: (u64, u64) = (10_000, 100_000_000);
/// Most Tesseract handles kept (each holds its languages: +28 MB for the
/// Hangul model, +144 MB for kor+eng+jpn+chi_sim+chi_tra).
pub const MAX_WORKERS: usize = 64;

/// Tesseract's Hangul script model (Debian `tesseract-ocr-script-hang`):
/// Korean and Latin text in one network. The default when installed: on an
/// A4 page of Korean and English lines it misreads 1 % of the characters
/// against 5 % for `kor+eng` (which reads some Korean words as English
/// letters, `글자를` → `SAPS`), in 60 % of the time (2.6 s of CPU against
/// 4.5 s); English alone it reads as well as `eng`.
pub const HANGUL_SCRIPT: &str = "Hangul";
/// Languages a default picks next, in this order, when their data is
/// installed (and the Hangul model is not).
pub const PREFERRED_LANGUAGES: &[&str] = &["kor", "eng"];
/// Languages a default falls back on when none of the above is installed.
/// Not added beside them: each language read together costs time on every
/// page (over kor+eng alone: +27 % with jpn, +44 % with chi_sim, +120 %
/// with jpn, chi_sim and chi_tra; scripts/bench_ocr.sh).
pub const FALLBACK_LANGUAGES: &[&str] = &["jpn", "chi_sim", "chi_tra"];
/// Data files that are not a language to read text in.
const NOT_LANGUAGES: &[&str] = &["osd", "equ"];

/// Where Debian's `tesseract-ocr-*` packages put the language data, then
/// other common places.
const TESSDATA_DIRS: &[&str] = &[
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/opt/homebrew/share/tessdata",
];

/// The library's file name, found the way the dynamic loader finds it.
#[cfg(target_os = "macos")]
pub const DEFAULT_LIBRARY: &str = "libtesseract.5.dylib";
/// The library's file name, found the way the dynamic loader finds it.
#[cfg(not(target_os = "macos"))]
pub const DEFAULT_LIBRARY: &str = "libtesseract.so.5";

/// Orientation confidence below which a page is read as it is: Tesseract
/// reports ~7 on a few lines of clean text and under 1 where it has no
/// idea (a blank page, a few words).
const MIN_ORIENTATION_CONFIDENCE: f32 = 2.0;
/// A read whose lines' mean confidence (by characters) is under this may be
/// of a page upside down: upright text reads at 0.85-0.97, turned text at
/// 0.0-0.4.
const LOW_CONFIDENCE: f32 = 0.5;
/// Skew under this is left to Tesseract's own line finding (radians; one
/// degree).
const MIN_SKEW: f64 = std::f64::consts::PI / 180.0;
/// Text lines lower than this (median, pixels) are enlarged first...
const MIN_LINE_HEIGHT: f64 = 20.0;
/// ...to about this height.
const TARGET_LINE_HEIGHT: f64 = 36.0;
/// Words of CJK text closer than this (× the text height) are one word.
const JOIN_GAP: f64 = 0.3;
/// The most an image is enlarged.
const MAX_ENLARGE: f64 = 4.0;

/// `[ocr]`: reading text in images for plugins (scanned PDFs, photos).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct OcrConfig {
    /// Read text in images when Tesseract is installed. Off: plugins are
    /// told OCR is turned off and index what else the file has.
    pub enabled: bool,
    /// Tesseract language codes (`kor`, `eng`, `jpn`, `chi_sim`, ...), read
    /// together; empty: [`default_languages`] of what is installed.
    pub languages: Vec<String>,
    /// The most time one image may take (ms).
    pub page_budget_ms: u64,
    /// The most pixels one image may have; plugins scale larger ones down.
    pub max_pixels: u64,
    /// Images read at once (one Tesseract handle each); 0: one per core.
    pub workers: usize,
    /// The most time the images of one file may take together (seconds):
    /// a PDF of a thousand scanned pages is read up to it, the rest of its
    /// pages reported.
    pub file_budget_secs: u64,
}

impl Default for OcrConfig {
    fn default() -> Self {
        OcrConfig {
            enabled: true,
            languages: Vec::new(),
            page_budget_ms: DEFAULT_PAGE_BUDGET_MS,
            max_pixels: DEFAULT_MAX_PIXELS,
            workers: 0,
            file_budget_secs: DEFAULT_FILE_BUDGET_SECS,
        }
    }
}

impl OcrConfig {
    /// Every value within its bound; the first one out names its key.
    pub fn check_bounds(&self) -> Result<(), String> {
        let (lo, hi) = PAGE_BUDGET_MS_RANGE;
        if !(lo..=hi).contains(&self.page_budget_ms) {
            return Err(format!(
                "[ocr] page_budget_ms = {} is outside its range {lo} to {hi}",
                self.page_budget_ms
            ));
        }
        let (lo, hi) = MAX_PIXELS_RANGE;
        if !(lo..=hi).contains(&self.max_pixels) {
            return Err(format!(
                "[ocr] max_pixels = {} is outside its range {lo} to {hi}",
                self.max_pixels
            ));
        }
        if !(1..=kebab_core::bounds::MAX_TIMEOUT_SECS).contains(&self.file_budget_secs) {
            return Err(format!(
                "[ocr] file_budget_secs = {} is outside its range 1 to {}",
                self.file_budget_secs,
                kebab_core::bounds::MAX_TIMEOUT_SECS
            ));
        }
        if self.workers > MAX_WORKERS {
            return Err(format!(
                "[ocr] workers = {} is over its bound of {MAX_WORKERS}",
                self.workers
            ));
        }
        for language in &self.languages {
            check_language(language).map_err(|e| format!("[ocr] languages: {e}"))?;
        }
        Ok(())
    }
}

/// A language code is a data file's stem: letters, digits, `_` and `-`
/// (`chi_sim`, `script/Hangul` is not accepted: no paths).
fn check_language(language: &str) -> Result<(), String> {
    let ok = !language.is_empty()
        && language.len() <= 32
        && language
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{language:?} is not a Tesseract language code (like kor, eng, chi_sim)"
        ))
    }
}

/// How Tesseract turns gray pixels into black and white.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thresholding {
    /// One threshold for the page (Otsu), a threshold per neighbourhood
    /// (Sauvola) where the light was uneven. On a photographed A4 page Otsu
    /// loses the shaded side (6.7 % of the characters wrong, Sauvola 0.7 %);
    /// on a clean scan Sauvola's second layout pass costs 20 % more time
    /// for 0.6 % wrong instead of 1.0 %.
    Auto,
    /// Otsu on every page.
    Otsu,
    /// Sauvola on every page, its window sized from the text height.
    Sauvola,
}

/// Everything the engine is built with; [`TesseractOptions::from_config`]
/// makes the host's choice from `[ocr]`, the rest stays at its measured
/// default.
#[derive(Debug, Clone, PartialEq)]
pub struct TesseractOptions {
    /// The library to load: a file name the dynamic loader searches for,
    /// or a path.
    pub library: PathBuf,
    /// The `tessdata` directory; `None`: `TESSDATA_PREFIX`, then Debian's.
    pub tessdata: Option<PathBuf>,
    /// Languages read together; empty: [`default_languages`].
    pub languages: Vec<String>,
    /// The most time one image may take.
    pub page_budget: Duration,
    /// The most pixels one image may have.
    pub max_pixels: u64,
    /// The most Tesseract handles (images read at once).
    pub workers: usize,
    /// Detect and correct a page turned by 90°, 180° or 270° (needs
    /// `osd.traineddata`; without it pages are read as they are).
    pub orientation: bool,
    /// Even out uneven light before thresholding.
    pub even_light: bool,
    /// Level a skew over one degree before recognition.
    pub deskew: bool,
    /// Enlarge an image whose text lines are under 20 px high.
    pub enlarge_small_text: bool,
    /// The thresholding method.
    pub thresholding: Thresholding,
    /// Run Tesseract's OpenMP regions on one thread (the pool already reads
    /// one image per worker).
    pub single_threaded: bool,
}

impl Default for TesseractOptions {
    fn default() -> Self {
        TesseractOptions::from_config(&OcrConfig::default())
    }
}

impl TesseractOptions {
    /// The engine `[ocr]` asks for.
    pub fn from_config(config: &OcrConfig) -> TesseractOptions {
        let workers = if config.workers == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            config.workers
        };
        TesseractOptions {
            library: PathBuf::from(DEFAULT_LIBRARY),
            tessdata: None,
            languages: config.languages.clone(),
            page_budget: Duration::from_millis(config.page_budget_ms),
            max_pixels: config.max_pixels,
            workers: workers.clamp(1, MAX_WORKERS),
            orientation: true,
            even_light: true,
            deskew: true,
            enlarge_small_text: true,
            thresholding: Thresholding::Auto,
            single_threaded: true,
        }
    }
}

/// The `tessdata` directory: `TESSDATA_PREFIX` when it names a directory,
/// else the first of Debian's and other usual places that exists.
pub fn find_tessdata() -> Option<PathBuf> {
    if let Some(prefix) = std::env::var_os("TESSDATA_PREFIX") {
        let prefix = PathBuf::from(prefix);
        if prefix.is_dir() {
            return Some(prefix);
        }
    }
    TESSDATA_DIRS.iter().map(PathBuf::from).find(|p| p.is_dir())
}

/// The languages installed in `tessdata` (each `<code>.traineddata`), sorted,
/// without OSD and equation data.
pub fn installed_languages(tessdata: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(tessdata) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let code = name.strip_suffix(".traineddata")?;
            (check_language(code).is_ok() && !NOT_LANGUAGES.contains(&code))
                .then(|| code.to_string())
        })
        .collect();
    found.sort();
    found
}

/// The default languages among `installed`: the Hangul script model when
/// there ([`HANGUL_SCRIPT`]); else Korean and English, those there; else
/// the first of Japanese, Simplified and Traditional Chinese; else the
/// first installed. More languages are added only by `[ocr] languages`.
pub fn default_languages(installed: &[String]) -> Vec<String> {
    let has = |code: &str| installed.iter().any(|i| i == code);
    if has(HANGUL_SCRIPT) {
        return vec![HANGUL_SCRIPT.to_string()];
    }
    let preferred: Vec<String> = PREFERRED_LANGUAGES
        .iter()
        .filter(|c| has(c))
        .map(|c| (*c).to_string())
        .collect();
    if !preferred.is_empty() {
        return preferred;
    }
    FALLBACK_LANGUAGES
        .iter()
        .find(|c| has(c))
        .map(|c| (*c).to_string())
        .or_else(|| installed.first().cloned())
        .into_iter()
        .collect()
}

/// The Debian package that carries a language's data: `tesseract-ocr-kor`,
/// `tesseract-ocr-chi-sim`; script models (capitalised) in
/// `tesseract-ocr-script-<four letters>`.
fn language_package(code: &str) -> String {
    let script = match code {
        "Hangul" | "Hangul_vert" => Some("hang"),
        "Japanese" | "Japanese_vert" => Some("jpan"),
        "HanS" | "HanS_vert" => Some("hans"),
        "HanT" | "HanT_vert" => Some("hant"),
        "Latin" => Some("latn"),
        _ => None,
    };
    match script {
        Some(s) => format!("tesseract-ocr-script-{s}"),
        None if code.starts_with(|c: char| c.is_ascii_uppercase()) => {
            format!("the tesseract-ocr-script-* package with {code}.traineddata")
        }
        None => format!(
            "tesseract-ocr-{}",
            code.to_ascii_lowercase().replace('_', "-")
        ),
    }
}

/// What the engine loaded: the library, where its data is, what it reads.
#[derive(Debug)]
struct Loaded {
    api: Arc<Api>,
    tessdata: PathBuf,
    /// `kor+eng`.
    languages: String,
    /// `osd.traineddata` is there and the library can detect orientation.
    osd: bool,
    /// Version, languages, data file sizes and settings: what a cached
    /// result depends on.
    fingerprint: String,
    /// Handles are initialised one at a time.
    init_lock: Mutex<()>,
}

/// An engine's description once loaded, for `kebab doctor`-style reports.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineInfo {
    /// `TessVersion()`.
    pub version: String,
    /// The `tessdata` directory in use.
    pub tessdata: PathBuf,
    /// The languages read, `+`-joined.
    pub languages: String,
    /// Whether turned pages are detected (OSD data installed).
    pub orientation: bool,
    /// What cached results are keyed by besides the pixels.
    pub fingerprint: String,
}

/// One pooled worker: a recognition handle and, once a page needed it,
/// an orientation handle.
#[derive(Debug)]
struct Slot {
    main: BaseApi,
    osd: Option<BaseApi>,
}

/// A bounded pool of slots, created on first need.
#[derive(Debug)]
struct Pool {
    max: usize,
    state: Mutex<PoolState>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct PoolState {
    idle: Vec<Slot>,
    /// Slots alive: idle, lent or being created.
    live: usize,
}

/// A slot lent out; back to the pool on drop, or discarded when the read
/// that held it did not finish cleanly.
struct Lease<'a> {
    pool: &'a Pool,
    slot: Option<Slot>,
    clean: bool,
}

impl Pool {
    fn new(max: usize) -> Pool {
        Pool {
            max: max.max(1),
            state: Mutex::new(PoolState::default()),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, PoolState> {
        // A panic never happens while the lock is held (only Vec moves), but
        // a poisoned lock still holds a consistent state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An idle slot, a new one while under the bound, else wait for one.
    fn take(&self, make: impl FnOnce() -> Result<Slot, OcrError>) -> Result<Lease<'_>, OcrError> {
        let mut state = self.lock();
        loop {
            if let Some(slot) = state.idle.pop() {
                return Ok(Lease {
                    pool: self,
                    slot: Some(slot),
                    clean: false,
                });
            }
            if state.live < self.max {
                state.live += 1;
                drop(state);
                // Counted as live from here; an empty lease gives the count
                // back if `make` fails or panics.
                let mut lease = Lease {
                    pool: self,
                    slot: None,
                    clean: false,
                };
                lease.slot = Some(make()?);
                return Ok(lease);
            }
            state = self.freed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Slots alive now (idle or lent).
    fn live(&self) -> usize {
        self.lock().live
    }
}

impl Lease<'_> {
    fn slot(&mut self) -> Result<&mut Slot, OcrError> {
        self.slot
            .as_mut()
            .ok_or_else(|| OcrError::Failed("internal: a lease without its handle".into()))
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut state = self.pool.lock();
        match self.slot.take() {
            Some(slot) if self.clean => state.idle.push(slot),
            // Dropped outside the lock below: End/Delete can take a while.
            other => {
                state.live -= 1;
                drop(state);
                drop(other);
                self.pool.freed.notify_one();
                return;
            }
        }
        drop(state);
        self.pool.freed.notify_one();
    }
}

/// Tesseract 5 as kebab's [`OcrEngine`]. Cheap to build: the library and
/// languages load on the first image (or [`TesseractEngine::probe`]).
pub struct TesseractEngine {
    options: TesseractOptions,
    loaded: OnceLock<Result<Loaded, OcrError>>,
    pool: Pool,
}

impl std::fmt::Debug for TesseractEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TesseractEngine")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl TesseractEngine {
    /// An engine with `options`; nothing is loaded yet.
    pub fn new(options: TesseractOptions) -> TesseractEngine {
        let pool = Pool::new(options.workers);
        TesseractEngine {
            options,
            loaded: OnceLock::new(),
            pool,
        }
    }

    /// The engine `[ocr]` asks for.
    pub fn from_config(config: &OcrConfig) -> TesseractEngine {
        TesseractEngine::new(TesseractOptions::from_config(config))
    }

    /// Load the library and check the language data now: what a read
    /// would answer `Unavailable` with, without an image.
    pub fn probe(&self) -> Result<EngineInfo, OcrError> {
        let loaded = self.load()?;
        Ok(EngineInfo {
            version: loaded.api.version(),
            tessdata: loaded.tessdata.clone(),
            languages: loaded.languages.clone(),
            orientation: loaded.osd,
            fingerprint: loaded.fingerprint.clone(),
        })
    }

    /// What a cached result of this engine depends on besides the pixels:
    /// library version, languages (and their data files' sizes), settings.
    pub fn fingerprint(&self) -> Result<String, OcrError> {
        Ok(self.load()?.fingerprint.clone())
    }

    /// Tesseract handles initialised so far (at most `workers`).
    pub fn handles(&self) -> usize {
        self.pool.live()
    }

    fn load(&self) -> Result<&Loaded, OcrError> {
        self.loaded
            .get_or_init(|| load(&self.options))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn new_slot(&self, loaded: &Loaded) -> Result<Slot, OcrError> {
        let _one_at_a_time = loaded.init_lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut main = BaseApi::new(
            &loaded.api,
            &loaded.tessdata,
            &loaded.languages,
            OEM_LSTM_ONLY,
            &quiet_variables(),
        )
        .map_err(|e| {
            OcrError::Unavailable(format!(
                "Tesseract could not load {} from {}: {e}; reinstall the language packages",
                loaded.languages,
                loaded.tessdata.display()
            ))
        })?;
        main.set_page_seg_mode(PSM_AUTO);
        Ok(Slot { main, osd: None })
    }

    /// Read one image with a slot: see the module header for the steps.
    fn read(
        &self,
        loaded: &Loaded,
        slot: &mut Slot,
        image: &GrayImage,
    ) -> Result<Vec<TextLine>, OcrError> {
        let deadline = Instant::now() + self.options.page_budget;
        if self.options.single_threaded {
            loaded.api.limit_openmp();
        }
        let detect = self.options.orientation && loaded.osd;
        // Uneven light: even it out (no pixel moves).
        let evened = if self.options.even_light {
            pixels::even_light(image)
        } else {
            None
        };
        let base = evened.as_ref().unwrap_or(image);
        let sauvola = match self.options.thresholding {
            Thresholding::Auto => evened.is_some(),
            Thresholding::Otsu => false,
            Thresholding::Sauvola => true,
        };
        // The first layout is always Otsu's, at a resolution Tesseract
        // guesses: the text height it finds sizes everything after.
        set_thresholding(&mut slot.main, false)?;
        // A page turned a quarter shows tall "lines": ask OSD before reading.
        set_image(&mut slot.main, base, 0)?;
        let layout = slot.main.analyse_layout();
        if layout.is_empty() {
            slot.main.clear();
            return Ok(Vec::new());
        }
        let mut asked_osd = false;
        let mut turns = None;
        if detect && looks_turned(&layout) {
            asked_osd = true;
            turns = self.upright_turns(loaded, slot, base)?;
        }
        let first = match turns {
            Some(turns) => self.read_turned(slot, base, turns, sauvola, image, deadline)?,
            // OSD ran on its own handle: the main one still holds this layout.
            None => self.read_laid_out(
                slot,
                base,
                Affine::IDENTITY,
                &layout,
                sauvola,
                image,
                deadline,
            )?,
        };
        // Text upside down (or turned without tall lines) reads as
        // low-confidence noise: ask OSD, and keep whichever read is surer.
        if !detect || asked_osd || mean_confidence(&first) >= LOW_CONFIDENCE {
            return Ok(first);
        }
        let Some(turns) = self.upright_turns(loaded, slot, base)? else {
            return Ok(first);
        };
        match self.read_turned(slot, base, turns, sauvola, image, deadline) {
            Ok(second) if mean_confidence(&second) > mean_confidence(&first) => Ok(second),
            // Out of time on the second read: the first is still an answer.
            Ok(_) | Err(OcrError::Failed(_)) => Ok(first),
            Err(e) => Err(e),
        }
    }

    /// Turn `base` clockwise by `turns` quarters, lay it out and read it.
    fn read_turned(
        &self,
        slot: &mut Slot,
        base: &GrayImage,
        turns: u32,
        sauvola: bool,
        input: &GrayImage,
        deadline: Instant,
    ) -> Result<Vec<TextLine>, OcrError> {
        let (turned, to_input) = pixels::turn(base, turns);
        set_thresholding(&mut slot.main, false)?;
        set_image(&mut slot.main, &turned, 0)?;
        let layout = slot.main.analyse_layout();
        if layout.is_empty() {
            slot.main.clear();
            return Ok(Vec::new());
        }
        self.read_laid_out(slot, &turned, to_input, &layout, sauvola, input, deadline)
    }

    /// Read `page` (set on the main handle and laid out as `layout`): level
    /// a skew, enlarge small text, switch to Sauvola if asked, recognise
    /// under the deadline, and map the lines back to `input` through
    /// `to_input`. The layout is reused when nothing changed.
    #[allow(clippy::too_many_arguments)]
    fn read_laid_out(
        &self,
        slot: &mut Slot,
        page: &GrayImage,
        mut to_input: Affine,
        layout: &[LayoutLine],
        sauvola: bool,
        input: &GrayImage,
        deadline: Instant,
    ) -> Result<Vec<TextLine>, OcrError> {
        let skew = if self.options.deskew {
            median_skew(layout)
        } else {
            0.0
        };
        let mut line_height = median_line_height(layout, skew);
        let mut adjusted: Option<GrayImage> = None;
        if skew.abs() >= MIN_SKEW {
            let (level, map) = pixels::rotate(page, skew);
            to_input = to_input.then_from(&map);
            adjusted = Some(level);
        }
        if self.options.enlarge_small_text && line_height > 0.0 && line_height < MIN_LINE_HEIGHT {
            let current = adjusted.as_ref().unwrap_or(page);
            let pixels_now = f64::from(current.width) * f64::from(current.height);
            let room = (self.options.max_pixels as f64 / pixels_now).sqrt();
            let factor = (TARGET_LINE_HEIGHT / line_height)
                .min(MAX_ENLARGE)
                .min(room);
            if factor >= 1.25 {
                let (big, map) = pixels::enlarge(current, factor);
                to_input = to_input.then_from(&map);
                adjusted = Some(big);
                line_height *= factor;
            }
        }
        if sauvola {
            set_thresholding(&mut slot.main, true)?;
        }
        let page = match &adjusted {
            Some(changed) => changed,
            None => page,
        };
        if adjusted.is_some() || sauvola {
            // Set again: thresholded and laid out anew, at the resolution the
            // text height suggests (Sauvola's window is a third of an inch).
            set_image(&mut slot.main, page, resolution_for(line_height))?;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            slot.main.clear();
            return Err(self.past_budget());
        }
        let left_ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        let finished = slot.main.recognize(left_ms);
        if !finished {
            slot.main.clear();
            if Instant::now() >= deadline {
                return Err(self.past_budget());
            }
            return Err(OcrError::Failed(
                "Tesseract could not read the image".into(),
            ));
        }
        let raw = slot.main.lines();
        slot.main.clear();
        Ok(raw
            .into_iter()
            .filter_map(|line| {
                let text = join_words(page, line.rect, &line.words);
                if text.is_empty() {
                    return None;
                }
                let (x, y, width, height) = to_input.map_box(
                    f64::from(line.rect.left),
                    f64::from(line.rect.top),
                    f64::from(line.rect.right),
                    f64::from(line.rect.bottom),
                    input.width,
                    input.height,
                )?;
                Some(TextLine {
                    text,
                    x,
                    y,
                    width,
                    height,
                    confidence: (line.confidence / 100.0).clamp(0.0, 1.0),
                })
            })
            .collect())
    }

    /// Clockwise quarter turns that make `image` upright, when OSD is sure
    /// it is not.
    fn upright_turns(
        &self,
        loaded: &Loaded,
        slot: &mut Slot,
        image: &GrayImage,
    ) -> Result<Option<u32>, OcrError> {
        if slot.osd.is_none() {
            let _one_at_a_time = loaded.init_lock.lock().unwrap_or_else(|p| p.into_inner());
            let osd = BaseApi::new(
                &loaded.api,
                &loaded.tessdata,
                "osd",
                OEM_TESSERACT_ONLY,
                &quiet_variables(),
            );
            // Without it the page is read as it is, not refused.
            match osd {
                Ok(mut osd) => {
                    osd.set_page_seg_mode(PSM_OSD_ONLY);
                    slot.osd = Some(osd);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "OCR: osd.traineddata did not load, pages are read as they are");
                    return Ok(None);
                }
            }
        }
        let Some(osd) = slot.osd.as_mut() else {
            return Ok(None);
        };
        set_image(osd, image, 0)?;
        let found = osd.detect_orientation();
        osd.clear();
        Ok(found.and_then(|o| {
            let turns = (360 - o.orient_deg.rem_euclid(360)) % 360 / 90;
            (turns != 0 && o.orient_conf >= MIN_ORIENTATION_CONFIDENCE).then_some(turns as u32)
        }))
    }

    fn past_budget(&self) -> OcrError {
        OcrError::Failed(format!(
            "OCR ran past {:.1} s on one image ([ocr] page_budget_ms)",
            self.options.page_budget.as_secs_f64()
        ))
    }
}

impl OcrEngine for TesseractEngine {
    fn max_pixels(&self) -> u64 {
        self.options.max_pixels
    }

    fn recognize(&self, image: &GrayImage) -> Result<Vec<TextLine>, OcrError> {
        check_image(image, self.options.max_pixels)?;
        let loaded = self.load()?;
        // Nothing here unwinds into Tesseract (there are no callbacks), but a
        // panic in the pixel work must not take the caller's thread down
        // either: it becomes an error, and the lease, unwound without being
        // marked clean, drops its handle instead of pooling it.
        let read = catch_unwind(AssertUnwindSafe(|| {
            let mut lease = self.pool.take(|| self.new_slot(loaded))?;
            let result = self.read(loaded, lease.slot()?, image);
            lease.clean = true;
            result
        }));
        read.unwrap_or_else(|_| {
            Err(OcrError::Failed(
                "the OCR engine failed on this image (a bug: please report it)".into(),
            ))
        })
    }
}

/// A line's text from its words. Tesseract puts a space between every two
/// words it found; between Hangul (and other CJK) syllables its script
/// models often find "words" a syllable long (`케 밥 은`), and their boxes
/// are too rough to tell. So at every seam between two CJK characters the
/// page itself decides: the widest run of blank columns between the two
/// words' centres is a space when it is at least 0.3 of the line's height
/// (measured on Nanum Gothic and Myeongjo at 100-300 dpi: gaps inside a
/// word up to 0.30, word spaces from 0.35; on the A4 page this brings the
/// error rate counting spaces from 12 % to 1 %).
fn join_words(page: &GrayImage, line: Rect, words: &[RawWord]) -> String {
    let mut text = String::new();
    let mut previous: Option<&RawWord> = None;
    let em = f64::from((line.bottom - line.top).max(1));
    for word in words {
        let piece = word.text.trim();
        if piece.is_empty() {
            continue;
        }
        if let Some(prev) = previous {
            let cjk_seam = prev.text.trim().chars().last().is_some_and(is_cjk)
                && piece.chars().next().is_some_and(is_cjk);
            let join = cjk_seam && {
                let from = (prev.rect.left + prev.rect.right) / 2;
                let to = (word.rect.left + word.rect.right) / 2;
                let gap = f64::from(widest_blank_run(page, line, from, to));
                gap < JOIN_GAP * em
            };
            if !join {
                text.push(' ');
            }
        }
        text.push_str(piece);
        previous = Some(word);
    }
    text
}

/// The widest run of columns in `from..to` with no ink between the line's
/// top and bottom (ink: darker than halfway between the region's darkest
/// and lightest pixel).
fn widest_blank_run(page: &GrayImage, line: Rect, from: i32, to: i32) -> i32 {
    let clamp_x = |x: i32| x.clamp(0, page.width as i32) as usize;
    let clamp_y = |y: i32| y.clamp(0, page.height as i32) as usize;
    let (x0, x1) = (clamp_x(from.min(to)), clamp_x(from.max(to)));
    let (y0, y1) = (clamp_y(line.top), clamp_y(line.bottom));
    if x1 <= x0 || y1 <= y0 {
        return 0;
    }
    let w = page.width as usize;
    let rows = || (y0..y1).map(|y| &page.pixels[y * w + x0..y * w + x1]);
    let (lo, hi) = rows()
        .flatten()
        .fold((u8::MAX, u8::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    if hi.saturating_sub(lo) < 48 {
        // No contrast: nothing but paper (or nothing but ink).
        return (x1 - x0) as i32;
    }
    let ink = ((u16::from(lo) + u16::from(hi)) / 2) as u8;
    let mut blank = vec![true; x1 - x0];
    for row in rows() {
        for (column, &p) in blank.iter_mut().zip(row) {
            if p < ink {
                *column = false;
            }
        }
    }
    let (mut best, mut run) = (0, 0);
    for b in blank {
        run = if b { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Hangul, kana and CJK ideographs: scripts Tesseract splits into
/// syllable-long words.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF // Hangul
        | 0x3040..=0x30FF // kana
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // ideographs
    )
}

/// Init-time variables: Tesseract's messages go nowhere (it would write
/// them on kebab's stderr).
fn quiet_variables() -> Vec<(&'static str, &'static str)> {
    let sink = if cfg!(windows) { "NUL" } else { "/dev/null" };
    vec![("debug_file", sink)]
}

/// Otsu (`thresholding_method` 0) or Sauvola (2) for the next image set.
fn set_thresholding(handle: &mut BaseApi, sauvola: bool) -> Result<(), OcrError> {
    handle
        .set_variable("thresholding_method", if sauvola { "2" } else { "0" })
        .map_err(|e| OcrError::Failed(format!("Tesseract refused a setting: {e}")))
}

/// The resolution (dpi) at which lines `line_height` pixels high are
/// 11-point text: line boxes are ~0.95 em high.
fn resolution_for(line_height: f64) -> i32 {
    if line_height <= 0.0 {
        return 0;
    }
    (line_height * 72.0 / (11.0 * 0.95))
        .round()
        .clamp(70.0, 2400.0) as i32
}

/// Hand `image` to Tesseract, with its resolution when known (0: guess).
fn set_image(handle: &mut BaseApi, image: &GrayImage, ppi: i32) -> Result<(), OcrError> {
    let width = i32::try_from(image.width)
        .map_err(|_| OcrError::Rejected("the image is too wide".into()))?;
    let height = i32::try_from(image.height)
        .map_err(|_| OcrError::Rejected("the image is too high".into()))?;
    if handle.set_image(width, height, &image.pixels, ppi) {
        Ok(())
    } else {
        Err(OcrError::Rejected(
            "the pixels do not fill the image".into(),
        ))
    }
}

/// Whether a layout's lines are mostly tall rather than wide (by area):
/// the text runs top to bottom, a page turned a quarter.
fn looks_turned(layout: &[LayoutLine]) -> bool {
    let (mut tall, mut wide) = (0i64, 0i64);
    for l in layout {
        let (w, h) = (
            i64::from((l.right - l.left).max(0)),
            i64::from((l.bottom - l.top).max(0)),
        );
        if h > w {
            tall += w * h;
        } else {
            wide += w * h;
        }
    }
    tall > wide
}

/// The mean confidence of `lines`, each weighted by its characters.
fn mean_confidence(lines: &[TextLine]) -> f32 {
    let (sum, count) = lines.iter().fold((0.0f32, 0usize), |(sum, count), l| {
        let n = l.text.chars().count();
        (sum + l.confidence * n as f32, count + n)
    });
    if count == 0 { 0.0 } else { sum / count as f32 }
}

/// The skew of the text, weighted by line length: the median angle of the
/// lines' baselines (radians; negative when lines rise to the right, and
/// turning the page counter-clockwise by it levels them). Tesseract's own
/// block skew is no help here: on a few long lines at 4° it reports 0 and
/// cuts every line in two.
fn median_skew(layout: &[LayoutLine]) -> f64 {
    let mut weighted: Vec<(f64, i64)> = layout
        .iter()
        .filter_map(|l| Some((l.baseline?, i64::from((l.right - l.left).max(1)))))
        .collect();
    weighted_median(&mut weighted)
}

/// The height of a text line: the median line box height, less what the
/// skew adds to a box (its width × |sin skew|).
fn median_line_height(layout: &[LayoutLine], skew: f64) -> f64 {
    let mut heights: Vec<(f64, i64)> = layout
        .iter()
        .filter(|l| l.right - l.left > l.bottom - l.top)
        .map(|l| {
            let width = f64::from(l.right - l.left);
            let height = f64::from(l.bottom - l.top) - width * skew.sin().abs();
            (height.max(1.0), 1)
        })
        .collect();
    weighted_median(&mut heights)
}

fn weighted_median(values: &mut [(f64, i64)]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: i64 = values.iter().map(|v| v.1).sum();
    let mut seen = 0;
    for (value, weight) in values.iter() {
        seen += weight;
        if seen * 2 >= total {
            return *value;
        }
    }
    values[values.len() - 1].0
}

/// Load the library, find the data, pick and check the languages.
fn load(options: &TesseractOptions) -> Result<Loaded, OcrError> {
    let api = Api::load(&options.library).map_err(|e| {
        OcrError::Unavailable(format!(
            "{e}; install Tesseract 5 (Debian: apt-get install tesseract-ocr tesseract-ocr-script-hang tesseract-ocr-osd; scripts/setup-ocr.sh does)"
        ))
    })?;
    let tessdata = options.tessdata.clone().or_else(find_tessdata).ok_or_else(|| {
        OcrError::Unavailable(
            "no Tesseract language data (tessdata) found: install tesseract-ocr and tesseract-ocr-script-hang, or set TESSDATA_PREFIX"
                .into(),
        )
    })?;
    let installed = installed_languages(&tessdata);
    let languages = if options.languages.is_empty() {
        default_languages(&installed)
    } else {
        options.languages.clone()
    };
    if languages.is_empty() {
        return Err(OcrError::Unavailable(format!(
            "no language data in {}: install tesseract-ocr-script-hang (Korean and English) or tesseract-ocr-kor and tesseract-ocr-eng",
            tessdata.display()
        )));
    }
    let mut data_files = Vec::new();
    for code in &languages {
        check_language(code).map_err(OcrError::Unavailable)?;
        let file = tessdata.join(format!("{code}.traineddata"));
        let Ok(meta) = std::fs::metadata(&file) else {
            return Err(OcrError::Unavailable(format!(
                "no {code} language data ({}): install {} or remove {code:?} from [ocr] languages",
                file.display(),
                language_package(code)
            )));
        };
        data_files.push(format!("{code}:{}", meta.len()));
    }
    let osd = api.has_orientation_detection() && tessdata.join("osd.traineddata").is_file();
    let joined = languages.join("+");
    let fingerprint = format!(
        "tesseract {}; languages {}; thresholding {:?}; orientation {}; even_light {}; deskew {}; enlarge {}; pipeline 1",
        api.version(),
        data_files.join(","),
        options.thresholding,
        options.orientation && osd,
        options.even_light,
        options.deskew,
        options.enlarge_small_text,
    );
    Ok(Loaded {
        api,
        tessdata,
        languages: joined,
        osd,
        fingerprint,
        init_lock: Mutex::new(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_reads_korean_and_english_first() {
        let installed = |codes: &[&str]| codes.iter().map(|c| (*c).to_string()).collect::<Vec<_>>();
        assert_eq!(
            default_languages(&installed(&["Hangul", "chi_sim", "eng", "jpn", "kor"])),
            vec!["Hangul"]
        );
        assert_eq!(
            default_languages(&installed(&["chi_sim", "eng", "jpn", "kor"])),
            vec!["kor", "eng"]
        );
        assert_eq!(default_languages(&installed(&["eng"])), vec!["eng"]);
        assert_eq!(
            default_languages(&installed(&["chi_tra", "jpn"])),
            vec!["jpn"]
        );
        assert_eq!(default_languages(&installed(&["deu"])), vec!["deu"]);
        assert!(default_languages(&[]).is_empty());
    }

    #[test]
    fn missing_data_names_its_debian_package() {
        assert_eq!(language_package("kor"), "tesseract-ocr-kor");
        assert_eq!(language_package("chi_sim"), "tesseract-ocr-chi-sim");
        assert_eq!(language_package("Hangul"), "tesseract-ocr-script-hang");
    }

    #[test]
    fn installed_languages_skip_osd_and_equations() {
        let dir = tempfile::tempdir().expect("temp dir");
        for name in [
            "kor.traineddata",
            "eng.traineddata",
            "osd.traineddata",
            "equ.traineddata",
            "notes.txt",
        ] {
            std::fs::write(dir.path().join(name), b"x").expect("write");
        }
        assert_eq!(installed_languages(dir.path()), vec!["eng", "kor"]);
    }

    #[test]
    fn config_defaults_hold_and_bounds_are_checked() {
        let config = OcrConfig::default();
        assert!(config.enabled);
        assert_eq!(config.max_pixels, 40_000_000);
        assert_eq!(config.check_bounds(), Ok(()));
        let parsed: OcrConfig =
            serde_json::from_str(r#"{"languages": ["kor", "eng", "jpn"], "workers": 2}"#)
                .expect("parses");
        assert_eq!(parsed.page_budget_ms, DEFAULT_PAGE_BUDGET_MS);
        assert_eq!(TesseractOptions::from_config(&parsed).workers, 2);
        let bad = |f: fn(&mut OcrConfig)| {
            let mut c = OcrConfig::default();
            f(&mut c);
            c.check_bounds().expect_err("out of bounds")
        };
        assert!(bad(|c| c.page_budget_ms = 10).contains("page_budget_ms"));
        assert!(bad(|c| c.max_pixels = 1 << 40).contains("max_pixels"));
        assert!(bad(|c| c.workers = 1000).contains("workers"));
        assert!(bad(|c| c.languages = vec!["../etc/passwd".into()]).contains("languages"));
        assert!(bad(|c| c.languages = vec!["kor+eng".into()]).contains("languages"));
    }

    #[test]
    fn medians_weigh_long_lines_and_discount_skew() {
        let line = |l, t, r, b, baseline| LayoutLine {
            left: l,
            top: t,
            right: r,
            bottom: b,
            baseline,
        };
        let layout = [
            line(0, 0, 1000, 30, Some(-0.07)),
            line(0, 40, 900, 70, Some(-0.07)),
            line(0, 80, 50, 110, Some(0.3)),
            line(0, 120, 50, 150, None),
        ];
        assert!((median_skew(&layout) + 0.07).abs() < 1e-6);
        assert!(median_line_height(&layout, 0.0) == 30.0);
        assert!(median_line_height(&layout, 0.01) < 30.0);
    }

    #[test]
    fn a_missing_library_is_unavailable_with_a_hint() {
        let engine = TesseractEngine::new(TesseractOptions {
            library: PathBuf::from("/nonexistent/libtesseract.so.5"),
            ..TesseractOptions::default()
        });
        let image = GrayImage {
            width: 2,
            height: 2,
            pixels: vec![255; 4],
        };
        match engine.recognize(&image) {
            Err(OcrError::Unavailable(m)) => {
                assert!(m.contains("apt-get install tesseract-ocr"), "{m}")
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
        // An image over the bound is refused before anything loads.
        let big = GrayImage {
            width: 10_000,
            height: 10_000,
            pixels: Vec::new(),
        };
        assert!(matches!(engine.recognize(&big), Err(OcrError::Rejected(_))));
    }
}
