//! Which plugins exist and which one handles a file.
//!
//! First-party plugins are compiled into the binary. Installed plugins live
//! in `<data_dir>/plugins/<name>/<version>/plugin.wasm`; for each name the
//! highest version present is used, and an installed plugin takes precedence
//! over a built-in one (same name or overlapping patterns).

use std::path::{Path, PathBuf};

use crate::config::PluginsConfig;
use crate::patterns::{Patterns, glob};
use crate::runtime::{LoadError, LoadedPlugin, Runtime};

// `BUILT_IN`: the components embedded in the binary, `(name, bytes)`, from
// the one list in host/build.rs.
include!(concat!(env!("OUT_DIR"), "/builtin_plugins.rs"));

/// The version of the built-in plugin called `name`, if there is one.
pub fn built_in_version(
    runtime: &Runtime,
    name: &str,
) -> Result<Option<semver::Version>, LoadError> {
    match BUILT_IN.iter().find(|(n, _)| *n == name) {
        Some((_, wasm)) => Ok(Some(runtime.load(wasm)?.version)),
        None => Ok(None),
    }
}

/// The plugin every failing file falls back to.
pub const FALLBACK_PLUGIN: &str = "text";

/// Where a plugin came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Embedded in the kebab binary.
    BuiltIn,
    /// Installed under the data directory.
    Installed(PathBuf),
}

/// A loaded plugin and the file patterns it claims.
pub struct RegisteredPlugin {
    pub plugin: LoadedPlugin,
    pub origin: Origin,
    patterns: Patterns,
}

impl RegisteredPlugin {
    fn new(plugin: LoadedPlugin, origin: Origin) -> Result<RegisteredPlugin, LoadError> {
        Ok(RegisteredPlugin {
            patterns: Patterns::new(&plugin.info.handles).map_err(LoadError::BadInfo)?,
            plugin,
            origin,
        })
    }

    /// Plugin name.
    pub fn name(&self) -> &str {
        &self.plugin.info.name
    }

    /// Whether this plugin claims `workspace_path`.
    pub fn handles(&self, workspace_path: &str) -> bool {
        self.patterns.matches(workspace_path)
    }
}

/// All available plugins in routing order (installed first), with the
/// user's routes and disabled list.
pub struct Registry {
    plugins: Vec<RegisteredPlugin>,
    routes: Vec<(String, globset::GlobMatcher, String)>,
    disabled: Vec<String>,
    skip_generated: Vec<String>,
}

/// Why a file goes to the plugin it goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteReason {
    /// A `[plugins.routes]` entry.
    ConfiguredRoute(String),
    /// The plugin's own pattern; `shadowing` names lower-priority plugins
    /// that also claim the file.
    Pattern { shadowing: Vec<String> },
}

/// A component's bytes and their checksum (the plugin cache's key).
type Hashed = (Vec<u8>, String);

impl Registry {
    /// Load built-in plugins and those installed under `data_dir`. Installed
    /// plugins that fail to load are reported in the returned warnings and
    /// left out; a built-in that fails to load is an error. When some
    /// component is not in `runtime`'s cache yet (its code compiled, its
    /// `info()` answered), `before_compiling` runs first, once: it may fill
    /// the cache (kebab compiles in a process of its own), so loading then
    /// compiles only what it left.
    pub fn load(
        runtime: &Runtime,
        data_dir: &Path,
        config: &PluginsConfig,
        before_compiling: &mut dyn FnMut(),
    ) -> Result<(Registry, Vec<String>), LoadError> {
        // Each component read and hashed once, for the cache check and the load.
        let hashed = |bytes: Vec<u8>| {
            let hash = kebab_core::ids::checksum(&bytes);
            (bytes, hash)
        };
        let installed: Vec<(PathBuf, std::io::Result<Hashed>)> =
            installed_components(&plugins_dir(data_dir))
                .into_iter()
                .map(|path| {
                    let read = std::fs::read(&path).map(hashed);
                    (path, read)
                })
                .collect();
        let built_in: Vec<(&[u8], String)> = BUILT_IN
            .iter()
            .map(|(_, wasm)| (*wasm, kebab_core::ids::checksum(wasm)))
            .collect();
        let mut hashes = built_in.iter().map(|(_, h)| h).chain(
            installed
                .iter()
                .filter_map(|(_, read)| read.as_ref().ok().map(|(_, h)| h)),
        );
        if !hashes.all(|h| runtime.is_cached(h)) {
            before_compiling();
        }
        let mut warnings = Vec::new();
        let mut plugins = Vec::new();
        for (path, read) in installed {
            let loaded = read
                .map_err(|e| LoadError::NotAComponent(e.to_string()))
                .and_then(|(bytes, hash)| runtime.load_hashed(&bytes, &hash))
                .and_then(|p| RegisteredPlugin::new(p, Origin::Installed(path.clone())));
            match loaded {
                Ok(p) => plugins.push(p),
                Err(e) => warnings.push(format!(
                    "installed plugin {} not loaded: {e}",
                    path.display()
                )),
            }
        }
        for (wasm, hash) in built_in {
            let p = runtime.load_hashed(wasm, &hash)?;
            if plugins
                .iter()
                .any(|installed: &RegisteredPlugin| installed.name() == p.info.name)
            {
                continue;
            }
            plugins.push(RegisteredPlugin::new(p, Origin::BuiltIn)?);
        }
        let mut routes = Vec::new();
        let mut bad_routes = Vec::new();
        for (pattern, name) in &config.routes {
            match glob(pattern) {
                Ok(g) if plugins.iter().any(|p| p.name() == name) => {
                    routes.push((pattern.clone(), g.compile_matcher(), name.clone()))
                }
                Ok(_) => {
                    bad_routes.push(format!("route `{pattern}` names unknown plugin `{name}`"))
                }
                Err(e) => bad_routes.push(format!("route `{pattern}` is not a valid glob: {e}")),
            }
        }
        warnings.extend(kebab_core::sanitize::summarise_warnings(
            bad_routes,
            "routes not used",
        ));
        Ok((
            Registry {
                plugins,
                routes,
                disabled: config.disabled.clone(),
                skip_generated: config.skip_generated.clone(),
            },
            warnings,
        ))
    }

    fn enabled(&self) -> impl Iterator<Item = &RegisteredPlugin> {
        self.plugins
            .iter()
            .filter(|p| !self.disabled.iter().any(|d| d == p.name()))
    }

    /// Whether files routed to `plugin` are passed over when they carry a
    /// generated-file marker (`[plugins] skip_generated`: source-code
    /// plugins by default).
    pub fn skips_generated(&self, plugin: &RegisteredPlugin) -> bool {
        self.skip_generated.iter().any(|n| n == plugin.name())
    }

    /// The plugin that handles `workspace_path`, if any.
    pub fn route(&self, workspace_path: &str) -> Option<&RegisteredPlugin> {
        self.explain(workspace_path).map(|(p, _)| p)
    }

    /// The plugin that handles `workspace_path` and why.
    pub fn explain(&self, workspace_path: &str) -> Option<(&RegisteredPlugin, RouteReason)> {
        let file_name = workspace_path.rsplit('/').next().unwrap_or(workspace_path);
        for (pattern, matcher, name) in &self.routes {
            if (matcher.is_match(workspace_path) || matcher.is_match(file_name))
                && let Some(p) = self.enabled().find(|p| p.name() == name)
            {
                return Some((p, RouteReason::ConfiguredRoute(pattern.clone())));
            }
        }
        let mut claiming = self.enabled().filter(|p| p.handles(workspace_path));
        let first = claiming.next()?;
        let shadowing = claiming.map(|p| p.name().to_string()).collect();
        Some((first, RouteReason::Pattern { shadowing }))
    }

    /// The fallback (text) plugin.
    pub fn fallback(&self) -> &RegisteredPlugin {
        self.plugins
            .iter()
            .find(|p| p.name() == FALLBACK_PLUGIN)
            .expect("the text plugin is built in")
    }

    /// All plugins in routing order.
    pub fn plugins(&self) -> &[RegisteredPlugin] {
        &self.plugins
    }

    /// A plugin by name.
    pub fn get(&self, name: &str) -> Option<&RegisteredPlugin> {
        self.plugins.iter().find(|p| p.name() == name)
    }
}

/// Where installed plugins live: `<data_dir>/plugins`.
pub fn plugins_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("plugins")
}

/// `<dir>/<name>/<version>/plugin.wasm`, keeping the highest semver per name.
fn installed_components(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(names) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut names: Vec<PathBuf> = names
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    for name_dir in names {
        let Ok(versions) = std::fs::read_dir(&name_dir) else {
            continue;
        };
        let best = versions
            .flatten()
            .filter_map(|e| {
                let v = semver::Version::parse(&e.file_name().to_string_lossy()).ok()?;
                let wasm = e.path().join("plugin.wasm");
                wasm.is_file().then_some((v, wasm))
            })
            .max_by(|a, b| a.0.cmp(&b.0));
        if let Some((_, wasm)) = best {
            out.push(wasm);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_components_pick_the_highest_version() {
        let dir = tempfile::tempdir().unwrap();
        for v in ["1.2.0", "1.10.0", "0.9.0", "not-semver"] {
            let d = dir.path().join("csv").join(v);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("plugin.wasm"), b"x").unwrap();
        }
        std::fs::create_dir_all(dir.path().join("empty/1.0.0")).unwrap();
        let found = installed_components(dir.path());
        assert_eq!(found, vec![dir.path().join("csv/1.10.0/plugin.wasm")]);
    }
}
