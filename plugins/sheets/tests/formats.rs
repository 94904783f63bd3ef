//! The plugin on real files: one workbook written by LibreOffice as
//! `.xlsx`, `.ods`, `.fods` and `.xls` reads the same in every format;
//! files from openpyxl and hand-made packages cover formulas without
//! cached values, the 1904 date system and merged cells; CSV and TSV cover
//! quoting, delimiters and encodings; encrypted and corrupt files fail
//! with the right error. Fixtures: `tests/fixtures/formats/sheets`
//! (regenerate with `make_sheets.py` there).

mod common;

use common::{a1, chunk, column, fixture, meta, parse, summary, xlsx};
use kebab_plugin_sdk::text::estimate_tokens;
use kebab_plugin_sdk::{Guest, PluginError};
use kebab_plugin_sheets::Plugin;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The `Log` sheet's rows 2..=41 as the plugin shows them.
fn log_row(i: u32) -> String {
    let day = if i <= 31 {
        format!("2024-01-{i:02}")
    } else {
        format!("2024-02-{:02}", i - 31)
    };
    format!("{day} | Event number {i} happened | {}", i * 3)
}

/// What every format of the budget workbook chunks into with a large
/// target: one chunk per sheet with data, in workbook order.
fn budget_chunks() -> Vec<(Vec<String>, Vec<String>, String)> {
    let log: Vec<String> = (1..=40).map(log_row).collect();
    vec![
        (
            strings(&["Budget"]),
            strings(&["Budget!A1:E9"]),
            "Quarterly budget 2024\n\
             Item | Q1 | Q2 | Total | Updated\n\
             Rent | 1200 | 1250 | 2450 | 2024-03-01\n\
             식비 | 350.5 | 410.25 | 760.75 | 2024-03-15 14:30:00\n\
             Travel | 0.1 | 0.2 | 0.3\n\
             Ratio | 1 | 0 | #DIV/0! | TRUE\n\
             Note | Reviewed, ok second line"
                .to_string(),
        ),
        (
            strings(&["데이터"]),
            strings(&["데이터!C5:D7"]),
            "이름 | 점수\n김철수 | 90\nAda Lovelace | 85.5".to_string(),
        ),
        (
            strings(&["Log"]),
            strings(&["Log!A1:C41"]),
            format!("Day | Event | Count\n{}", log.join("\n")),
        ),
        (
            strings(&["Hidden (hidden)"]),
            strings(&["Hidden!A1:B1"]),
            "secret | 42".to_string(),
        ),
    ]
}

#[test]
fn the_budget_workbook_reads_the_same_in_every_format() {
    for name in ["budget.xlsx", "budget.ods", "budget.fods", "budget.xls"] {
        let doc = parse(name, fixture(name)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(summary(&chunk(&doc, 1000)), budget_chunks(), "{name}");
        assert_eq!(doc.title.as_deref(), Some("Team budget"), "{name}");
        assert_eq!(meta(&doc, "author"), Some("Kim Minji"), "{name}");
        assert_eq!(
            meta(&doc, "sheets"),
            Some(r#"["Budget","데이터","Log","Hidden","Empty"]"#),
            "{name}"
        );
        assert_eq!(meta(&doc, "hidden_sheets"), Some(r#"["Hidden"]"#), "{name}");
        assert_eq!(
            meta(&doc, "header_rows"),
            Some(r#"{"Budget":[1,3],"Log":[1,1],"데이터":[5,5]}"#),
            "{name}"
        );
    }
}

#[test]
fn blocks_are_the_header_then_runs_of_consecutive_rows() {
    let doc = parse("budget.xlsx", fixture("budget.xlsx")).unwrap();
    let blocks: Vec<(String, String)> = doc
        .blocks
        .iter()
        .take(3)
        .map(|b| (a1(&b.span), b.text.clone()))
        .collect();
    assert_eq!(
        blocks,
        vec![
            (
                "Budget!A1:E3".to_string(),
                "Quarterly budget 2024\nItem | Q1 | Q2 | Total | Updated".to_string()
            ),
            (
                "Budget!A4:E7".to_string(),
                "Rent | 1200 | 1250 | 2450 | 2024-03-01\n\
                 식비 | 350.5 | 410.25 | 760.75 | 2024-03-15 14:30:00\n\
                 Travel | 0.1 | 0.2 | 0.3\n\
                 Ratio | 1 | 0 | #DIV/0! | TRUE"
                    .to_string()
            ),
            (
                "Budget!A9:E9".to_string(),
                "Note | Reviewed, ok second line".to_string()
            ),
        ]
    );
    assert_eq!(meta(&doc, "format"), Some("xlsx"));
}

#[test]
fn the_header_row_is_carried_into_every_later_window() {
    let doc = parse("budget.ods", fixture("budget.ods")).unwrap();
    let log: Vec<_> = chunk(&doc, 40)
        .into_iter()
        .filter(|c| c.heading_path == ["Log"])
        .collect();
    let header_block = doc
        .blocks
        .iter()
        .position(|b| b.text == "Day | Event | Count")
        .unwrap() as u32;
    assert_eq!(log.len(), 10);
    let first_two = summary(&log[..2]);
    assert_eq!(
        first_two,
        vec![
            (
                strings(&["Log"]),
                strings(&["Log!A1:C5"]),
                format!(
                    "Day | Event | Count\n{}",
                    (1..=4).map(log_row).collect::<Vec<_>>().join("\n")
                )
            ),
            (
                strings(&["Log"]),
                strings(&["Log!A1:C1", "Log!A6:C9"]),
                format!(
                    "Day | Event | Count\n{}",
                    (5..=8).map(log_row).collect::<Vec<_>>().join("\n")
                )
            ),
        ]
    );
    for c in &log {
        assert!(c.text.starts_with("Day | Event | Count\n"), "{}", c.text);
        assert!(estimate_tokens(&c.text) <= 40, "{}", c.text);
        assert_eq!(c.blocks[0], header_block);
    }
    assert!(log[9].text.ends_with(&log_row(40)));
    assert_eq!(a1(&log[9].spans[1]), "Log!A38:C41");
}

#[test]
fn formulas_without_cached_values_read_as_formulas() {
    let doc = parse("no_cache.xlsx", fixture("no_cache.xlsx")).unwrap();
    assert_eq!(
        summary(&chunk(&doc, 500)),
        vec![(
            strings(&["Sums"]),
            strings(&["Sums!A1:C3"]),
            "A | B | Sum\n1 | 2 | =A2+B2\n3 | 4 | =SUM(A3:B3)".to_string()
        )]
    );
}

#[test]
fn dates_of_the_1904_system_read_as_dates() {
    let doc = parse("date1904.xlsx", fixture("date1904.xlsx")).unwrap();
    assert_eq!(
        chunk(&doc, 500)[0].text,
        "When | What\n2024-03-01 | launch\n2024-03-15 14:30:00 | review"
    );
}

#[test]
fn merged_cells_show_their_value_once() {
    let doc = parse("merged_values.xlsx", fixture("merged_values.xlsx")).unwrap();
    assert_eq!(
        summary(&chunk(&doc, 500)),
        vec![(
            strings(&["Merged"]),
            strings(&["Merged!A1:C4"]),
            "Region | Area | Size\n\
             North & South |  | =LEN(A2)*2\n\
             \x20|  | =LEN(A3)*2\n\
             Rich text | Rich text!"
                .to_string()
        )]
    );
}

#[test]
fn csv_quoting_embedded_newlines_and_a_bom() {
    let doc = parse("quoted.csv", fixture("quoted.csv")).unwrap();
    assert_eq!(
        summary(&chunk(&doc, 500)),
        vec![(
            strings(&["quoted"]),
            strings(&["quoted!A1:C6"]),
            "Name | Comment | Amount\n\
             Ada | Wrote the first program, in 1843 | 100\n\
             김민지 | 첫 줄 둘째 줄 | 200\n\
             Bob | He said \"hi\"\n\
             Eve |  | 300"
                .to_string()
        )]
    );
    assert_eq!(doc.title.as_deref(), Some("quoted"));
    assert_eq!(meta(&doc, "encoding"), Some("UTF-8"));
}

#[test]
fn semicolons_windows_1252_and_utf16_are_recognised() {
    let doc = parse("semicolon.csv", fixture("semicolon.csv")).unwrap();
    assert_eq!(
        chunk(&doc, 500)[0].text,
        "Produkt | Preis | Menge\nKäse | 3,50 | 2\nBrötchen | 0,45 | 10"
    );
    assert_eq!(meta(&doc, "delimiter"), Some(";"));
    assert_eq!(meta(&doc, "encoding"), Some("windows-1252"));
    let doc = parse("unicode.csv", fixture("unicode.csv")).unwrap();
    assert_eq!(
        summary(&chunk(&doc, 500)),
        vec![(
            strings(&["unicode"]),
            strings(&["unicode!A1:B3"]),
            "Stadt | Einwohner\n서울 | 9411000\nZürich | 421878".to_string()
        )]
    );
    assert_eq!(meta(&doc, "encoding"), Some("UTF-16LE"));
    let doc = parse("simple.tsv", fixture("simple.tsv")).unwrap();
    assert_eq!(chunk(&doc, 500)[0].text, "Key | Value\nalpha | 1\nbeta | 2");
    assert_eq!(meta(&doc, "format"), Some("tsv"));
}

#[test]
fn an_empty_file_makes_no_chunks() {
    let doc = parse("empty.csv", fixture("empty.csv")).unwrap();
    assert!(doc.blocks.is_empty());
    assert!(chunk(&doc, 500).is_empty());
    assert_eq!(meta(&doc, "sheets"), Some(r#"["empty"]"#));
}

#[test]
fn a_sheet_16384_columns_wide_is_cited_to_xfd() {
    let bytes = xlsx("Wide", |w| {
        for row in 1..=3u32 {
            write!(w, r#"<row r="{row}">"#).unwrap();
            for col in 1..=16_384u32 {
                let letters = column(col);
                if row == 1 {
                    write!(
                        w,
                        r#"<c r="{letters}{row}" t="inlineStr"><is><t>h{col}</t></is></c>"#
                    )
                } else {
                    write!(w, r#"<c r="{letters}{row}"><v>{}</v></c>"#, col * row)
                }
                .unwrap();
            }
            w.write_all(b"</row>").unwrap();
        }
    });
    let doc = parse("wide.xlsx", bytes).unwrap();
    let chunks = chunk(&doc, 512);
    assert!(chunks.len() >= 2);
    assert_eq!(a1(&chunks[0].spans[0]), "Wide!A1:XFD2");
    assert_eq!(a1(&chunks[1].spans[1]), "Wide!A3:XFD3");
    let header = chunks[1].text.lines().next().unwrap();
    assert!(header.starts_with("h1 | h2 | h3"));
    assert!(header.ends_with("h16383 | h16384"));
    assert!(chunks[1].text.ends_with("| 49149 | 49152"));
}

#[test]
fn an_empty_workbook_lists_its_sheet_and_makes_no_chunks() {
    let doc = parse("blank.xlsx", xlsx("Sheet1", |_| {})).unwrap();
    assert!(doc.blocks.is_empty());
    assert!(chunk(&doc, 500).is_empty());
    assert_eq!(meta(&doc, "sheets"), Some(r#"["Sheet1"]"#));
    assert_eq!(doc.title.as_deref(), Some("Sheet1"));
}

#[test]
fn encrypted_workbooks_are_refused_with_a_hint() {
    let err = parse("encrypted.xlsx", fixture("encrypted.xlsx")).unwrap_err();
    assert_eq!(
        err,
        PluginError::Unsupported(
            "encrypted (password-protected) workbook: remove the password and ingest again".into()
        )
    );
}

#[test]
fn corrupt_files_are_malformed() {
    for name in ["budget.xlsx", "budget.ods", "budget.xls"] {
        let bytes = fixture(name);
        let cut = bytes[..bytes.len() / 2].to_vec();
        let err = parse(name, cut).unwrap_err();
        assert!(matches!(err, PluginError::Malformed(_)), "{name}: {err:?}");
    }
    let fods = fixture("budget.fods");
    let err = parse("budget.fods", fods[..fods.len() / 2].to_vec()).unwrap_err();
    assert!(matches!(err, PluginError::Malformed(_)), "{err:?}");
    let err = parse("noise.xlsx", b"\x00\x01garbage".to_vec()).unwrap_err();
    assert!(matches!(err, PluginError::Malformed(_)), "{err:?}");
}

#[test]
fn the_plugin_claims_every_spreadsheet_format() {
    let info = Plugin::info();
    assert_eq!(info.name, "sheets");
    assert!(info.accepts_binary);
    for pattern in [
        "*.xlsx", "*.xlsm", "*.xlsb", "*.xls", "*.xla", "*.ods", "*.fods", "*.csv", "*.tsv",
    ] {
        assert!(info.handles.iter().any(|h| h == pattern), "{pattern}");
    }
}
