//! Paths of the test-suite plugin components, built by this crate's build
//! script (as wasmtime's `test-programs/artifacts` does for its guests).

/// The deliberately misbehaving plugin (`tests/plugins/hostile`).
pub const HOSTILE_WASM: &str = concat!(
    env!("KEBAB_TEST_HOSTILE_DIR"),
    "/kebab_test_plugin_hostile.wasm"
);

/// A newer `markdown` plugin, 1.1.0 (`tests/plugins/markdown-next`).
pub const MARKDOWN_NEXT_WASM: &str = concat!(
    env!("KEBAB_TEST_REUSE_DIR"),
    "/kebab_test_plugin_markdown_next.wasm"
);
