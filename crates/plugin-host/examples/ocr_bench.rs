//! Measure the Tesseract engine on PNG files: seconds (wall and CPU) per
//! image, character error rate against an expected text, peak RSS, handle
//! init time. `ocr_bench [options] FILE...`; options: `--langs kor+eng`,
//! `--threshold otsu|sauvola`, `--no-osd`, `--no-even`, `--no-deskew`,
//! `--no-enlarge`, `--multi` (OpenMP threads on), `--expected FILE`,
//! `--text`, `--repeat N`, `--budget-ms N`, `--workers N`; `--init A B ..`
//! times one handle's initialisation for each language set (`kor+eng`).

use std::io::Write;
use std::time::Instant;

use kebab_plugin_host::ocr::tesseract::{TesseractEngine, TesseractOptions, Thresholding};
use kebab_plugin_host::ocr::{GrayImage, OcrEngine};

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Time a handle's initialisation (the first read of a blank image) for
/// each language set, each in a fresh engine kept alive to the end.
fn time_inits(sets: &[String], out: &mut impl Write) {
    let blank = GrayImage {
        width: 64,
        height: 64,
        pixels: vec![255; 64 * 64],
    };
    let mut engines = Vec::new();
    for set in sets {
        let engine = TesseractEngine::new(TesseractOptions {
            workers: 1,
            languages: set.split('+').map(String::from).collect(),
            ..TesseractOptions::default()
        });
        let _ = engine.probe();
        let (w0, c0, r0) = (Instant::now(), cpu_seconds(), rss_mb());
        let result = engine.recognize(&blank);
        writeln!(
            out,
            "init {set}: {:.3} s wall, {:.3} s cpu, +{:.0} MB RSS ({})",
            w0.elapsed().as_secs_f64(),
            cpu_seconds() - c0,
            rss_mb() - r0,
            if result.is_ok() { "ok" } else { "failed" }
        )
        .ok();
        engines.push(engine);
    }
}

fn lev(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j + 1] + 1)
                .min(cur[j] + 1)
                .min(prev[j] + usize::from(ca != cb));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn cer(got: &str, want: &str, spaces: bool) -> f64 {
    let norm = |s: &str| -> Vec<char> {
        if spaces {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .collect()
        } else {
            s.chars().filter(|c| !c.is_whitespace()).collect()
        }
    };
    let (g, w) = (norm(got), norm(want));
    lev(&g, &w) as f64 / w.len().max(1) as f64
}

fn load(path: &str) -> GrayImage {
    let img = image::open(path).expect("decodes").to_luma8();
    GrayImage {
        width: img.width(),
        height: img.height(),
        pixels: img.into_raw(),
    }
}

fn main() {
    let mut out = std::io::stdout().lock();
    let mut options = TesseractOptions {
        workers: 1,
        ..TesseractOptions::default()
    };
    let mut files = Vec::new();
    let mut expected: Option<String> = None;
    let mut show_text = false;
    let mut repeat = 1;
    let mut parallel = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--langs" => {
                options.languages = args
                    .next()
                    .expect("value")
                    .split('+')
                    .map(String::from)
                    .collect()
            }
            "--threshold" => {
                options.thresholding = match args.next().as_deref() {
                    Some("otsu") => Thresholding::Otsu,
                    _ => Thresholding::Sauvola,
                }
            }
            "--no-osd" => options.orientation = false,
            "--no-even" => options.even_light = false,
            "--no-deskew" => options.deskew = false,
            "--no-enlarge" => options.enlarge_small_text = false,
            "--multi" => options.single_threaded = false,
            "--expected" => {
                expected =
                    Some(std::fs::read_to_string(args.next().expect("value")).expect("reads"))
            }
            "--text" => show_text = true,
            "--init" => {
                let sets: Vec<String> = args.by_ref().collect();
                time_inits(&sets, &mut out);
                return;
            }
            "--budget-ms" => {
                options.page_budget = std::time::Duration::from_millis(
                    args.next().expect("value").parse().expect("number"),
                )
            }
            "--workers" => options.workers = args.next().expect("value").parse().expect("number"),
            "--parallel" => parallel = true,
            "--repeat" => repeat = args.next().expect("value").parse().expect("number"),
            f => files.push(f.to_string()),
        }
    }
    let engine = TesseractEngine::new(options.clone());
    let (w0, c0) = (Instant::now(), cpu_seconds());
    let info = engine.probe();
    writeln!(out, "probe: {info:?} ({:.3} s)", w0.elapsed().as_secs_f64()).ok();
    // Handle init: the first read of a 1-pixel-high white image.
    let (w0, c0b) = (Instant::now(), cpu_seconds());
    let _ = engine.recognize(&GrayImage {
        width: 64,
        height: 64,
        pixels: vec![255; 64 * 64],
    });
    writeln!(
        out,
        "handle init + blank read: {:.3} s wall, {:.3} s cpu",
        w0.elapsed().as_secs_f64(),
        cpu_seconds() - c0b
    )
    .ok();
    if parallel {
        let engine = std::sync::Arc::new(engine);
        let started = Instant::now();
        let readers: Vec<_> = files
            .iter()
            .map(|f| {
                let (engine, f) = (std::sync::Arc::clone(&engine), f.clone());
                std::thread::spawn(move || {
                    let image = load(&f);
                    let w0 = Instant::now();
                    let result = engine.recognize(&image);
                    (f, result.map(|l| l.len()), w0.elapsed().as_secs_f64())
                })
            })
            .collect();
        for reader in readers {
            if let Ok((f, result, wall)) = reader.join() {
                writeln!(out, "{f}: {result:?} lines, {wall:.3} s wall").ok();
            }
        }
        writeln!(
            out,
            "all {} at once: {:.3} s wall, {:.3} s cpu, {} handles",
            files.len(),
            started.elapsed().as_secs_f64(),
            cpu_seconds() - c0,
            engine.handles()
        )
        .ok();
        writeln!(out, "peak RSS {:.0} MB", peak_rss_mb()).ok();
        return;
    }
    for f in &files {
        let image = load(f);
        for _ in 0..repeat {
            let (w0, c0) = (Instant::now(), cpu_seconds());
            let result = engine.recognize(&image);
            let (wall, cpu) = (w0.elapsed().as_secs_f64(), cpu_seconds() - c0);
            match result {
                Ok(lines) => {
                    let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
                    let text = text.join("\n");
                    let name = std::path::Path::new(f)
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or(f);
                    let scores = expected.as_ref().map_or(String::new(), |e| {
                        format!(
                            " CER {:.4} (with spaces {:.4})",
                            cer(&text, e, false),
                            cer(&text, e, true)
                        )
                    });
                    writeln!(
                        out,
                        "{name}: {}x{} {} lines, {wall:.3} s wall, {cpu:.3} s cpu{scores}",
                        image.width,
                        image.height,
                        lines.len()
                    )
                    .ok();
                    if show_text {
                        for l in &lines {
                            writeln!(
                                out,
                                "  [{},{} {}x{} {:.2}] {}",
                                l.x, l.y, l.width, l.height, l.confidence, l.text
                            )
                            .ok();
                        }
                    }
                }
                Err(e) => {
                    writeln!(out, "{f}: error {e} ({wall:.3} s)").ok();
                }
            }
        }
    }
    writeln!(out, "peak RSS {:.0} MB", peak_rss_mb()).ok();
}
