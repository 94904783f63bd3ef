//! Kubernetes manifests: one chunk per resource, exact spans, symbols, kind
//! filter, and text fallback for what is not a plain manifest.

use std::path::{Path, PathBuf};

use crate::support::{Kb, cited_text, item};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/k8s")
}

#[test]
fn resources_symbols_spans_and_fallbacks() {
    let kb = Kb::new();
    let report = kb.ingest(&fixtures());
    assert_eq!(report["errors"], 0, "{report:#}");

    let shop = item(&report, "shop.yaml");
    assert_eq!(
        (
            shop["chunk_count"].as_u64(),
            shop["chunker_version"].as_str()
        ),
        (Some(3), Some("k8s-manifest-resource-v1"))
    );
    assert_eq!(item(&report, "config-list.yaml")["chunk_count"], 2);
    for (file, reason) in [
        ("helm-deployment.yaml", "Helm template"),
        ("app-settings.yml", "no Kubernetes resource"),
        ("broken.yaml", "malformed"),
    ] {
        let it = item(&report, file);
        assert!(
            it["fallback"].as_str().unwrap().contains(reason),
            "{file}: {it}"
        );
        assert_eq!(it["chunker_version"], "code-text-paragraph-v1");
    }

    let (hits, _) = kb.search("storefront replicas", 10);
    let deploy = hits
        .iter()
        .find(|h| h["citation"]["symbol"] == "Deployment/shop/storefront")
        .unwrap();
    assert_eq!(deploy["citation"]["kind"], "code");
    assert_eq!(deploy["citation"]["lang"], "yaml");
    assert_eq!(
        (
            deploy["citation"]["line_start"].as_u64(),
            deploy["citation"]["line_end"].as_u64()
        ),
        (Some(1), Some(26))
    );
    assert!(
        cited_text(&fixtures(), deploy).starts_with("# Shop frontend"),
        "the comment stays with its resource"
    );
    let svc = hits
        .iter()
        .find(|h| h["citation"]["symbol"] == "Service/shop/storefront")
        .unwrap();
    assert_eq!(
        (
            svc["citation"]["line_start"].as_u64(),
            svc["citation"]["line_end"].as_u64()
        ),
        (Some(28), Some(39))
    );

    let (secret, _) = kb.search("wombat", 5);
    assert_eq!(
        secret[0]["citation"]["symbol"],
        "Secret/shop/payment-gateway"
    );
    assert_eq!(secret[0]["citation"]["line_start"], 11);

    let (only, _) = kb.json(&["search", "storefront", "--kind", "Service"]);
    let only = only["hits"].as_array().unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0]["citation"]["symbol"], "Service/shop/storefront");

    let (annotated, _) = kb.search("pangolin", 5);
    assert_eq!(
        annotated[0]["citation"]["symbol"], "Deployment/shop/storefront",
        "annotations are searchable"
    );
    for (word, file) in [
        ("quokka", "helm-deployment.yaml"),
        ("narwhal", "app-settings.yml"),
        ("marmoset", "broken.yaml"),
    ] {
        let (hits, _) = kb.search(word, 3);
        assert_eq!(hits[0]["doc_path"], file);
        assert_eq!(
            hits[0]["citation"]["lang"], "yaml",
            "fallback keeps the yaml label"
        );
    }
}

/// Resources per file counted by an independent parser (serde_yaml).
fn count_resources(text: &str) -> usize {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_yaml::Value::deserialize(d).unwrap())
        .map(|v| {
            let kind = v.get("kind").and_then(|k| k.as_str()).unwrap_or("");
            match v.get("items").and_then(|i| i.as_sequence()) {
                Some(items) if kind.ends_with("List") => items.len(),
                _ if v.get("apiVersion").is_some() && !kind.is_empty() => 1,
                _ => 0,
            }
        })
        .sum()
}

use serde::Deserialize;

#[test]
fn generated_manifest_set_chunks_match_an_independent_count() {
    let kb = Kb::new();
    let dir = kb.dir.path().join("manifests");
    std::fs::create_dir_all(&dir).unwrap();
    let kinds = [
        "Deployment",
        "Service",
        "ConfigMap",
        "Ingress",
        "CronJob",
        "StatefulSet",
    ];
    let mut expected = 0;
    for i in 0..60 {
        let mut text = format!("# generated manifest {i}\n");
        let docs = 1 + i % 4;
        for d in 0..docs {
            if d > 0 {
                text.push_str("---\n");
            }
            let kind = kinds[(i + d) % kinds.len()];
            text.push_str(&format!(
                "apiVersion: v1\nkind: {kind}\nmetadata:\n  name: app-{i}-{d}\n  namespace: ns{}\n  labels:\n    team: t{}\nspec:\n  value: {}\n",
                i % 3,
                i % 5,
                i * 10 + d
            ));
        }
        if i % 10 == 0 {
            text.push_str("---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s1\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s2\n");
        }
        expected += count_resources(&text);
        std::fs::write(dir.join(format!("m{i:02}.yaml")), text).unwrap();
    }
    let report = kb.ingest(&dir);
    assert_eq!(report["errors"], 0);
    assert_eq!(report["fallbacks"], 0, "{report:#}");
    let chunks: u64 = report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["chunk_count"].as_u64().unwrap())
        .sum();
    assert_eq!(chunks as usize, expected);
    assert!(expected > 150);
}
