//! Plugin management use cases — install, list/info, remove, which, new,
//! test — each returning its typed `plugin_*.v1` result. What a change
//! means for the index (documents to re-index, re-routed, orphaned) is
//! decided here with ingest's own staleness rule, never in a front end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::{ApiError, Session};
use crate::app::App;
use kebab_plugin_host::install::{self, InstallOptions};
use kebab_plugin_host::registry::{Origin, RegisteredPlugin, RouteReason};
use kebab_plugin_host::runtime::LoadedPlugin;
use kebab_plugin_host::scaffold::Lang;
use kebab_plugin_host::validate::{SourceShape, validate};

/// Where a plugin comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum PluginOrigin {
    /// Compiled into this kebab.
    #[serde(rename = "built-in")]
    BuiltIn,
    /// Installed under the data directory.
    #[serde(rename = "installed")]
    Installed,
}

impl From<&Origin> for PluginOrigin {
    fn from(o: &Origin) -> Self {
        match o {
            Origin::BuiltIn => PluginOrigin::BuiltIn,
            Origin::Installed(_) => PluginOrigin::Installed,
        }
    }
}

/// `plugin_install.v1`: what `kebab plugin install` did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginInstallReport {
    pub schema_version: &'static str,
    pub name: String,
    /// The plugin's own version.
    pub version: String,
    /// The plugin API version it was built against.
    pub api_version: String,
    /// Where the component now lives.
    pub path: PathBuf,
    /// The identical component was already installed.
    pub unchanged: bool,
    /// `built-in <name> <version>` when it replaces a built-in plugin.
    pub replaces_builtin: Option<String>,
    /// Other plugins whose files this one now takes (their patterns it
    /// overlaps); installing it needed `--replace-builtin`.
    pub takes_over: Vec<PluginTakeOver>,
    /// Risks of the install itself (a component fetched over plain
    /// `http://` without a `--blake3` pin).
    pub warnings: Vec<String>,
    /// Newer versions removed by a downgrade.
    pub rolled_back: Vec<String>,
    /// Indexed documents the next `kebab ingest` parses again because of
    /// this install (ingest's staleness rule, bytes unchanged).
    pub documents_to_reindex: usize,
}

/// Another plugin's patterns whose files an installed plugin takes.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginTakeOver {
    pub plugin: String,
    pub origin: PluginOrigin,
    /// Its patterns the new plugin's overlap.
    pub patterns: Vec<String>,
}

/// One row of `plugin_list.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginRow {
    pub name: String,
    pub version: String,
    pub api_version: String,
    pub origin: PluginOrigin,
    /// Where an installed plugin came from (path or URL).
    pub source: Option<String>,
    pub parser_version: String,
    pub chunker_version: String,
    /// The file patterns it claims.
    pub patterns: Vec<String>,
    pub accepts_binary: bool,
    /// blake3 of the component.
    pub blake3: String,
    /// Switched off by `[plugins] disabled`.
    pub disabled: bool,
    /// Indexed documents it produced.
    pub documents: u64,
}

/// `plugin_list.v1`: the plugins in routing order (`kebab plugin list`, and
/// `kebab plugin info NAME` with one row).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginList {
    pub schema_version: &'static str,
    pub plugins: Vec<PluginRow>,
    /// Installed plugins that could not be loaded, and bad routes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `plugin_remove.v1`: what `kebab plugin remove` did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginRemoveReport {
    pub schema_version: &'static str,
    pub name: String,
    pub removed_versions: Vec<String>,
    /// Indexed documents the removed plugin produced.
    pub documents: usize,
    /// Of those, documents another plugin handles now.
    pub rerouted: usize,
    /// Of those, documents no plugin handles (they stay searchable).
    pub orphaned: usize,
}

/// `plugin_which.v1`: which plugin a path is routed to, and why.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginWhich {
    pub schema_version: &'static str,
    /// The normalised workspace path.
    pub path: String,
    /// The plugin, or none when no plugin claims the file.
    pub plugin: Option<String>,
    /// `route <glob>`, `pattern`, or `no plugin claims this file`.
    pub reason: String,
    /// The configured `[plugins.routes]` glob that chose the plugin.
    pub route: Option<String>,
    /// The chosen plugin's version.
    pub version: Option<String>,
    pub origin: Option<PluginOrigin>,
    /// The chosen plugin's patterns.
    pub patterns: Vec<String>,
    /// Lower-priority plugins that also claim the file.
    pub shadowing: Vec<String>,
}

/// `plugin_new.v1`: the files `kebab plugin new` wrote.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginNewReport {
    pub schema_version: &'static str,
    pub name: String,
    pub files: Vec<PathBuf>,
}

/// One file of `plugin_test.v1`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginTestFile {
    pub path: String,
    /// Valid output, identical on a second run.
    pub ok: bool,
    pub blocks: Option<usize>,
    pub chunks: Option<usize>,
    /// Why not ok.
    pub error: Option<String>,
    /// Wall time of both runs.
    pub ms: u64,
}

/// `plugin_test.v1`: a plugin run twice on sample files.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PluginTestReport {
    pub schema_version: &'static str,
    pub plugin: String,
    pub version: String,
    /// Every file passed.
    pub ok: bool,
    pub files: Vec<PluginTestFile>,
}

fn row(session: &Session, p: &RegisteredPlugin, documents: u64) -> PluginRow {
    let source = match &p.origin {
        Origin::BuiltIn => None,
        Origin::Installed(path) => install::install_record(path)
            .and_then(|r| r["source"].as_str().map(String::from))
            .or_else(|| Some(path.display().to_string())),
    };
    let info = &p.plugin.info;
    PluginRow {
        name: p.name().to_string(),
        version: p.plugin.version.to_string(),
        api_version: p.plugin.api_version.to_string(),
        origin: (&p.origin).into(),
        source,
        parser_version: info.parser_version.clone(),
        chunker_version: info.chunker_version.clone(),
        patterns: info.handles.clone(),
        accepts_binary: info.accepts_binary,
        blake3: p.plugin.wasm_hash.clone(),
        disabled: session
            .config()
            .plugins
            .disabled
            .iter()
            .any(|d| d == p.name()),
        documents,
    }
}

impl Session {
    /// `kebab plugin warm` (hidden): load every plugin, compiling into the
    /// cache those not compiled yet; what the first run of a command that
    /// loads plugins has done apart ([`crate::app::compile_plugins_apart`]).
    pub fn plugin_warm(&self) -> Result<(), ApiError> {
        App::open(self.config().clone(), self.paths().clone())?.plugins()?;
        Ok(())
    }

    /// `kebab plugin install`: fetch, check and install a component, and
    /// count the documents the next ingest re-parses because of it.
    pub fn plugin_install(
        &self,
        source: &str,
        options: InstallOptions<'_>,
    ) -> Result<PluginInstallReport, ApiError> {
        options.check()?;
        let app = self.app()?;
        let cap = self.config().plugins.download_cap();
        let bytes = install::fetch(source, &app.paths.data_dir, cap, options.expected_blake3)?;
        let before = app.plugins()?;
        let done = install::install(
            &before.runtime,
            &before.registry,
            &app.paths.data_dir,
            source,
            &bytes,
            options,
        )?;
        // The registry as the next ingest will see it, on the same engine.
        let plugins = app.plugins_on(before.runtime)?;
        let version = done.version.to_string();
        let policy_hash = self.config().policy_hash_for(&done.name);
        let documents_to_reindex = app
            .store
            .all_indexed_docs()?
            .iter()
            .filter(|(path, doc)| {
                plugins
                    .registry
                    .route(path)
                    .is_some_and(|p| p.name() == done.name)
                    && crate::ingest::reparses(doc, &done.name, &version, &policy_hash)
            })
            .count();
        Ok(PluginInstallReport {
            schema_version: "plugin_install.v1",
            name: done.name,
            version,
            api_version: done.api_version.to_string(),
            path: done.path,
            unchanged: done.unchanged,
            replaces_builtin: done.replaces_builtin,
            takes_over: done
                .takes_over
                .iter()
                .map(|t| PluginTakeOver {
                    plugin: t.plugin.clone(),
                    origin: (&t.origin).into(),
                    patterns: t.patterns.clone(),
                })
                .collect(),
            warnings: install::transport_warning(source, options)
                .into_iter()
                .collect(),
            rolled_back: done.rolled_back.iter().map(ToString::to_string).collect(),
            documents_to_reindex,
        })
    }

    /// `kebab plugin list` (every plugin) and `kebab plugin info NAME`
    /// (`only`: that one, or [`ApiError::UnknownPlugin`]).
    pub fn plugin_list(&self, only: Option<&str>) -> Result<PluginList, ApiError> {
        let app = self.app()?;
        let plugins = app.plugins()?;
        let counts = app.store.docs_per_plugin()?;
        let rows: Vec<PluginRow> = plugins
            .registry
            .plugins()
            .iter()
            .filter(|p| only.is_none_or(|n| n == p.name()))
            .map(|p| row(self, p, counts.get(p.name()).copied().unwrap_or(0)))
            .collect();
        if let Some(name) = only
            && rows.is_empty()
        {
            return Err(ApiError::UnknownPlugin(name.to_string()));
        }
        Ok(PluginList {
            schema_version: "plugin_list.v1",
            plugins: rows,
            warnings: plugins.warnings,
        })
    }

    /// `kebab plugin remove`: remove every installed version of `name`, and
    /// say what happens to the documents it produced.
    pub fn plugin_remove(&self, name: &str) -> Result<PluginRemoveReport, ApiError> {
        let app = self.app()?;
        let removed = install::remove(&app.paths.data_dir, name)?;
        let plugins = app.plugins()?;
        let indexed = app.store.all_indexed_docs()?;
        let owned: Vec<&String> = indexed
            .iter()
            .filter(|(_, d)| d.plugin_name == name)
            .map(|(p, _)| p)
            .collect();
        let rerouted = owned
            .iter()
            .filter(|p| plugins.registry.route(p).is_some())
            .count();
        Ok(PluginRemoveReport {
            schema_version: "plugin_remove.v1",
            name: name.to_string(),
            removed_versions: removed.iter().map(ToString::to_string).collect(),
            documents: owned.len(),
            rerouted,
            orphaned: owned.len() - rerouted,
        })
    }

    /// `kebab plugin which PATH`: the plugin routing picks for `path`.
    pub fn plugin_which(&self, path: &str) -> Result<PluginWhich, ApiError> {
        let plugins = self.app()?.plugins()?;
        let rel = kebab_core::ids::normalize_workspace_path(path);
        let mut which = PluginWhich {
            schema_version: "plugin_which.v1",
            path: rel.clone(),
            plugin: None,
            reason: "no plugin claims this file".into(),
            route: None,
            version: None,
            origin: None,
            patterns: Vec::new(),
            shadowing: Vec::new(),
        };
        if let Some((p, reason)) = plugins.registry.explain(&rel) {
            which.plugin = Some(p.name().to_string());
            which.version = Some(p.plugin.version.to_string());
            which.origin = Some((&p.origin).into());
            which.patterns = p.plugin.info.handles.clone();
            which.reason = match reason {
                RouteReason::ConfiguredRoute(glob) => {
                    let reason = format!("route {glob}");
                    which.route = Some(glob);
                    reason
                }
                RouteReason::Pattern { shadowing } => {
                    which.shadowing = shadowing;
                    "pattern".into()
                }
            };
        }
        Ok(which)
    }

    /// `kebab plugin new`: a plugin project in `dir/name`. Rust projects
    /// depend on the SDK of the tree this kebab was built from.
    pub fn plugin_new(
        &self,
        dir: &Path,
        name: &str,
        lang: Lang,
    ) -> Result<PluginNewReport, ApiError> {
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk");
        let sdk = sdk.canonicalize().unwrap_or(sdk);
        let files = kebab_plugin_host::scaffold::scaffold(dir, name, lang, &sdk)?;
        Ok(PluginNewReport {
            schema_version: "plugin_new.v1",
            name: name.to_string(),
            files,
        })
    }

    /// `kebab plugin test`: run `plugin` (a name as routing would use it,
    /// or a component file) twice on each file; valid and identical output
    /// passes.
    pub fn plugin_test(
        &self,
        plugin: &str,
        files: &[PathBuf],
    ) -> Result<PluginTestReport, ApiError> {
        let app = self.app()?;
        let plugins = app.plugins()?;
        let from_file;
        let loaded: &LoadedPlugin = if plugin.ends_with(".wasm") || Path::new(plugin).is_file() {
            from_file = plugins
                .runtime
                .load(&install::fetch(
                    plugin,
                    &app.paths.data_dir,
                    self.config().plugins.download_cap(),
                    None,
                )?)
                .map_err(install::InstallError::from)?;
            &from_file
        } else {
            &plugins
                .registry
                .get(plugin)
                .ok_or_else(|| ApiError::UnknownPlugin(plugin.to_string()))?
                .plugin
        };
        let files: Vec<PluginTestFile> = files
            .iter()
            .map(|file| self.test_one(&plugins.runtime, loaded, file))
            .collect();
        Ok(PluginTestReport {
            schema_version: "plugin_test.v1",
            plugin: loaded.info.name.clone(),
            version: loaded.version.to_string(),
            ok: files.iter().all(|f| f.ok),
            files,
        })
    }

    fn test_one(
        &self,
        runtime: &kebab_plugin_host::runtime::Runtime,
        loaded: &LoadedPlugin,
        file: &Path,
    ) -> PluginTestFile {
        let config = &self.config().plugins;
        let name = &loaded.info.name;
        let path = file.display().to_string();
        let started = Instant::now();
        let outcome = std::fs::read(file)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                let settings = Arc::new(config.settings_for(name));
                let run = || {
                    runtime
                        .parse_and_chunk(
                            loaded,
                            &config.limits_for(name),
                            &settings,
                            &path,
                            &bytes,
                            self.config().chunk_policy(),
                        )
                        .map_err(|e| e.to_string())
                };
                let first = run()?;
                let shape = SourceShape::of(&bytes);
                validate(
                    &first.document,
                    &first.chunks,
                    shape,
                    &config.output_limits_for(name),
                )
                .map_err(|e| e.to_string())?;
                let second = run()?;
                if first.document != second.document || first.chunks != second.chunks {
                    return Err("not deterministic: a second run gave different output".to_string());
                }
                Ok((first.document.blocks.len(), first.chunks.len()))
            });
        let ms = started.elapsed().as_millis() as u64;
        match outcome {
            Ok((blocks, chunks)) => PluginTestFile {
                path,
                ok: true,
                blocks: Some(blocks),
                chunks: Some(chunks),
                error: None,
                ms,
            },
            Err(e) => PluginTestFile {
                path,
                ok: false,
                blocks: None,
                chunks: None,
                error: Some(e),
                ms,
            },
        }
    }
}
