//! reStructuredText, AsciiDoc and HTML through the built-in `markup`
//! plugin, Org-mode through the built-in `org` plugin written in Python:
//! each hit carries its section's heading path and cites the exact source
//! lines; code and directive blocks stay whole; HTML scripts and styles
//! are never indexed.

use serde_json::Value;

use crate::support::{Kb, NO_EMBEDDINGS, cited_text, item};

const RST: &str = "\
Requests
========

Sessions
--------

Sessions keep cookies between calls to the albatross endpoint.

.. code-block:: python

   s = requests.Session()
   s.get(\"https://example.org\")
";

const ADOC: &str = "\
= Operator Guide

== Backups

Nightly backups rotate the pelican archive.

[source,bash]
----
kebab-backup --rotate 7
----
";

const ORG: &str = "\
#+TITLE: Lab notebook

* Experiments :lab:
** TODO Centrifuge
Spin the narwhal samples at 3000 rpm.
";

const HTML: &str = "\
<html><head><title>Field notes</title>
<script>var wombatsecret = 1;</script></head>
<body>
<h1>Birds</h1>
<h2>Swifts</h2>
<p>Swifts sleep on the wing
above the flamingo lake.</p>
</body></html>
";

fn hit(kb: &Kb, query: &str) -> Value {
    let (resp, code) = kb.json(&["search", query, "--k", "1"]);
    assert_eq!(code, 0, "{query}: {resp}");
    resp["hits"][0].clone()
}

#[test]
fn document_formats_cite_sections_and_lines() {
    let corpus = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("guide.rst", RST),
        ("ops.adoc", ADOC),
        ("lab.org", ORG),
        ("birds.html", HTML),
    ] {
        std::fs::write(corpus.path().join(name), text).unwrap();
    }
    let kb = Kb::with_config(NO_EMBEDDINGS);
    let report = kb.ingest(corpus.path());
    assert_eq!(report["new"], 4, "{report:#}");
    assert_eq!(report["fallbacks"], 0, "{report:#}");
    for (name, plugin, chunker) in [
        ("guide.rst", "markup", "md-heading-v1"),
        ("ops.adoc", "markup", "md-heading-v1"),
        ("birds.html", "markup", "md-heading-v1"),
        ("lab.org", "org", "org-heading-v1"),
    ] {
        let it = item(&report, name);
        assert_eq!(it["plugin"], plugin, "{it}");
        assert_eq!(it["chunker_version"], chunker, "{it}");
    }

    // A section title with nothing under it but a deeper one joins that
    // section's chunk (md-heading-v1), so the cited range starts there.
    for (query, path, heading, lines) in [
        (
            "albatross",
            "guide.rst",
            vec!["Requests", "Sessions"],
            (1, 12),
        ),
        (
            "pelican",
            "ops.adoc",
            vec!["Operator Guide", "Backups"],
            (1, 10),
        ),
        (
            "narwhal",
            "lab.org",
            vec!["Experiments", "Centrifuge"],
            (3, 5),
        ),
        ("flamingo", "birds.html", vec!["Birds", "Swifts"], (4, 7)),
    ] {
        let h = hit(&kb, query);
        assert_eq!(h["doc_path"], path, "{query}: {h}");
        assert_eq!(
            h["heading_path"],
            serde_json::json!(heading),
            "{query}: {h}"
        );
        let c = &h["citation"];
        assert_eq!(
            (c["start"].as_u64(), c["end"].as_u64()),
            (Some(lines.0), Some(lines.1)),
            "{query}: {h}"
        );
        // The cited lines hold what matched.
        assert!(cited_text(corpus.path(), &h).contains(query), "{query}");
    }
    // The code block stays whole inside its section's chunk.
    let h = hit(&kb, "kebab-backup");
    assert!(
        h["snippet"]
            .as_str()
            .unwrap()
            .contains("kebab-backup --rotate 7"),
        "{h}"
    );
    // Scripts are not text.
    let (resp, code) = kb.json(&["search", "wombatsecret"]);
    assert_eq!(
        (code, resp["hits"].as_array().unwrap().len()),
        (1, 0),
        "{resp}"
    );
    // The title comes from <title> / #+TITLE / the first section.
    let (docs, _) = kb.json(&["list", "docs"]);
    let title = |p: &str| {
        docs.as_array()
            .unwrap()
            .iter()
            .find(|d| d["doc_path"] == p)
            .map(|d| d["title"].clone())
            .unwrap_or_else(|| panic!("{p}: {docs}"))
    };
    assert_eq!(title("birds.html"), "Field notes");
    assert_eq!(title("lab.org"), "Lab notebook");
    assert_eq!(title("guide.rst"), "Requests");
}

/// `kebab plugin test` (validity, determinism, the host's limits) on both
/// built-ins, the Rust one and the Python one alike.
#[test]
fn plugin_test_passes_for_the_markup_and_org_plugins() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let kb = Kb::new();
    for (plugin, files) in [
        (
            "markup",
            vec![
                write("a.rst", RST),
                write("b.adoc", ADOC),
                write("d.html", HTML),
            ],
        ),
        ("org", vec![write("c.org", ORG)]),
    ] {
        let mut args = vec!["plugin", "test", plugin];
        args.extend(files.iter().map(String::as_str));
        let (report, code) = kb.json(&args);
        assert_eq!(code, 0, "{plugin}: {report:#}");
        crate::wire_schema::assert_conforms("plugin_test.v1", &report);
    }
    let (list, _) = kb.json(&["plugin", "list"]);
    let org = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "org")
        .cloned()
        .unwrap_or_else(|| panic!("{list:#}"));
    // Built with componentize-py against the newest contract.
    let (schema, _) = kb.json(&["schema"]);
    assert_eq!(
        (org["origin"].as_str(), &org["api_version"]),
        (Some("built-in"), &schema["capabilities"]["plugin_api"]),
        "{org}"
    );
}
