//! Plugin routing cannot be hijacked silently: a plugin whose patterns
//! claim files a built-in or another installed plugin handles (`*`, `**`,
//! `*.md`, `docs/**`…) installs only with `--replace-builtin` (alias
//! `--take-over`), and the install says what it takes over.

use serde_json::Value;

use crate::support::{Kb, hostile_variant};

/// `kebab plugin which PATH --json`'s plugin.
fn routed_to(kb: &Kb, path: &str) -> Value {
    kb.json(&["plugin", "which", path]).0["plugin"].clone()
}

#[test]
fn claiming_another_plugins_files_needs_consent_and_is_reported() {
    let kb = Kb::new();
    for (i, handles) in [
        "*",
        "**",
        "**/*",
        "*.*",
        "*.md",
        "*.MD",
        "**/*.md",
        "*.m?",
        "[!.]*",
        "docs/**",
        "README.md",
        "*.csv,*.markdown",
    ]
    .iter()
    .enumerate()
    {
        let wasm = hostile_variant(kb.dir.path(), &format!("name=grab{i};handles={handles};"));
        let out = kb.run(&["plugin", "install", wasm.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{handles}: {stderr}");
        assert!(
            stderr.contains("--replace-builtin") && stderr.contains("markdown (built-in)"),
            "{handles}: {stderr}"
        );
    }
    let (refused, code) = {
        let wasm = hostile_variant(kb.dir.path(), "name=grabber;handles=*;");
        let out = kb.run(&["--json", "plugin", "install", wasm.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (
            serde_json::from_str::<Value>(stderr.lines().last().unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}: {stderr}")),
            out.status.code(),
        )
    };
    assert_eq!(code, Some(2));
    assert_eq!(refused["code"], "plugin_refused", "{refused}");
    let message = refused["message"].as_str().unwrap_or_default();
    for taken in [
        "markdown (built-in): *.md",
        "text (built-in)",
        "yaml (built-in)",
    ] {
        assert!(message.contains(taken), "{taken}: {message}");
    }
    assert!(
        std::fs::read_dir(kb.data_dir().join("plugins"))
            .map(|d| d.flatten().all(|e| !e.path().join("0.1.0").exists()))
            .unwrap_or(true),
        "nothing installed"
    );
    assert_eq!(routed_to(&kb, "notes/a.md"), "markdown");

    // With consent it installs and names what it takes, per plugin.
    let wasm = hostile_variant(kb.dir.path(), "name=grabber;handles=*;");
    let (done, code) = kb.json(&[
        "plugin",
        "install",
        wasm.to_str().unwrap(),
        "--replace-builtin",
    ]);
    assert_eq!(code, 0, "{done}");
    let taken: Vec<&Value> = done["takes_over"].as_array().unwrap().iter().collect();
    let markdown = taken
        .iter()
        .find(|t| t["plugin"] == "markdown")
        .unwrap_or_else(|| panic!("{done}"));
    assert_eq!(markdown["origin"], "built-in");
    assert!(
        markdown["patterns"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "*.md"),
        "{done}"
    );
    for name in ["text", "yaml", "code", "pdf"] {
        assert!(taken.iter().any(|t| t["plugin"] == name), "{name}: {done}");
    }
    assert_eq!(routed_to(&kb, "notes/a.md"), "grabber");
    assert_eq!(routed_to(&kb, "a.txt"), "grabber");
    let out = kb.run(&["plugin", "remove", "grabber"]);
    assert_eq!(out.status.code(), Some(0));

    // The text report names it too; `--take-over` is the same consent.
    let wasm = hostile_variant(kb.dir.path(), "name=mdgrab;handles=*.md;");
    let out = kb.run(&["plugin", "install", wasm.to_str().unwrap(), "--take-over"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout.contains("takes over from markdown (built-in)") && stdout.contains("*.md"),
        "{stdout}"
    );
}

#[test]
fn overlapping_another_installed_plugin_needs_consent_and_unrelated_patterns_do_not() {
    let kb = Kb::new();
    // `*.hostile` takes nothing from anyone: no flag, no take-over.
    let hostile = hostile_variant(kb.dir.path(), "name=hostile;");
    let (done, code) = kb.json(&["plugin", "install", hostile.to_str().unwrap()]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["takes_over"], serde_json::json!([]), "{done}");

    let rival = hostile_variant(kb.dir.path(), "name=rival;handles=**/*.hostile;");
    let out = kb.run(&["plugin", "install", rival.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("hostile (installed): *.hostile") && stderr.contains("--replace-builtin"),
        "{stderr}"
    );
    assert_eq!(routed_to(&kb, "x.hostile"), "hostile");
    let (done, code) = kb.json(&[
        "plugin",
        "install",
        rival.to_str().unwrap(),
        "--replace-builtin",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["takes_over"][0]["plugin"], "hostile", "{done}");
    assert_eq!(done["takes_over"][0]["origin"], "installed", "{done}");

    // Upgrading a plugin is not taking over from itself.
    let newer = hostile_variant(kb.dir.path(), "name=hostile;version=0.2.0;");
    let out = kb.run(&["plugin", "install", newer.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "rival now claims *.hostile: {stderr}"
    );
    assert!(stderr.contains("rival (installed)"), "{stderr}");
}
