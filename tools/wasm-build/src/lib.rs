//! Shared by the build scripts that compile plugin crates to
//! `wasm32-wasip2` components: the host's (first-party plugins, embedded in
//! the binary) and the test artifacts' (test-suite plugins, never shipped).
//!
//! A nested `cargo build` runs in its own target directory beside the outer
//! one, so the two never contend for a lock and repeated builds are
//! incremental.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root, from a member's `CARGO_MANIFEST_DIR` and its depth
/// below the root (2 for `crates/plugin-host/` and `tests/artifacts/`).
pub fn workspace_root(depth: usize) -> PathBuf {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    manifest_dir
        .ancestors()
        .nth(depth)
        .expect("the member lives inside the workspace")
        .to_path_buf()
}

/// Where nested builds named `name` go: `KEBAB_WASM_TARGET_DIR/<name>` when
/// set, else `<outer target dir>/<name>`.
pub fn nested_target_dir(name: &str) -> PathBuf {
    println!("cargo:rerun-if-env-changed=KEBAB_WASM_TARGET_DIR");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    env::var_os("KEBAB_WASM_TARGET_DIR")
        .map(|d| PathBuf::from(d).join(name))
        .unwrap_or_else(|| outer_target_dir(&out_dir).join(name))
}

/// Rebuild when any of `paths` (relative to `root`) changes.
pub fn watch(root: &Path, paths: &[&str]) {
    for watched in paths {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
}

/// `cargo build --release --target wasm32-wasip2` of `packages` into
/// `target_dir`; the directory holding the built `.wasm` files.
pub fn build_components(root: &Path, target_dir: &Path, packages: &[&str]) -> PathBuf {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--target-dir",
        ])
        .arg(target_dir);
    for package in packages {
        cmd.args(["-p", package]);
    }
    // The outer build's flags and wrappers (clippy, coverage, host RUSTFLAGS)
    // are not meant for the wasm guest build.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .expect("could not run cargo to build the wasm plugins");
    if !status.success() {
        panic!(
            "building the plugin components {packages:?} failed ({status}).\n\
             hint: the wasm target may be missing: `rustup target add wasm32-wasip2`"
        );
    }
    target_dir.join("wasm32-wasip2").join("release")
}

/// The componentize-py release Python plugins are built with
/// (`scripts/setup.sh` installs it).
pub const COMPONENTIZE_PY: &str = "0.25.1";

/// Build the Python plugin whose module `app.py` is in `app_dir` against
/// the contract folder `wit` into the component `out`, with componentize-py
/// (`KEBAB_COMPONENTIZE_PY` names another executable). Skipped when `out`
/// is newer than `app.py` and the contract.
pub fn build_python_component(app_dir: &Path, wit: &Path, out: &Path) {
    println!("cargo:rerun-if-env-changed=KEBAB_COMPONENTIZE_PY");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let built = modified(out);
    let sources = [app_dir.join("app.py"), wit.join("plugin.wit")];
    if built.is_some() && sources.iter().all(|s| modified(s) < built) {
        return;
    }
    let program = env::var("KEBAB_COMPONENTIZE_PY").unwrap_or_else(|_| "componentize-py".into());
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).expect("create the Python plugin output directory");
    }
    let status = Command::new(&program)
        .current_dir(app_dir)
        .arg("--wit-path")
        .arg(wit)
        .args(["--world", "plugin", "componentize", "app", "-o"])
        .arg(out)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("{program} failed ({s}) building {}", app_dir.display()),
        Err(e) => panic!(
            "cannot run {program} ({e}) to build the Python plugin in {}.\n\
             hint: `pip install componentize-py=={COMPONENTIZE_PY}` (scripts/setup.sh does it)",
            app_dir.display()
        ),
    }
}

/// The file a `cdylib` package builds to: `kebab-plugin-code` →
/// `kebab_plugin_code.wasm`.
pub fn wasm_file(package: &str) -> String {
    format!("{}.wasm", package.replace('-', "_"))
}

/// The outer cargo target directory: `OUT_DIR` is
/// `<target>[/<triple>]/<profile>/build/<pkg>-<hash>/out`, so the target is
/// the parent of the profile directory holding `build/`.
fn outer_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|n| n == "build"))
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.to_path_buf())
}
