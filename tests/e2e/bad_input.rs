//! Bad input never stops an ingest: each bad file is counted and named with
//! its reason, every good file is indexed, exit 0 (2 with `--strict`).
//! A file of only whitespace is skipped with a warning, not bad input;
//! Illustrator and PostScript files with binary data are skipped as binary.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{Kb, Unprivileged, item};

fn write(root: &Path, rel: &str, body: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

#[test]
fn every_bad_file_is_reported_and_good_files_are_indexed() {
    let kb = Kb::new();
    let corpus = kb.dir.path().join("corpus");
    write(
        &corpus,
        "good/one.md",
        b"# One\n\nThe pelican rests on the pier.\n",
    );
    write(&corpus, "good/two.txt", b"A walrus sleeps on the ice.\n");
    write(
        &corpus,
        "bad/binary.md",
        b"# Looks like markdown\n\0\0\x01\x02binary tail",
    );
    write(
        &corpus,
        "bad/latin1.md",
        b"# Caf\xe9 notes\n\nna\xefve text\n",
    );
    write(&corpus, "bad/empty.md", b"");
    write(&corpus, "bad/locked.md", b"# Locked\n\nsecret ocelot\n");
    std::fs::set_permissions(
        corpus.join("bad/locked.md"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let huge = std::fs::File::create(corpus.join("bad/huge.md")).unwrap();
    huge.set_len(50 * 1024 * 1024).unwrap();
    std::os::unix::fs::symlink(corpus.join("bad"), corpus.join("bad/loop")).unwrap();
    std::os::unix::fs::symlink(corpus.join("bad/self.md"), corpus.join("bad/self.md")).unwrap();

    // Root reads any file whatever its mode: kebab runs as `nobody` then,
    // so the permission error is real.
    let user = Unprivileged::new(&kb);
    for dir in [corpus.as_path(), &corpus.join("good"), &corpus.join("bad")] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let run = |extra: &[&str]| {
        let mut cmd = user.cmd(&["--json", "ingest"]);
        cmd.arg(&corpus).args(extra);
        let out = cmd.output().expect("run kebab");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let last = stdout.lines().last().unwrap_or_else(|| {
            panic!(
                "no output; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (
            serde_json::from_str::<serde_json::Value>(last).unwrap(),
            out.status.code().unwrap(),
        )
    };

    let (report, code) = run(&[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["new"], 2, "{report:#}");
    assert_eq!(item(&report, "good/one.md")["kind"], "new");
    assert_eq!(item(&report, "good/two.txt")["kind"], "new");

    let binary_item = item(&report, "bad/binary.md");
    assert_eq!(
        (binary_item["kind"].as_str(), binary_item["reason"].as_str()),
        (Some("skipped"), Some("binary"))
    );
    let latin1 = item(&report, "bad/latin1.md");
    assert_eq!(latin1["kind"], "error");
    assert!(
        latin1["error"].as_str().unwrap().contains("invalid UTF-8"),
        "{latin1}"
    );
    assert_eq!(item(&report, "bad/empty.md")["reason"], "empty");
    let huge = item(&report, "bad/huge.md");
    assert_eq!(huge["reason"], "size_exceeded");
    assert!(
        huge["warnings"][0].as_str().unwrap().contains("52.4 MB"),
        "{huge}"
    );
    let locked = item(&report, "bad/locked.md");
    assert_eq!(locked["kind"], "error");
    assert!(
        locked["error"]
            .as_str()
            .unwrap()
            .contains("ermission denied"),
        "{locked}"
    );
    // Symlink loops are cut and counted, not errors.
    for looped in ["bad/loop", "bad/self.md"] {
        let it = item(&report, looped);
        assert_eq!(
            (it["kind"].as_str(), it["reason"].as_str()),
            (Some("skipped"), Some("symlink_loop")),
            "{it}"
        );
    }
    assert_eq!(report["skipped_symlink_loop"], 2);
    assert_eq!(report["skipped_binary"], 1);
    assert_eq!(report["skipped_empty"], 1);
    assert_eq!(report["skipped_size_exceeded"], 1);
    assert_eq!(report["errors"], 2, "{report:#}");
    assert_eq!(
        report["skip_examples"]["binary"],
        serde_json::json!(["bad/binary.md"])
    );

    let (strict, code) = run(&["--strict"]);
    assert_eq!(code, 2, "--strict fails on bad input: {strict}");
    assert_eq!(
        strict["skipped_unchanged"], 2,
        "good files still indexed and now unchanged"
    );

    let (hits, code) = kb.search("pelican", 5);
    assert_eq!(code, 0);
    assert_eq!(hits[0]["doc_path"], "good/one.md");
    let (hits, _) = kb.search("walrus", 5);
    assert_eq!(hits[0]["doc_path"], "good/two.txt");
}

#[test]
fn blank_files_are_skipped_with_a_warning_and_strict_still_passes() {
    let kb = Kb::new();
    let corpus = kb.dir.path().join("corpus");
    write(
        &corpus,
        "good.md",
        b"# Good\n\nThe heron waits by the reeds.\n",
    );
    write(&corpus, "spaces.md", b"   \n\n\t\n");
    write(&corpus, "bom.txt", b"\xef\xbb\xbf\r\n  \r\n");
    let (report, code) = kb.json(&["ingest", corpus.to_str().unwrap(), "--strict"]);
    assert_eq!(code, 0, "--strict does not fail on blank files: {report:#}");
    assert_eq!(
        (&report["new"], &report["errors"], &report["skipped_blank"]),
        (&1.into(), &0.into(), &2.into()),
        "{report:#}"
    );
    assert_eq!(report["skipped_empty"], 0, "{report:#}");
    for rel in ["spaces.md", "bom.txt"] {
        let it = item(&report, rel);
        assert_eq!(
            (it["kind"].as_str(), it["reason"].as_str()),
            (Some("skipped"), Some("blank")),
            "{it}"
        );
        assert!(
            it["warnings"][0].as_str().unwrap().contains("0 chunks"),
            "{it}"
        );
    }
}

#[test]
fn illustrator_and_postscript_files_are_skipped_as_binary() {
    let kb = Kb::new();
    let corpus = kb.dir.path().join("corpus");
    // A modern .ai file is a PDF whose first tens of kilobytes are XML
    // metadata: no NUL byte where the sniff looks.
    let mut ai =
        b"%PDF-1.6\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<</Type/Metadata/Subtype/XML>>stream\n".to_vec();
    ai.extend(b"<rdf:li>Adobe Illustrator artwork layer</rdf:li>\n".repeat(400));
    ai.extend(
        b"endstream\nendobj\n2 0 obj\n<</Filter/FlateDecode>>stream\n\x78\x9c\xed\xbd\x00\x01",
    );
    write(&corpus, "art/logo.ai", &ai);
    // An older .ai (Illustrator 8) is PostScript with binary data later on.
    let mut ps = b"%!PS-Adobe-3.0\n%%Creator: Adobe Illustrator(R) 8.0\n".to_vec();
    ps.extend(b"%%AI8_CreatorVersion: 8.0\n".repeat(600));
    ps.extend(b"%%BeginData: 4 Binary Bytes\n\xff\xd8\xff\xe0\n%%EndData\n");
    write(&corpus, "art/old.ai", &ps);
    // PostScript that is plain text is still text.
    write(
        &corpus,
        "art/plain.ps",
        b"%!PS-Adobe-3.0\n/Times-Roman findfont 12 scalefont setfont\n(capybara) show\n",
    );
    let (report, code) = kb.json(&["ingest", corpus.to_str().unwrap()]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["errors"], 0, "{report:#}");
    assert_eq!(report["skipped_binary"], 2, "{report:#}");
    for (rel, kind) in [
        ("art/logo.ai", "PDF data"),
        ("art/old.ai", "PostScript with binary data"),
    ] {
        let it = item(&report, rel);
        assert_eq!(
            (it["kind"].as_str(), it["reason"].as_str()),
            (Some("skipped"), Some("binary")),
            "{it}"
        );
        assert!(it["warnings"][0].as_str().unwrap().contains(kind), "{it}");
    }
    assert_eq!(item(&report, "art/plain.ps")["kind"], "new");
    let (hits, _) = kb.search("capybara", 3);
    assert_eq!(hits[0]["doc_path"], "art/plain.ps");
}
