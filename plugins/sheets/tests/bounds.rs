//! Huge and hostile files, generated here (not committed): a million-row
//! CSV, `.xlsx` and `.ods`, a sheet of a million rows of formatted blanks,
//! an `.ods` whose repeats claim 17 billion cells, a zip bomb. Each must
//! finish within the host's bounds: parse and chunk in time (10 s of CPU
//! in a release build, which a loaded machine does not inflate as it does
//! wall time; the debug bound is looser) and within 512 MiB (measured by
//! counting every allocation of this test binary, the input included),
//! indexing the first rows and recording what was left out.
//!
//! Run `cargo test --release -p kebab-plugin-sheets --test bounds` for the
//! release timings.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{a1, chunk, meta, ods, parse, xlsx, xlsx_at_level};
use kebab_plugin_sdk::PluginError;

/// Counts live and peak heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One measured test at a time, so peaks are each test's own.
static SERIAL: Mutex<()> = Mutex::new(());

/// The plugin's memory cap in the host.
const MEMORY_CAP: usize = 512 << 20;

/// The host's deadline per call, in CPU time; a debug build gets more.
fn deadline() -> Duration {
    Duration::from_secs(if cfg!(debug_assertions) { 60 } else { 10 })
}

/// CPU time this thread has used (Linux; zero elsewhere), which a loaded
/// machine does not inflate as it does wall time.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Parse and chunk `bytes` as `name`, checking time and memory; the
/// document's blocks and chunks' spans in A1 notation, with the
/// `truncated` metadata.
fn measured(name: &str, bytes: Vec<u8>) -> (Vec<String>, Option<String>, usize) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let input = bytes.len();
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    let (start, cpu_start) = (Instant::now(), cpu_time());
    let doc = parse(name, bytes).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let (parsed, cpu_parsed) = (start.elapsed(), cpu_time() - cpu_start);
    let chunks = chunk(&doc, 512);
    let (total, cpu_total) = (start.elapsed(), cpu_time() - cpu_start);
    let peak = PEAK.load(Ordering::Relaxed);
    let report = format!(
        "{name}: {input} bytes, parse {parsed:?} (cpu {cpu_parsed:?}), parse+chunk {total:?} \
         (cpu {cpu_total:?}), {} blocks, {} chunks, peak {} MiB",
        doc.blocks.len(),
        chunks.len(),
        peak >> 20
    );
    std::fs::write(
        std::env::temp_dir().join(format!("sheets-bounds-{name}.txt")),
        &report,
    )
    .ok();
    let spent = if cpu_total.is_zero() {
        total
    } else {
        cpu_total
    };
    assert!(spent < deadline(), "{report}");
    assert!(peak < MEMORY_CAP, "{report}");
    let spans = chunks.iter().flat_map(|c| c.spans.iter().map(a1)).collect();
    (
        spans,
        meta(&doc, "truncated").map(str::to_string),
        chunks.len(),
    )
}

#[test]
fn a_million_row_csv_is_cut_at_the_cell_bound() {
    let mut text = String::from("id,name,city,amount,a,b,c,d,e,f\n");
    for i in 1..=1_000_000u32 {
        text.push_str(&format!("{i},name {i},Seoul,{}.5,1,2,3,4,5,6\n", i % 997));
    }
    let (spans, truncated, chunks) = measured("million.csv", text.into_bytes());
    assert_eq!(
        truncated.as_deref(),
        Some("sheet 'million' from row 200001 on")
    );
    assert!(spans[0].starts_with("million!A1:J"), "{}", spans[0]);
    assert!(spans.last().unwrap().ends_with(":J200000"), "{spans:?}");
    assert!(chunks > 3_000, "{chunks}");
}

#[test]
fn a_million_row_xlsx_is_cut_at_the_cell_bound() {
    let bytes = xlsx("Big", |w| {
        for r in 1..=1_000_000u32 {
            write!(w, r#"<row r="{r}">"#).unwrap();
            for (c, col) in "ABCDEFGHIJ".chars().enumerate() {
                write!(w, r#"<c r="{col}{r}"><v>{}</v></c>"#, r as usize * 10 + c).unwrap();
            }
            w.write_all(b"</row>").unwrap();
        }
    });
    let (spans, truncated, _) = measured("million.xlsx", bytes);
    assert_eq!(truncated.as_deref(), Some("sheet 'Big' from row 200001 on"));
    assert!(spans[0].starts_with("Big!A1:J"), "{}", spans[0]);
    assert!(spans.last().unwrap().ends_with(":J200000"), "{spans:?}");
}

#[test]
fn a_million_row_ods_is_cut_at_the_xml_bound() {
    let bytes = ods(|w| {
        w.write_all(br#"<table:table table:name="Big">"#).unwrap();
        for r in 1..=1_000_000u32 {
            w.write_all(b"<table:table-row>").unwrap();
            for c in 0..10u32 {
                let v = r * 10 + c;
                write!(w, r#"<table:table-cell office:value-type="float" office:value="{v}"><text:p>{v}</text:p></table:table-cell>"#).unwrap();
            }
            w.write_all(b"</table:table-row>").unwrap();
        }
        w.write_all(b"</table:table>").unwrap();
    });
    let (spans, truncated, _) = measured("million.ods", bytes);
    // ODF's XML is verbose: the bound on XML read comes before the cell one.
    let truncated = truncated.unwrap();
    let cut: u32 = truncated
        .strip_prefix("sheet 'Big' from row ")
        .and_then(|rest| rest.strip_suffix(" on"))
        .and_then(|row| row.parse().ok())
        .unwrap_or_else(|| panic!("{truncated}"));
    assert!((100_000..=200_001).contains(&cut), "{truncated}");
    assert!(
        spans.last().unwrap().ends_with(&format!(":J{}", cut - 1)),
        "{spans:?}"
    );
}

#[test]
fn a_sheet_of_formatted_blanks_stops_at_the_xml_bound() {
    let bytes = xlsx("Blank", |w| {
        w.write_all(br#"<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Score</t></is></c></row>"#).unwrap();
        w.write_all(br#"<row r="2"><c r="A2" t="inlineStr"><is><t>Ada</t></is></c><c r="B2"><v>1</v></c></row>"#).unwrap();
        w.write_all(br#"<row r="3"><c r="A3" t="inlineStr"><is><t>Bob</t></is></c><c r="B3"><v>2</v></c></row>"#).unwrap();
        for r in 4..=1_200_000u32 {
            write!(w, r#"<row r="{r}">"#).unwrap();
            for col in "ABCDEFGHIJ".chars() {
                write!(w, r#"<c r="{col}{r}" s="1"/>"#).unwrap();
            }
            w.write_all(b"</row>").unwrap();
        }
        w.write_all(br#"<row r="1200001"><c r="A1200001"><v>9</v></c></row>"#)
            .unwrap();
    });
    let (spans, truncated, _) = measured("blanks.xlsx", bytes);
    let truncated = truncated.unwrap();
    assert!(
        truncated.starts_with("sheet 'Blank' from row "),
        "{truncated}"
    );
    assert_eq!(spans, vec!["Blank!A1:B3".to_string()]);
}

#[test]
fn repeats_claiming_billions_of_cells_stop_at_the_budget() {
    let bytes = ods(|w| {
        w.write_all(br#"<table:table table:name="Repeats"><table:table-row table:number-rows-repeated="1048576"><table:table-cell table:number-columns-repeated="16384" office:value-type="float" office:value="7"><text:p>7</text:p></table:table-cell></table:table-row></table:table><table:table table:name="After"/>"#).unwrap();
    });
    let (spans, truncated, _) = measured("repeats.ods", bytes);
    assert_eq!(
        truncated.as_deref(),
        Some("sheet 'Repeats' from row 123 on")
    );
    assert_eq!(spans.first().map(String::as_str), Some("Repeats!A1:XFD1"));
    assert_eq!(
        spans.last().map(String::as_str),
        Some("Repeats!A122:XFD122")
    );
}

#[test]
fn a_zip_bomb_is_refused_before_it_inflates() {
    let bytes = xlsx_at_level("Bomb", 9, |w| {
        let row = br#"<row r="1"><c r="A1"><v>0</v></c></row>"#.repeat(1 << 16);
        for _ in 0..40 {
            w.write_all(&row).unwrap();
        }
    });
    assert!(bytes.len() < 4 << 20, "{} bytes", bytes.len());
    let err = parse("bomb.xlsx", bytes).unwrap_err();
    assert!(
        matches!(&err, PluginError::Malformed(m) if m.contains("zip bomb")),
        "{err:?}"
    );
}
