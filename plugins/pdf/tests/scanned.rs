//! Scanned pages: image XObjects found on pages without a text layer and
//! decoded for each filter (fixtures made by real producers: img2pdf,
//! reportlab; see `tests/fixtures/formats/image/make_images.py`), hostile
//! image streams built here with lopdf, and what `parse` answers natively,
//! where the host's OCR is unavailable.

use image::GrayImage;
use image::metadata::Orientation;
use kebab_plugin_pdf::{extract, ocr, raster, scan};
use kebab_plugin_sdk::{PluginError, Span};
use lopdf::content::{Content, Operation};
use lopdf::{Document as Pdf, Object, Stream, dictionary};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/formats/image/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The picture of page `number` of `bytes`.
fn picture(bytes: &[u8], number: u32) -> ocr::PageImage {
    let pdf = Pdf::load_mem(bytes).unwrap();
    let page_id = pdf.get_pages()[&number];
    ocr::render(&pdf, &scan::placements(&pdf, page_id))
        .unwrap()
        .expect("an image on the page")
}

/// Why page 1 of `bytes` has no picture.
fn render_error(bytes: &[u8]) -> String {
    let pdf = Pdf::load_mem(bytes).unwrap();
    ocr::render(&pdf, &scan::placements(&pdf, pdf.get_pages()[&1])).unwrap_err()
}

/// Share of pixels darker than mid-gray.
fn ink(image: &GrayImage) -> f64 {
    let dark = image.pixels().filter(|p| p.0[0] < 128).count();
    dark as f64 / (image.width() * image.height()) as f64
}

/// A scan of black text on white: some ink, mostly paper, and paper (not
/// ink) in the top-left corner, so nothing came out inverted.
fn assert_text_on_white(image: &GrayImage, what: &str) {
    let share = ink(image);
    assert!(
        (0.005..0.3).contains(&share),
        "{what}: {share} of the pixels are dark"
    );
    assert!(
        image.get_pixel(0, 0).0[0] > 200,
        "{what}: the corner is paper"
    );
}

#[test]
fn scanned_pages_decode_for_every_filter() {
    for (name, width, height) in [
        ("scan-dct.pdf", 480, 160),
        ("scan-flate1.pdf", 400, 120),
        ("scan-g4.pdf", 320, 120),
        ("scan-jpx.pdf", 240, 80),
    ] {
        let page = picture(&fixture(name), 1);
        assert_eq!(page.image.dimensions(), (width, height), "{name}");
        assert_eq!(page.orientation, Orientation::NoTransforms, "{name}");
        assert_text_on_white(&page.image, name);
    }
}

#[test]
fn bilevel_scans_decode_to_their_source_pixels() {
    for name in ["scan-g4", "scan-flate1"] {
        let decoded = picture(&fixture(&format!("{name}.pdf")), 1).image;
        let source = image::load_from_memory(&fixture(&format!("{name}.png")))
            .unwrap()
            .into_luma8();
        assert_eq!(decoded.dimensions(), source.dimensions(), "{name}");
        let differ = decoded
            .pixels()
            .zip(source.pixels())
            .filter(|(a, b)| a.0[0] != b.0[0])
            .count();
        assert_eq!(
            differ, 0,
            "{name}: pixels differ from the image img2pdf embedded"
        );
    }
}

#[test]
fn image_only_pdfs_need_the_host_ocr() {
    for name in [
        "scan-dct.pdf",
        "scan-flate1.pdf",
        "scan-g4.pdf",
        "scan-jpx.pdf",
    ] {
        match extract::parse(&fixture(name)) {
            Err(PluginError::Unsupported(m)) => {
                assert!(m.starts_with("OCR unavailable: "), "{name}: {m}");
                assert!(
                    m.contains("(1 of 1 pages have no text layer)"),
                    "{name}: {m}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn a_mixed_pdf_keeps_its_text_page() {
    let bytes = fixture("mixed.pdf");
    let doc = extract::parse(&bytes).unwrap();
    assert_eq!(doc.blocks.len(), 1);
    assert_eq!(doc.blocks[0].span, Span::Page(1));
    assert!(
        doc.blocks[0].text.contains("Annual summary"),
        "{}",
        doc.blocks[0].text
    );
    assert!(
        doc.blocks[0].text.contains("서울 지사의 연간 요약입니다"),
        "{}",
        doc.blocks[0].text
    );
    let meta: Vec<(&str, &str)> = doc
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(meta, vec![("page_count", "2"), ("ocr_pages", "0")]);
    // Its second page is a scan: a reportlab image (ASCII85 over Flate).
    let scan = picture(&bytes, 2);
    assert_eq!(scan.image.dimensions(), (360, 120));
    assert_text_on_white(&scan.image, "mixed.pdf page 2");
}

/// A one-page PDF (turned by `rotate`) painting `image` with `matrix`.
fn pdf_with_image(image: Stream, matrix: [f32; 6], rotate: i64) -> Vec<u8> {
    let mut doc = Pdf::with_version("1.5");
    let pages_id = doc.new_object_id();
    let image_id = doc.add_object(image);
    let content = Content {
        operations: vec![
            Operation::new("q", vec![]),
            Operation::new("cm", matrix.iter().map(|&v| Object::Real(v)).collect()),
            Operation::new("Do", vec![Object::Name(b"Im0".to_vec())]),
            Operation::new("Q", vec![]),
        ],
    };
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 600.into(), 800.into()],
        "Contents" => content_id,
        "Rotate" => rotate,
        "Resources" => dictionary! { "XObject" => dictionary! { "Im0" => image_id } },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

fn gray_image(width: i64, height: i64, extra: Vec<(&str, Object)>, data: Vec<u8>) -> Stream {
    let mut dict = dictionary! {
        "Type" => "XObject", "Subtype" => "Image", "Width" => width, "Height" => height,
        "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
    };
    for (key, value) in extra {
        dict.set(key, value);
    }
    Stream::new(dict, data)
}

#[test]
fn placement_turns_and_flips_follow_the_page() {
    // A 40×20 image, dark left half, painted upside down on a page turned
    // 90°: a viewer shows it rotated.
    let pixels: Vec<u8> = (0..20)
        .flat_map(|_| (0..40).map(|x| if x < 20 { 0 } else { 255 }))
        .collect();
    let bytes = pdf_with_image(
        gray_image(40, 20, vec![], pixels),
        [400.0, 0.0, 0.0, -200.0, 100.0, 500.0],
        90,
    );
    let page = picture(&bytes, 1);
    assert_eq!(page.image.dimensions(), (40, 20), "decoded as stored");
    // Flipped vertically, then turned 90° clockwise by the page.
    assert_eq!(page.orientation, Orientation::Rotate90FlipH);
}

#[test]
fn decode_arrays_and_indexed_palettes_apply() {
    // 1-bit gray with /Decode [1 0]: 1 bits are black.
    let inverted = pdf_with_image(
        gray_image(
            16,
            16,
            vec![
                ("BitsPerComponent", 1.into()),
                ("Decode", vec![1.into(), 0.into()].into()),
            ],
            [0xff, 0x00].repeat(16),
        ),
        [160.0, 0.0, 0.0, 160.0, 0.0, 0.0],
        0,
    );
    let image = picture(&inverted, 1).image;
    assert_eq!(
        (image.get_pixel(0, 0).0[0], image.get_pixel(15, 15).0[0]),
        (0, 255)
    );

    // A two-colour RGB palette, 8-bit indices.
    let palette = Object::Array(vec![
        "Indexed".into(),
        "DeviceRGB".into(),
        1.into(),
        Object::String(
            vec![255, 255, 255, 0, 0, 0],
            lopdf::StringFormat::Hexadecimal,
        ),
    ]);
    let indexed = pdf_with_image(
        gray_image(
            16,
            16,
            vec![("ColorSpace", palette)],
            [vec![0; 8], vec![1; 8]].concat().repeat(16),
        ),
        [160.0, 0.0, 0.0, 160.0, 0.0, 0.0],
        0,
    );
    let image = picture(&indexed, 1).image;
    assert_eq!(
        (image.get_pixel(0, 3).0[0], image.get_pixel(12, 3).0[0]),
        (255, 0)
    );
}

#[test]
fn hostile_image_streams_are_refused_before_decoding() {
    // A header claiming 100 000 × 100 000 pixels with no data.
    let bomb = pdf_with_image(
        gray_image(100_000, 100_000, vec![], vec![]),
        [600.0, 0.0, 0.0, 800.0, 0.0, 0.0],
        0,
    );
    let err = render_error(&bomb);
    assert!(
        err.contains("100000×100000") && err.contains("bound"),
        "{err}"
    );

    // A deflate bomb: 64 MiB of zeros in a few kilobytes, for a 100×100 image.
    let mut zeros = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut zeros, &vec![0u8; 64 << 20]).unwrap();
    let squeezed = zeros.finish().unwrap();
    let flate = pdf_with_image(
        gray_image(100, 100, vec![("Filter", "FlateDecode".into())], squeezed),
        [600.0, 0.0, 0.0, 800.0, 0.0, 0.0],
        0,
    );
    let err = render_error(&flate);
    assert!(err.contains("decompresses past"), "{err}");
    // Only unreadable images: still "no text layer", saying why.
    match extract::parse(&flate) {
        Err(PluginError::Malformed(m)) => {
            assert!(m.starts_with("no text layer (1 pages"), "{m}");
            assert!(m.contains("page 1: a stream decompresses past"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    assert!(raster::check_size(65_535, 65_535).is_err());
}

#[test]
fn truncated_and_unknown_streams_do_not_panic() {
    let jpeg = fixture("text.jpg");
    let cut = pdf_with_image(
        gray_image(
            480,
            160,
            vec![
                ("Filter", "DCTDecode".into()),
                ("ColorSpace", "DeviceRGB".into()),
            ],
            jpeg[..jpeg.len() / 2].to_vec(),
        ),
        [480.0, 0.0, 0.0, 160.0, 0.0, 0.0],
        0,
    );
    let pdf = Pdf::load_mem(&cut).unwrap();
    // A cut JPEG decodes partly or is refused; either way no panic.
    let _ = ocr::render(&pdf, &scan::placements(&pdf, pdf.get_pages()[&1]));

    let unknown = pdf_with_image(
        gray_image(
            100,
            100,
            vec![("Filter", "FooDecode".into())],
            vec![1, 2, 3],
        ),
        [600.0, 0.0, 0.0, 800.0, 0.0, 0.0],
        0,
    );
    match extract::parse(&unknown) {
        Err(PluginError::Malformed(m)) => {
            assert!(m.contains("page 1: unsupported filter FooDecode"), "{m}")
        }
        other => panic!("{other:?}"),
    }

    // Raw samples cut short: the missing rows stay white.
    let short = pdf_with_image(
        gray_image(20, 20, vec![], vec![0; 60]),
        [100.0, 0.0, 0.0, 100.0, 0.0, 0.0],
        0,
    );
    let image = picture(&short, 1).image;
    assert_eq!(
        (image.get_pixel(0, 2).0[0], image.get_pixel(0, 3).0[0]),
        (0, 255)
    );
}

#[test]
fn strips_are_composed_into_one_page() {
    // Two 50×10 strips, one above the other, each 100×20 points.
    let mut doc = Pdf::with_version("1.5");
    let pages_id = doc.new_object_id();
    let top = doc.add_object(gray_image(50, 10, vec![], vec![0; 500]));
    let bottom = doc.add_object(gray_image(50, 10, vec![], vec![255; 500]));
    let ops = |y: i64, name: &str| {
        vec![
            Operation::new("q", vec![]),
            Operation::new(
                "cm",
                vec![
                    100.into(),
                    0.into(),
                    0.into(),
                    20.into(),
                    0.into(),
                    y.into(),
                ],
            ),
            Operation::new("Do", vec![Object::Name(name.as_bytes().to_vec())]),
            Operation::new("Q", vec![]),
        ]
    };
    let content = Content {
        operations: [ops(20, "Top"), ops(0, "Bottom")].concat(),
    };
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 100.into(), 40.into()],
        "Contents" => content_id,
        "Resources" => dictionary! { "XObject" => dictionary! { "Top" => top, "Bottom" => bottom } },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(
            dictionary! { "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1 },
        ),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();

    let page = picture(&bytes, 1);
    assert_eq!(
        page.image.dimensions(),
        (50, 20),
        "at the strips' own resolution"
    );
    assert_eq!(
        page.image.get_pixel(25, 2).0[0],
        0,
        "the top strip is on top"
    );
    assert_eq!(page.image.get_pixel(25, 17).0[0], 255);
}

/// A JBIG2 segment (embedded organisation): number, type, page, data.
fn segment(number: u32, kind: u8, data: &[u8]) -> Vec<u8> {
    let mut out = number.to_be_bytes().to_vec();
    // Type with a one-byte page association, no referred-to segments, page 1.
    out.extend([kind, 0, 1]);
    out.extend((data.len() as u32).to_be_bytes());
    out.extend(data);
    out
}

#[test]
fn jbig2_generic_regions_decode() {
    // The G4 data of scan-g4.pdf as a JBIG2 MMR generic region: JBIG2
    // paints its 1 pixels black, and this G4 data codes the paper as
    // "black" runs (that PDF says /BlackIs1 true), so the page comes out
    // as the source's negative, pixel for pixel.
    let g4_pdf = Pdf::load_mem(&fixture("scan-g4.pdf")).unwrap();
    let g4 = g4_pdf
        .objects
        .values()
        .find_map(|o| o.as_stream().ok().filter(|s| s.dict.has(b"Width")))
        .unwrap()
        .content
        .clone();
    let (width, height) = (320u32, 120u32);
    let mut page_info = [width.to_be_bytes(), height.to_be_bytes(), [0; 4], [0; 4]].concat();
    page_info.extend([0, 0, 0]);
    let mut region = [width.to_be_bytes(), height.to_be_bytes(), [0; 4], [0; 4]].concat();
    region.extend([0, 1]);
    region.extend(&g4);
    let data = [
        segment(0, 48, &page_info),
        segment(1, 38, &region),
        segment(2, 49, &[]),
    ]
    .concat();
    let bytes = pdf_with_image(
        gray_image(
            i64::from(width),
            i64::from(height),
            vec![
                ("Filter", "JBIG2Decode".into()),
                ("BitsPerComponent", 1.into()),
            ],
            data,
        ),
        [320.0, 0.0, 0.0, 120.0, 0.0, 0.0],
        0,
    );
    let decoded = picture(&bytes, 1).image;
    let source = image::load_from_memory(&fixture("scan-g4.png"))
        .unwrap()
        .into_luma8();
    assert_eq!(decoded.dimensions(), source.dimensions());
    let negative = decoded
        .pixels()
        .zip(source.pixels())
        .all(|(a, b)| a.0[0] == 255 - b.0[0]);
    assert!(negative, "JBIG2 page differs from the source's negative");
}
