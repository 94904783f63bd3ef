//! Builds the test-suite plugins as `wasm32-wasip2` components for the
//! host's tests and benches (a dev-dependency, so never in a release).

use kebab_wasm_build::{build_components, nested_target_dir, watch, workspace_root};

fn main() {
    let root = workspace_root(2);
    watch(
        &root,
        &["wit", "sdk", "plugins", "tests/plugins", "Cargo.lock"],
    );
    let target = nested_target_dir("wasm-test-plugins");
    let plugins = build_components(
        &root,
        &target,
        &["kebab-test-plugin-hostile", "kebab-test-plugin-legacy"],
    );
    // markdown-next reuses the markdown crate with its export switched off:
    // it must not share a feature-unified build with anything else.
    let reuse = build_components(
        &root,
        &target.join("reuse"),
        &["kebab-test-plugin-markdown-next"],
    );
    println!(
        "cargo:rustc-env=KEBAB_TEST_PLUGINS_DIR={}",
        plugins.display()
    );
    println!("cargo:rustc-env=KEBAB_TEST_REUSE_DIR={}", reuse.display());
}
