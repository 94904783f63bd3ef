//! Builds the first-party plugins (and the test-suite's hostile plugin) as
//! `wasm32-wasip2` components so the host can embed them.
//!
//! A nested `cargo build` runs in its own target directory beside the outer
//! one, so the two never contend for a lock and repeated builds are
//! incremental.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const PLUGIN_PACKAGES: &[&str] = &[
    "kebab-plugin-code",
    "kebab-plugin-markdown",
    "kebab-plugin-pdf",
    "kebab-plugin-text",
    "kebab-plugin-yaml",
    "kebab-test-plugin-hostile",
];

/// Test-suite plugins that reuse a first-party plugin crate.
const REUSING_PACKAGES: &[&str] = &["kebab-test-plugin-markdown-next"];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("host/ lives inside the workspace");
    for watched in ["wit", "sdk", "plugins", "tests/plugins", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=KEBAB_WASM_TARGET_DIR");

    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let target_dir = env::var_os("KEBAB_WASM_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| outer_target_dir(&out_dir).join("wasm-plugins"));

    // Two builds: a plugin that reuses another plugin's crate with its export
    // switched off must not share a feature-unified build with that plugin.
    build_components(root, &target_dir, PLUGIN_PACKAGES);
    build_components(root, &target_dir.join("reuse"), REUSING_PACKAGES);
    let wasm_dir = target_dir.join("wasm32-wasip2").join("release");
    println!("cargo:rustc-env=KEBAB_WASM_DIR={}", wasm_dir.display());
    let reuse_dir = target_dir
        .join("reuse")
        .join("wasm32-wasip2")
        .join("release");
    println!(
        "cargo:rustc-env=KEBAB_TEST_WASM_DIR={}",
        reuse_dir.display()
    );
}

/// `cargo build --release --target wasm32-wasip2` of `packages` into
/// `target_dir`.
fn build_components(root: &Path, target_dir: &Path, packages: &[&str]) {
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
