//! PDFs generated here with lopdf: page citations, two columns, Korean text,
//! encrypted, image-only and truncated files.

use lopdf::content::{Content, Operation};
use lopdf::encryption::{EncryptionState, EncryptionVersion, Permissions};
use lopdf::{Document, Object, Stream, StringFormat, dictionary};
use serde_json::Value;

use crate::support::{Kb, item};

/// One line of text placed on a page.
pub(crate) struct Line<'a> {
    x: i64,
    y: i64,
    text: &'a str,
}

/// A PDF whose pages hold `pages` lines; Latin text uses Helvetica, any
/// non-ASCII text a Type0 font with a ToUnicode map (code = code point).
pub(crate) fn make_pdf(pages: &[Vec<Line<'_>>], title: Option<&str>) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let latin = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let mut cmap = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    for chunk in (0..256).collect::<Vec<u32>>().chunks(100) {
        cmap.push_str(&format!("{} beginbfrange\n", chunk.len()));
        for hi in chunk {
            cmap.push_str(&format!("<{hi:02X}00> <{hi:02X}FF> <{hi:02X}00>\n"));
        }
        cmap.push_str("endbfrange\n");
    }
    cmap.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    let to_unicode = doc.add_object(Stream::new(dictionary! {}, cmap.into_bytes()));
    let descriptor = doc.add_object(dictionary! {
        "Type" => "FontDescriptor", "FontName" => "NanumGothic", "Flags" => 4,
        "FontBBox" => vec![0.into(), (-200).into(), 1000.into(), 900.into()],
        "ItalicAngle" => 0, "Ascent" => 900, "Descent" => -200, "CapHeight" => 700, "StemV" => 80,
    });
    let cid_font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "NanumGothic",
        "CIDSystemInfo" => dictionary! { "Registry" => Object::string_literal("Adobe"), "Ordering" => Object::string_literal("Identity"), "Supplement" => 0 },
        "FontDescriptor" => descriptor, "DW" => 1000,
    });
    let unicode = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "NanumGothic", "Encoding" => "Identity-H",
        "DescendantFonts" => vec![cid_font.into()], "ToUnicode" => to_unicode,
    });
    let resources =
        doc.add_object(dictionary! { "Font" => dictionary! { "F1" => latin, "F2" => unicode } });
    let mut kids = Vec::new();
    for lines in pages {
        let mut ops = Vec::new();
        for l in lines {
            let (font, text) = if l.text.is_ascii() {
                ("F1", Object::string_literal(l.text))
            } else {
                let codes: Vec<u8> = l.text.encode_utf16().flat_map(u16::to_be_bytes).collect();
                ("F2", Object::String(codes, StringFormat::Hexadecimal))
            };
            ops.push(Operation::new("BT", vec![]));
            ops.push(Operation::new("Tf", vec![font.into(), 11.into()]));
            ops.push(Operation::new("Td", vec![l.x.into(), l.y.into()]));
            ops.push(Operation::new("Tj", vec![text]));
            ops.push(Operation::new("ET", vec![]));
        }
        if lines.is_empty() {
            // An "image-only" page: graphics, no text.
            ops.push(Operation::new(
                "re",
                vec![50.into(), 50.into(), 400.into(), 600.into()],
            ));
            ops.push(Operation::new("f", vec![]));
        }
        let content = doc.add_object(Stream::new(
            dictionary! {},
            Content { operations: ops }.encode().unwrap(),
        ));
        kids.push(Object::from(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content,
        })));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    if let Some(t) = title {
        let info = doc.add_object(dictionary! { "Title" => Object::string_literal(t) });
        doc.trailer.set("Info", info);
    }
    doc.trailer.set(
        "ID",
        vec![
            Object::string_literal("kebab-test-id-01"),
            Object::string_literal("kebab-test-id-01"),
        ],
    );
    doc
}

pub(crate) fn save(doc: &mut Document) -> Vec<u8> {
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

pub(crate) fn paragraph(x: i64, top: i64, text: &str) -> Vec<Line<'_>> {
    text.lines()
        .enumerate()
        .map(|(i, t)| Line {
            x,
            y: top - 14 * i as i64,
            text: t,
        })
        .collect()
}

#[test]
fn pages_are_cited_and_bad_pdfs_are_named() {
    let kb = Kb::new();
    let corpus = kb.dir.path().join("papers");
    std::fs::create_dir_all(&corpus).unwrap();

    let report_pages = vec![
        paragraph(
            72,
            780,
            "Field report on alpine lakes\nWe sampled twelve lakes in summer.",
        ),
        paragraph(72, 780, "Methods\nWater samples were filtered on site."),
        paragraph(
            72,
            780,
            "Results\nThe axolotl population doubled near the inflow.\nTemperature stayed below nine degrees.",
        ),
        paragraph(
            72,
            780,
            "Discussion\nFurther work should repeat the survey.",
        ),
    ];
    std::fs::write(
        corpus.join("report.pdf"),
        save(&mut make_pdf(&report_pages, Some("Alpine lake survey"))),
    )
    .unwrap();

    let mut columns = paragraph(50, 780, "Left column\nglaciers retreat\nmoraine deposits");
    columns.extend(paragraph(
        320,
        780,
        "Right column\nperiglacial soils\ncryoturbation features",
    ));
    std::fs::write(
        corpus.join("columns.pdf"),
        save(&mut make_pdf(&[columns], None)),
    )
    .unwrap();

    let korean = vec![paragraph(
        72,
        780,
        "한국어 형태소 분석기는 서울에서 개발되었다\n빙하 연구 보고서",
    )];
    std::fs::write(
        corpus.join("korean.pdf"),
        save(&mut make_pdf(&korean, Some("한국어 보고서"))),
    )
    .unwrap();

    let mut secret = make_pdf(&[paragraph(72, 780, "classified pangolin data")], None);
    let state = EncryptionState::try_from(EncryptionVersion::V1 {
        document: &secret,
        owner_password: "owner",
        user_password: "hunter2",
        permissions: Permissions::all(),
    })
    .unwrap();
    secret.encrypt(&state).unwrap();
    std::fs::write(corpus.join("encrypted.pdf"), save(&mut secret)).unwrap();

    std::fs::write(
        corpus.join("scanned.pdf"),
        save(&mut make_pdf(&[vec![], vec![]], None)),
    )
    .unwrap();
    let whole = save(&mut make_pdf(&report_pages, None));
    std::fs::write(corpus.join("truncated.pdf"), &whole[..whole.len() / 3]).unwrap();

    let report = kb.ingest(&corpus);
    assert_eq!(report["new"], 3, "{report:#}");
    let report_item = item(&report, "report.pdf");
    assert_eq!(report_item["chunk_count"], 4);
    assert_eq!(report_item["chunker_version"], "pdf-page-v1");

    // An encrypted PDF is not bad input: skipped as unsupported, saying why.
    let enc = item(&report, "encrypted.pdf");
    assert_eq!(
        (&enc["kind"], &enc["reason"]),
        (&"skipped".into(), &"unsupported".into()),
        "{enc}"
    );
    assert!(
        enc["warnings"].to_string().contains("encrypted PDF"),
        "{enc}"
    );
    let scanned = item(&report, "scanned.pdf");
    assert!(
        scanned["error"].as_str().unwrap().contains("no text layer"),
        "{scanned}"
    );
    let truncated = item(&report, "truncated.pdf");
    assert_eq!(truncated["kind"], "error", "{truncated}");
    assert!(
        truncated["error"]
            .as_str()
            .unwrap()
            .starts_with("pdf plugin"),
        "{truncated}"
    );
    assert_eq!(report["errors"], 2);
    assert_eq!(report["skipped_unsupported"], 1);

    let (hits, code) = kb.search("axolotl population", 3);
    assert_eq!(code, 0);
    let top: &Value = &hits[0];
    assert_eq!(top["doc_path"], "report.pdf");
    assert_eq!(top["citation"]["kind"], "page");
    assert_eq!(top["citation"]["page"], 3);
    assert_eq!(top["citation"]["uri"], "report.pdf#page=3");

    for word in ["moraine", "cryoturbation"] {
        let (hits, _) = kb.search(word, 3);
        assert_eq!(hits[0]["citation"]["uri"], "columns.pdf#page=1", "{word}");
    }
    let (hits, _) = kb.search("서울에서", 3);
    assert_eq!(
        hits[0]["citation"]["uri"], "korean.pdf#page=1",
        "Korean text layer extracted"
    );

    let (docs, _) = kb.json(&["list", "docs"]);
    let titles: Vec<&str> = docs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["title"].as_str())
        .collect();
    assert!(
        titles.contains(&"Alpine lake survey") && titles.contains(&"columns"),
        "{titles:?}"
    );

    let doc_id = top["doc_id"].as_str().unwrap();
    let out = kb.run(&["--json", "fetch", "span", doc_id, "1", "3"]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "span_not_supported");
    let (doc, _) = kb.json(&["fetch", "doc", doc_id]);
    assert!(doc["text"].as_str().unwrap().contains("axolotl"));
}
