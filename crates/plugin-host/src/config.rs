//! `[plugins]`: the plugin host's own section of kebab's config — the
//! sandbox limits of every call, the output bounds, routes, disabled
//! plugins, per-plugin overrides and settings — with its defaults and the
//! bounds each value is held to. The app's config composes this section;
//! nothing here knows the rest of the file.

use std::collections::BTreeMap;

use kebab_core::bounds::{MAX_TIMEOUT_SECS, OutOfBounds, at_most};
use kebab_core::document::Settings;
use kebab_core::http::DownloadCap;
use serde::{Deserialize, Serialize};

use crate::runtime::Limits;
use crate::validate::OutputLimits;

/// Largest plugin memory cap, in MiB: a wasm32 instance addresses 4 GiB.
pub const MAX_MEMORY_MB: u64 = 4 << 10;
/// Largest cap on one file's plugin output, in MiB.
pub const MAX_OUTPUT_MB: u64 = 4 << 10;
/// Largest cap on one text a plugin returns, in KiB (1 GiB).
pub const MAX_TEXT_KB: usize = 1 << 20;

/// `[plugins]`: sandbox limits applied to every plugin call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct PluginsConfig {
    /// Wall-clock budget for one `parse` or `chunk-document` call.
    pub timeout_ms: u64,
    /// Linear-memory cap per plugin instance.
    pub memory_mb: u64,
    /// Cap on everything one file's output holds (all texts together).
    pub max_output_mb: u64,
    /// Cap on blocks per document.
    pub max_blocks: usize,
    /// Cap on chunks per document.
    pub max_chunks: usize,
    /// Cap on any single block or chunk text, in KiB.
    pub max_text_kb: usize,
    /// Cap on every other string a plugin returns (title, language, heading
    /// path entries, symbols, metadata keys), in bytes.
    pub max_field_bytes: usize,
    /// Cap on one document metadata value, in KiB.
    pub max_metadata_value_kb: usize,
    /// Cap on the spans one chunk cites.
    pub max_spans_per_chunk: usize,
    /// Cap on the blocks one chunk lists.
    pub max_blocks_per_chunk: usize,
    /// Cap on heading-path depth.
    pub max_heading_depth: usize,
    /// Cap on document metadata entries.
    pub max_metadata_entries: usize,
    /// Largest component `kebab plugin install` reads (a download or a
    /// file), in MiB.
    pub max_download_mb: u64,
    /// Plugins never routed to (the text plugin still serves as fallback).
    pub disabled: Vec<String>,
    /// Plugins whose files are passed over (`generated`) when their head
    /// carries a generated-file marker (`@generated`, `DO NOT EDIT`):
    /// source code a machine wrote. Default: the built-in `code` plugin.
    pub skip_generated: Vec<String>,
    /// `"glob" = "plugin"`: files matching the glob go to that plugin first.
    pub routes: BTreeMap<String, String>,
    /// Per-plugin overrides of the limits above.
    pub limits: BTreeMap<String, PluginLimits>,
    /// `[plugins.config.<name>]`: settings a plugin reads through the
    /// contract's `settings` import (API ≥ 1.1.0).
    pub config: BTreeMap<String, toml::Table>,
}

/// `[plugins.limits.<name>]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct PluginLimits {
    pub timeout_ms: Option<u64>,
    pub memory_mb: Option<u64>,
    pub max_output_mb: Option<u64>,
    pub max_blocks: Option<usize>,
    pub max_chunks: Option<usize>,
    pub max_text_kb: Option<usize>,
    pub max_field_bytes: Option<usize>,
    pub max_metadata_value_kb: Option<usize>,
    pub max_spans_per_chunk: Option<usize>,
    pub max_blocks_per_chunk: Option<usize>,
    pub max_heading_depth: Option<usize>,
    pub max_metadata_entries: Option<usize>,
}

impl PluginsConfig {
    /// The cap on a component `kebab plugin install` reads.
    pub fn download_cap(&self) -> DownloadCap {
        DownloadCap::mib(self.max_download_mb, "[plugins] max_download_mb")
    }

    /// Limits that apply to plugin `name`.
    pub fn limits_for(&self, name: &str) -> Limits {
        let o = self.limits.get(name).cloned().unwrap_or_default();
        Limits {
            timeout: std::time::Duration::from_millis(o.timeout_ms.unwrap_or(self.timeout_ms)),
            memory_bytes: mib(o.memory_mb.unwrap_or(self.memory_mb)),
        }
    }

    /// The settings of plugin `name`: strings as they are, other values as
    /// their TOML text.
    pub fn settings_for(&self, name: &str) -> Settings {
        self.config
            .get(name)
            .map(|table| {
                table
                    .iter()
                    .map(|(key, value)| {
                        let text = match value {
                            toml::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (key.clone(), text)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Bounds on what plugin `name` may return for one file.
    pub fn output_limits_for(&self, name: &str) -> OutputLimits {
        let o = self.limits.get(name).cloned().unwrap_or_default();
        OutputLimits {
            max_blocks: o.max_blocks.unwrap_or(self.max_blocks),
            max_chunks: o.max_chunks.unwrap_or(self.max_chunks),
            max_text_bytes: o
                .max_text_kb
                .unwrap_or(self.max_text_kb)
                .saturating_mul(1 << 10),
            max_total_bytes: mib(o.max_output_mb.unwrap_or(self.max_output_mb)),
            max_field_bytes: o.max_field_bytes.unwrap_or(self.max_field_bytes),
            max_metadata_value_bytes: o
                .max_metadata_value_kb
                .unwrap_or(self.max_metadata_value_kb)
                .saturating_mul(1 << 10),
            max_spans_per_chunk: o.max_spans_per_chunk.unwrap_or(self.max_spans_per_chunk),
            max_blocks_per_chunk: o.max_blocks_per_chunk.unwrap_or(self.max_blocks_per_chunk),
            max_heading_depth: o.max_heading_depth.unwrap_or(self.max_heading_depth),
            max_metadata_entries: o.max_metadata_entries.unwrap_or(self.max_metadata_entries),
        }
    }
}

/// `mb` MiB in bytes, saturating (a config in force is within
/// [`MAX_MEMORY_MB`]; one built in code may not be).
fn mib(mb: u64) -> usize {
    usize::try_from(mb)
        .unwrap_or(usize::MAX)
        .saturating_mul(1 << 20)
}

/// The limits of a call when nothing is configured: `[plugins]`' defaults.
impl Default for Limits {
    fn default() -> Self {
        PluginsConfig::default().limits_for("")
    }
}

/// The output bounds when nothing is configured: `[plugins]`' defaults.
impl Default for OutputLimits {
    fn default() -> Self {
        PluginsConfig::default().output_limits_for("")
    }
}

impl Default for PluginsConfig {
    fn default() -> Self {
        PluginsConfig {
            timeout_ms: 10_000,
            memory_mb: 512,
            max_output_mb: 256,
            max_blocks: 200_000,
            max_chunks: 100_000,
            max_text_kb: 4096,
            max_field_bytes: 16 << 10,
            max_metadata_value_kb: 1024,
            max_spans_per_chunk: 4096,
            max_blocks_per_chunk: 65_536,
            max_heading_depth: 32,
            max_metadata_entries: 1_000,
            max_download_mb: 64,
            disabled: Vec::new(),
            skip_generated: vec!["code".to_string()],
            routes: Default::default(),
            limits: Default::default(),
            config: Default::default(),
        }
    }
}

impl PluginLimits {
    /// The overrides within the bounds [`PluginsConfig::check_bounds`]
    /// applies to the defaults.
    fn check_bounds(&self) -> Result<(), OutOfBounds> {
        at_most(
            "timeout_ms",
            self.timeout_ms.unwrap_or(0),
            MAX_TIMEOUT_SECS * 1000,
        )?;
        at_most("memory_mb", self.memory_mb.unwrap_or(0), MAX_MEMORY_MB)?;
        at_most(
            "max_output_mb",
            self.max_output_mb.unwrap_or(0),
            MAX_OUTPUT_MB,
        )?;
        at_most("max_text_kb", self.max_text_kb.unwrap_or(0), MAX_TEXT_KB)?;
        at_most(
            "max_metadata_value_kb",
            self.max_metadata_value_kb.unwrap_or(0),
            MAX_TEXT_KB,
        )
    }
}

impl PluginsConfig {
    /// Every limit, default and per plugin, within its bound: the first one
    /// over names its section (`[plugins]`, `[plugins.limits.<name>]`), key
    /// and bound.
    pub fn check_bounds(&self) -> Result<(), String> {
        PluginLimits {
            timeout_ms: Some(self.timeout_ms),
            memory_mb: Some(self.memory_mb),
            max_output_mb: Some(self.max_output_mb),
            max_text_kb: Some(self.max_text_kb),
            max_metadata_value_kb: Some(self.max_metadata_value_kb),
            ..PluginLimits::default()
        }
        .check_bounds()
        .map_err(|e| format!("[plugins] {e}"))?;
        for (name, limits) in &self.limits {
            limits
                .check_bounds()
                .map_err(|e| format!("[plugins.limits.{name}] {e}"))?;
        }
        Ok(())
    }
}
