//! Tesseract 5's C API (`include/tesseract/capi.h`), written by hand and
//! resolved at run time from `libtesseract.so.5` with `libloading`: kebab
//! builds, starts and runs on a machine without Tesseract, and only the
//! engine's first image finds out whether the library is there. No
//! bindgen, no link-time dependency, no leptonica: pixels go in as raw
//! 8-bit gray rows (`TessBaseAPISetImage`).
//!
//! Only the calls the engine makes are declared. Every pointer the library
//! hands out is owned by a wrapper here that frees it on drop, so the
//! engine's code above holds no raw pointers.

use std::ffi::{CStr, CString, c_char, c_float, c_int};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

use libloading::Library;

/// `TessBaseAPI *`: one engine instance, not thread-safe.
#[repr(C)]
pub struct RawBaseApi {
    _opaque: [u8; 0],
}
/// `TessResultIterator *` (a `TessPageIterator` underneath).
#[repr(C)]
pub struct RawResultIterator {
    _opaque: [u8; 0],
}
/// `TessPageIterator *`.
#[repr(C)]
pub struct RawPageIterator {
    _opaque: [u8; 0],
}
/// `ETEXT_DESC *`: the progress monitor that carries a deadline.
#[repr(C)]
pub struct RawMonitor {
    _opaque: [u8; 0],
}

/// `TessOcrEngineMode::OEM_TESSERACT_ONLY`: the legacy engine (OSD data).
pub const OEM_TESSERACT_ONLY: c_int = 0;
/// `TessOcrEngineMode::OEM_LSTM_ONLY`: the neural line recogniser.
pub const OEM_LSTM_ONLY: c_int = 1;
/// `TessPageSegMode::PSM_AUTO`: full page layout, no OSD.
pub const PSM_AUTO: c_int = 3;
/// `TessPageSegMode::PSM_OSD_ONLY`.
pub const PSM_OSD_ONLY: c_int = 0;
/// `TessPageIteratorLevel::RIL_TEXTLINE`.
pub const RIL_TEXTLINE: c_int = 2;
/// `TessPageIteratorLevel::RIL_WORD`.
pub const RIL_WORD: c_int = 3;

type FnVersion = unsafe extern "C" fn() -> *const c_char;
type FnDeleteText = unsafe extern "C" fn(*const c_char);
type FnCreate = unsafe extern "C" fn() -> *mut RawBaseApi;
type FnApi = unsafe extern "C" fn(*mut RawBaseApi);
type FnInit4 = unsafe extern "C" fn(
    *mut RawBaseApi,
    *const c_char,
    *const c_char,
    c_int,
    *mut *mut c_char,
    c_int,
    *mut *mut c_char,
    *mut *mut c_char,
    usize,
    c_int,
) -> c_int;
type FnSetVariable = unsafe extern "C" fn(*mut RawBaseApi, *const c_char, *const c_char) -> c_int;
type FnSetPageSegMode = unsafe extern "C" fn(*mut RawBaseApi, c_int);
type FnSetImage = unsafe extern "C" fn(*mut RawBaseApi, *const u8, c_int, c_int, c_int, c_int);
type FnSetSourceResolution = unsafe extern "C" fn(*mut RawBaseApi, c_int);
type FnRecognize = unsafe extern "C" fn(*mut RawBaseApi, *mut RawMonitor) -> c_int;
type FnGetIterator = unsafe extern "C" fn(*mut RawBaseApi) -> *mut RawResultIterator;
type FnAnalyseLayout = unsafe extern "C" fn(*mut RawBaseApi) -> *mut RawPageIterator;
type FnDetectOrientationScript = unsafe extern "C" fn(
    *mut RawBaseApi,
    *mut c_int,
    *mut c_float,
    *mut *const c_char,
    *mut c_float,
) -> c_int;
type FnResultIteratorDelete = unsafe extern "C" fn(*mut RawResultIterator);
type FnResultIteratorGetPageIterator =
    unsafe extern "C" fn(*mut RawResultIterator) -> *mut RawPageIterator;
type FnResultIteratorNext = unsafe extern "C" fn(*mut RawResultIterator, c_int) -> c_int;
type FnResultIteratorGetUtf8Text =
    unsafe extern "C" fn(*const RawResultIterator, c_int) -> *mut c_char;
type FnResultIteratorConfidence = unsafe extern "C" fn(*const RawResultIterator, c_int) -> c_float;
type FnPageIteratorBoundingBox = unsafe extern "C" fn(
    *const RawPageIterator,
    c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
) -> c_int;
type FnPageIteratorBaseline = unsafe extern "C" fn(
    *const RawPageIterator,
    c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
) -> c_int;
type FnPageIteratorIsAtBeginningOf = unsafe extern "C" fn(*const RawPageIterator, c_int) -> c_int;
type FnPageIteratorNext = unsafe extern "C" fn(*mut RawPageIterator, c_int) -> c_int;
type FnPageIteratorDelete = unsafe extern "C" fn(*mut RawPageIterator);
type FnMonitorCreate = unsafe extern "C" fn() -> *mut RawMonitor;
type FnMonitorDelete = unsafe extern "C" fn(*mut RawMonitor);
type FnMonitorSetDeadline = unsafe extern "C" fn(*mut RawMonitor, c_int);
type FnOmpSetMaxActiveLevels = unsafe extern "C" fn(c_int);

/// Why the library could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadError {
    /// `dlopen` failed: the library is not installed (or not at that path).
    #[error("cannot load {library}: {reason}")]
    Library { library: String, reason: String },
    /// The library lacks a function the engine calls: not Tesseract 5.
    #[error("{library} has no {symbol}: not Tesseract 5's C API ({reason})")]
    Symbol {
        library: String,
        symbol: &'static str,
        reason: String,
    },
}

/// The resolved C API. The function pointers stay valid while `_library`
/// is loaded, and it is dropped last (it is the last field).
pub struct Api {
    version: FnVersion,
    delete_text: FnDeleteText,
    create: FnCreate,
    delete: FnApi,
    end: FnApi,
    clear: FnApi,
    init4: FnInit4,
    set_variable: FnSetVariable,
    set_page_seg_mode: FnSetPageSegMode,
    set_image: FnSetImage,
    set_source_resolution: FnSetSourceResolution,
    recognize: FnRecognize,
    get_iterator: FnGetIterator,
    analyse_layout: FnAnalyseLayout,
    /// Absent where the library was built without the legacy engine.
    detect_orientation_script: Option<FnDetectOrientationScript>,
    result_iterator_delete: FnResultIteratorDelete,
    result_iterator_get_page_iterator: FnResultIteratorGetPageIterator,
    result_iterator_next: FnResultIteratorNext,
    result_iterator_get_utf8_text: FnResultIteratorGetUtf8Text,
    result_iterator_confidence: FnResultIteratorConfidence,
    page_iterator_bounding_box: FnPageIteratorBoundingBox,
    page_iterator_baseline: FnPageIteratorBaseline,
    page_iterator_is_at_beginning_of: FnPageIteratorIsAtBeginningOf,
    page_iterator_next: FnPageIteratorNext,
    page_iterator_delete: FnPageIteratorDelete,
    monitor_create: FnMonitorCreate,
    monitor_delete: FnMonitorDelete,
    monitor_set_deadline: FnMonitorSetDeadline,
    /// libgomp's, when the library is built with OpenMP (Debian's is).
    omp_set_max_active_levels: Option<FnOmpSetMaxActiveLevels>,
    _openmp: Option<Library>,
    _library: Library,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api").finish_non_exhaustive()
    }
}

/// Resolve `name` in `library` as a function pointer of type `T`.
///
/// # Safety
/// `T` must be the function's true C signature.
unsafe fn symbol<T: Copy>(
    library: &Library,
    library_name: &str,
    name: &'static str,
) -> Result<T, LoadError> {
    // SAFETY: the caller names the symbol's C signature as `T`; the pointer
    // is used only while `library` stays loaded (both live in `Api`).
    match unsafe { library.get::<T>(name.as_bytes()) } {
        Ok(found) => Ok(*found),
        Err(e) => Err(LoadError::Symbol {
            library: library_name.to_string(),
            symbol: name,
            reason: e.to_string(),
        }),
    }
}

impl Api {
    /// Load `library` (a file name searched like `dlopen` does, or a path)
    /// and resolve every call the engine makes.
    pub fn load(library: &Path) -> Result<Arc<Api>, LoadError> {
        let name = library.display().to_string();
        // SAFETY: loading runs the library's initialisers; libtesseract's
        // only set up its own statics.
        let lib = unsafe { Library::new(library) }.map_err(|e| LoadError::Library {
            library: name.clone(),
            reason: e.to_string(),
        })?;
        // The OpenMP runtime libtesseract was linked with, if any: already
        // loaded as its dependency, so this finds the same instance.
        // SAFETY: as above; libgomp is already initialised.
        let openmp = unsafe { Library::new("libgomp.so.1") }.ok();
        let omp_set_max_active_levels = openmp.as_ref().and_then(|omp| {
            // SAFETY: `void omp_set_max_active_levels(int)`.
            unsafe {
                symbol::<FnOmpSetMaxActiveLevels>(omp, "libgomp.so.1", "omp_set_max_active_levels")
            }
            .ok()
        });
        // SAFETY (every `symbol` call below): each type alias above is the
        // signature in capi.h of Tesseract 5.0 to 5.5.
        unsafe {
            Ok(Arc::new(Api {
                version: symbol(&lib, &name, "TessVersion")?,
                delete_text: symbol(&lib, &name, "TessDeleteText")?,
                create: symbol(&lib, &name, "TessBaseAPICreate")?,
                delete: symbol(&lib, &name, "TessBaseAPIDelete")?,
                end: symbol(&lib, &name, "TessBaseAPIEnd")?,
                clear: symbol(&lib, &name, "TessBaseAPIClear")?,
                init4: symbol(&lib, &name, "TessBaseAPIInit4")?,
                set_variable: symbol(&lib, &name, "TessBaseAPISetVariable")?,
                set_page_seg_mode: symbol(&lib, &name, "TessBaseAPISetPageSegMode")?,
                set_image: symbol(&lib, &name, "TessBaseAPISetImage")?,
                set_source_resolution: symbol(&lib, &name, "TessBaseAPISetSourceResolution")?,
                recognize: symbol(&lib, &name, "TessBaseAPIRecognize")?,
                get_iterator: symbol(&lib, &name, "TessBaseAPIGetIterator")?,
                analyse_layout: symbol(&lib, &name, "TessBaseAPIAnalyseLayout")?,
                detect_orientation_script: symbol(
                    &lib,
                    &name,
                    "TessBaseAPIDetectOrientationScript",
                )
                .ok(),
                result_iterator_delete: symbol(&lib, &name, "TessResultIteratorDelete")?,
                result_iterator_get_page_iterator: symbol(
                    &lib,
                    &name,
                    "TessResultIteratorGetPageIterator",
                )?,
                result_iterator_next: symbol(&lib, &name, "TessResultIteratorNext")?,
                result_iterator_get_utf8_text: symbol(
                    &lib,
                    &name,
                    "TessResultIteratorGetUTF8Text",
                )?,
                result_iterator_confidence: symbol(&lib, &name, "TessResultIteratorConfidence")?,
                page_iterator_bounding_box: symbol(&lib, &name, "TessPageIteratorBoundingBox")?,
                page_iterator_baseline: symbol(&lib, &name, "TessPageIteratorBaseline")?,
                page_iterator_is_at_beginning_of: symbol(
                    &lib,
                    &name,
                    "TessPageIteratorIsAtBeginningOf",
                )?,
                page_iterator_next: symbol(&lib, &name, "TessPageIteratorNext")?,
                page_iterator_delete: symbol(&lib, &name, "TessPageIteratorDelete")?,
                monitor_create: symbol(&lib, &name, "TessMonitorCreate")?,
                monitor_delete: symbol(&lib, &name, "TessMonitorDelete")?,
                monitor_set_deadline: symbol(&lib, &name, "TessMonitorSetDeadlineMSecs")?,
                omp_set_max_active_levels,
                _openmp: openmp,
                _library: lib,
            }))
        }
    }

    /// `TessVersion()`, e.g. "5.3.0".
    pub fn version(&self) -> String {
        // SAFETY: returns a static NUL-terminated string (or null).
        let raw = unsafe { (self.version)() };
        if raw.is_null() {
            return String::from("unknown");
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(raw) }
            .to_string_lossy()
            .into_owned()
    }

    /// Whether orientation detection is in this build.
    pub fn has_orientation_detection(&self) -> bool {
        self.detect_orientation_script.is_some()
    }

    /// Run OpenMP regions started from now on with one thread (libgomp's
    /// `omp_set_max_active_levels(0)`): the engine already runs one image
    /// per worker, and Tesseract's 4-thread regions on a busy machine spin
    /// and multiply the CPU a page costs (measured: 3-8× on 2 busy cores).
    pub fn limit_openmp(&self) {
        if let Some(set) = self.omp_set_max_active_levels {
            // SAFETY: plain int setter of libgomp's control variables.
            unsafe { set(0) };
        }
    }
}

/// One `TessBaseAPI`, initialised for a language set; freed on drop.
pub struct BaseApi {
    api: Arc<Api>,
    raw: NonNull<RawBaseApi>,
}

// SAFETY: a TessBaseAPI may move between threads; it is used by one at a
// time (`&mut self` on every call that touches it).
unsafe impl Send for BaseApi {}

impl std::fmt::Debug for BaseApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseApi").finish_non_exhaustive()
    }
}

/// Why a handle could not be set up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InitError {
    #[error("TessBaseAPICreate returned null")]
    Create,
    #[error("a NUL byte in {0}")]
    Nul(&'static str),
    #[error("TessBaseAPIInit4 failed for languages {languages:?} in {datapath}")]
    Init { languages: String, datapath: String },
    #[error("Tesseract does not know the variable {0}")]
    Variable(String),
}

/// A box in the image as set: left, top, right, bottom (exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rect {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

/// One recognised word: its text and box.
#[derive(Debug, Clone, PartialEq)]
pub struct RawWord {
    pub text: String,
    pub rect: Rect,
}

/// One recognised line: its box, confidence (0 to 100) and words in
/// reading order.
#[derive(Debug, Clone, PartialEq)]
pub struct RawLine {
    pub rect: Rect,
    pub confidence: f32,
    pub words: Vec<RawWord>,
}

/// A line from layout analysis: its box (left, top, right, bottom) and the
/// angle of its baseline (radians, clockwise on screen: y grows down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutLine {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
    pub baseline: Option<f64>,
}

/// Orientation and script detection's answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Osd {
    /// Degrees the text is turned clockwise from upright (0, 90, 180, 270):
    /// turning the image clockwise by 360 minus this makes it upright (a page
    /// turned a quarter counter-clockwise reports 270).
    pub orient_deg: i32,
    /// Tesseract's confidence in `orient_deg` (a margin, ~0 to ~30).
    pub orient_conf: f32,
}

fn c_string(value: &str, what: &'static str) -> Result<CString, InitError> {
    CString::new(value).map_err(|_| InitError::Nul(what))
}

impl BaseApi {
    /// `TessBaseAPICreate` + `TessBaseAPIInit4(datapath, languages, oem)`
    /// with `variables` set during initialisation (so `debug_file` silences
    /// the init's own messages too).
    pub fn new(
        api: &Arc<Api>,
        datapath: &Path,
        languages: &str,
        oem: c_int,
        variables: &[(&str, &str)],
    ) -> Result<BaseApi, InitError> {
        // SAFETY: no arguments; null on allocation failure.
        let raw = NonNull::new(unsafe { (api.create)() }).ok_or(InitError::Create)?;
        // From here `handle` owns `raw`: an early return deletes it.
        let handle = BaseApi {
            api: Arc::clone(api),
            raw,
        };
        let datapath_c = c_string(&datapath.to_string_lossy(), "the tessdata path")?;
        let languages_c = c_string(languages, "the languages")?;
        let names = variables
            .iter()
            .map(|(n, _)| c_string(n, "a variable name"))
            .collect::<Result<Vec<_>, _>>()?;
        let values = variables
            .iter()
            .map(|(_, v)| c_string(v, "a variable value"))
            .collect::<Result<Vec<_>, _>>()?;
        let mut name_ptrs: Vec<*mut c_char> = names.iter().map(|s| s.as_ptr().cast_mut()).collect();
        let mut value_ptrs: Vec<*mut c_char> =
            values.iter().map(|s| s.as_ptr().cast_mut()).collect();
        // SAFETY: every pointer is a live NUL-terminated string for the call;
        // Init4 copies what it keeps and does not write through the arrays.
        let rc = unsafe {
            (api.init4)(
                handle.raw.as_ptr(),
                datapath_c.as_ptr(),
                languages_c.as_ptr(),
                oem,
                std::ptr::null_mut(),
                0,
                name_ptrs.as_mut_ptr(),
                value_ptrs.as_mut_ptr(),
                name_ptrs.len(),
                0,
            )
        };
        if rc != 0 {
            return Err(InitError::Init {
                languages: languages.to_string(),
                datapath: datapath.display().to_string(),
            });
        }
        Ok(handle)
    }

    /// `TessBaseAPISetVariable`.
    pub fn set_variable(&mut self, name: &str, value: &str) -> Result<(), InitError> {
        let name_c = c_string(name, "a variable name")?;
        let value_c = c_string(value, "a variable value")?;
        // SAFETY: live handle and strings.
        let ok = unsafe {
            (self.api.set_variable)(self.raw.as_ptr(), name_c.as_ptr(), value_c.as_ptr())
        };
        if ok == 0 {
            return Err(InitError::Variable(name.to_string()));
        }
        Ok(())
    }

    /// `TessBaseAPISetPageSegMode`.
    pub fn set_page_seg_mode(&mut self, mode: c_int) {
        // SAFETY: live handle; `mode` is a TessPageSegMode value.
        unsafe { (self.api.set_page_seg_mode)(self.raw.as_ptr(), mode) }
    }

    /// `TessBaseAPISetImage` with 8-bit gray rows of `width` bytes; the
    /// library copies the pixels. `ppi` 0 lets Tesseract estimate the
    /// resolution from the text. `false`, and nothing set, when `pixels` is
    /// not `width × height` bytes.
    pub fn set_image(&mut self, width: i32, height: i32, pixels: &[u8], ppi: i32) -> bool {
        let fits = width > 0
            && height > 0
            && pixels.len() as u64
                == u64::from(width.unsigned_abs()) * u64::from(height.unsigned_abs());
        if !fits {
            return false;
        }
        // SAFETY: `pixels` holds height rows of width bytes; Tesseract copies
        // them into its own image before returning.
        unsafe {
            (self.api.set_image)(self.raw.as_ptr(), pixels.as_ptr(), width, height, 1, width);
            if ppi > 0 {
                (self.api.set_source_resolution)(self.raw.as_ptr(), ppi);
            }
        }
        true
    }

    /// `TessBaseAPIClear`: drop the image and results, keep the languages.
    pub fn clear(&mut self) {
        // SAFETY: live handle.
        unsafe { (self.api.clear)(self.raw.as_ptr()) }
    }

    /// `TessBaseAPIDetectOrientationScript` on the image set; `None` when
    /// this build lacks it or it found too little text.
    pub fn detect_orientation(&mut self) -> Option<Osd> {
        let detect = self.api.detect_orientation_script?;
        let mut deg: c_int = 0;
        let mut conf: c_float = 0.0;
        // The script out-parameters are passed as null (the call checks):
        // capi.h says to free the script name with TessDeleteText, but since
        // 5.0 it points into the unicharset, and freeing it corrupts the heap.
        // SAFETY: live handle, out-pointers to locals or null.
        let ok = unsafe {
            detect(
                self.raw.as_ptr(),
                &mut deg,
                &mut conf,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        (ok != 0).then_some(Osd {
            orient_deg: deg,
            orient_conf: conf,
        })
    }

    /// `TessBaseAPIAnalyseLayout`: the text line boxes and their baselines,
    /// no text. Recognition afterwards reuses this layout when the image is
    /// not set again.
    pub fn analyse_layout(&mut self) -> Vec<LayoutLine> {
        // SAFETY: live handle; the iterator is ours to delete.
        let raw = unsafe { (self.api.analyse_layout)(self.raw.as_ptr()) };
        let Some(it) = NonNull::new(raw) else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        let page = it.as_ptr();
        // SAFETY (whole block): `page` is a live page iterator until deleted
        // below; out-pointers are locals.
        unsafe {
            loop {
                let (mut l, mut t, mut r, mut b) = (0, 0, 0, 0);
                if (self.api.page_iterator_bounding_box)(
                    page,
                    RIL_TEXTLINE,
                    &mut l,
                    &mut t,
                    &mut r,
                    &mut b,
                ) != 0
                {
                    let (mut x1, mut y1, mut x2, mut y2) = (0, 0, 0, 0);
                    let baseline = ((self.api.page_iterator_baseline)(
                        page,
                        RIL_TEXTLINE,
                        &mut x1,
                        &mut y1,
                        &mut x2,
                        &mut y2,
                    ) != 0
                        && x2 != x1)
                        .then(|| (f64::from(y2 - y1) / f64::from(x2 - x1)).atan());
                    lines.push(LayoutLine {
                        left: l,
                        top: t,
                        right: r,
                        bottom: b,
                        baseline,
                    });
                }
                if (self.api.page_iterator_next)(page, RIL_TEXTLINE) == 0 {
                    break;
                }
            }
            (self.api.page_iterator_delete)(page);
        }
        lines
    }

    /// `TessBaseAPIRecognize` with a monitor whose deadline is `deadline_ms`
    /// from now; `false` when recognition stopped early (deadline or
    /// failure).
    pub fn recognize(&mut self, deadline_ms: i32) -> bool {
        let Some(monitor) = Monitor::new(&self.api) else {
            return false;
        };
        // SAFETY: live monitor; the deadline counts from this call.
        unsafe { (self.api.monitor_set_deadline)(monitor.raw.as_ptr(), deadline_ms.max(1)) };
        // SAFETY: live handle and monitor; the monitor outlives the call.
        let rc = unsafe { (self.api.recognize)(self.raw.as_ptr(), monitor.raw.as_ptr()) };
        rc == 0
    }

    /// The recognised text lines with their words, in Tesseract's reading
    /// order.
    pub fn lines(&mut self) -> Vec<RawLine> {
        // SAFETY: live handle; the iterator is ours to delete.
        let raw = unsafe { (self.api.get_iterator)(self.raw.as_ptr()) };
        let Some(it) = NonNull::new(raw) else {
            return Vec::new();
        };
        let mut lines: Vec<RawLine> = Vec::new();
        let ri = it.as_ptr();
        // SAFETY (whole block): `ri` is live until deleted below; the page
        // iterator is the same object viewed as its base class (not to be
        // deleted separately); text pointers are freed with TessDeleteText.
        unsafe {
            let page = (self.api.result_iterator_get_page_iterator)(ri);
            let rect_at = |level: c_int| -> Option<Rect> {
                let mut r = Rect::default();
                let found = (self.api.page_iterator_bounding_box)(
                    page,
                    level,
                    &mut r.left,
                    &mut r.top,
                    &mut r.right,
                    &mut r.bottom,
                ) != 0;
                found.then_some(r)
            };
            let mut current: Option<RawLine> = None;
            loop {
                if current.is_none()
                    || (self.api.page_iterator_is_at_beginning_of)(page, RIL_TEXTLINE) != 0
                {
                    lines.extend(current.take());
                    current = rect_at(RIL_TEXTLINE).map(|rect| RawLine {
                        rect,
                        confidence: (self.api.result_iterator_confidence)(ri, RIL_TEXTLINE),
                        words: Vec::new(),
                    });
                }
                let text_ptr = (self.api.result_iterator_get_utf8_text)(ri, RIL_WORD);
                if !text_ptr.is_null() {
                    let text = CStr::from_ptr(text_ptr).to_string_lossy().into_owned();
                    (self.api.delete_text)(text_ptr);
                    if let (Some(rect), Some(line)) = (rect_at(RIL_WORD), current.as_mut()) {
                        line.words.push(RawWord { text, rect });
                    }
                }
                if (self.api.result_iterator_next)(ri, RIL_WORD) == 0 {
                    break;
                }
            }
            lines.extend(current.take());
            (self.api.result_iterator_delete)(ri);
        }
        lines.retain(|l| !l.words.is_empty());
        lines
    }
}

impl Drop for BaseApi {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once; End frees the
        // languages, Delete the object.
        unsafe {
            (self.api.end)(self.raw.as_ptr());
            (self.api.delete)(self.raw.as_ptr());
        }
    }
}

/// An `ETEXT_DESC`, deleted on drop.
struct Monitor<'a> {
    api: &'a Api,
    raw: NonNull<RawMonitor>,
}

impl<'a> Monitor<'a> {
    fn new(api: &'a Api) -> Option<Monitor<'a>> {
        // SAFETY: no arguments; null on allocation failure.
        NonNull::new(unsafe { (api.monitor_create)() }).map(|raw| Monitor { api, raw })
    }
}

impl Drop for Monitor<'_> {
    fn drop(&mut self) {
        // SAFETY: created by TessMonitorCreate, deleted once.
        unsafe { (self.api.monitor_delete)(self.raw.as_ptr()) }
    }
}
