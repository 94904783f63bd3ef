//! Paths of the test-suite plugin components, built by this crate's build
//! script (as wasmtime's `test-programs/artifacts` does for its guests).

/// The deliberately misbehaving plugin (`tests/plugins/hostile`).
pub const HOSTILE_WASM: &str = concat!(
    env!("KEBAB_TEST_PLUGINS_DIR"),
    "/kebab_test_plugin_hostile.wasm"
);

/// A newer `markdown` plugin, 1.1.0 (`tests/plugins/markdown-next`).
pub const MARKDOWN_NEXT_WASM: &str = concat!(
    env!("KEBAB_TEST_REUSE_DIR"),
    "/kebab_test_plugin_markdown_next.wasm"
);

/// A plugin built against the frozen 1.0.0 contract without the SDK
/// (`tests/plugins/legacy`).
pub const LEGACY_WASM: &str = concat!(
    env!("KEBAB_TEST_PLUGINS_DIR"),
    "/kebab_test_plugin_legacy.wasm"
);
