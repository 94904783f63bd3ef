//! `kebab plugin …`: install, list, info, remove, which, new, test.

use super::prelude::*;
use kebab::sanitize::escape_control;

pub(crate) fn kebab_plugin_cmd(app: &App, what: PluginCmd, json: bool) -> Result<u8> {
    use kebab::plugin::install;
    use kebab::plugin::registry::{Origin, RouteReason};
    match what {
        PluginCmd::Install {
            source,
            blake3,
            allow_downgrade,
            replace_builtin,
        } => {
            // Ctrl-C stops a plugin whose info() never returns.
            kebab::interrupt::install_handler();
            let runtime = app.runtime()?;
            let bytes = install::fetch(&source)?;
            let done = install::install(
                &runtime,
                &app.paths.data_dir,
                &source,
                &bytes,
                install::InstallOptions {
                    expected_blake3: blake3.as_deref(),
                    allow_downgrade,
                    replace_builtin,
                },
            )?;
            let plugins = app.plugins()?;
            let stale = app
                .store
                .indexed_docs()?
                .iter()
                .filter(|(path, doc)| {
                    plugins
                        .registry
                        .route(path)
                        .is_some_and(|p| p.name() == done.name)
                        && (doc.plugin_name != done.name
                            || doc.plugin_version != done.version.to_string())
                })
                .count();
            if json {
                print_json(&serde_json::json!({
                    "schema_version": "plugin_install.v1",
                    "name": done.name, "version": done.version.to_string(),
                    "api_version": done.api_version.to_string(), "path": done.path,
                    "unchanged": done.unchanged,
                    "replaces_builtin": done.replaces_builtin,
                    "rolled_back": done.rolled_back.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "documents_to_reindex": stale,
                }))?;
            } else {
                let verb = if done.unchanged {
                    "already installed"
                } else {
                    "installed"
                };
                println!(
                    "{verb} {} {} (plugin API {})",
                    done.name, done.version, done.api_version
                );
                for v in &done.rolled_back {
                    println!("removed {} {v} (rollback)", done.name);
                }
                if let Some(replaced) = &done.replaces_builtin {
                    println!("replaces {replaced} for every file it handles");
                }
                println!("{stale} indexed documents will be re-indexed by the next `kebab ingest`");
            }
            Ok(EXIT_OK)
        }
        PluginCmd::List | PluginCmd::Info { .. } => {
            let plugins = app.plugins()?;
            for w in &plugins.warnings {
                eprintln!("warning: {w}");
            }
            let counts = app.store.docs_per_plugin()?;
            let only = match &what {
                PluginCmd::Info { name } => Some(name.as_str()),
                _ => None,
            };
            let rows: Vec<serde_json::Value> = plugins
                .registry
                .plugins()
                .iter()
                .filter(|p| only.is_none_or(|n| n == p.name()))
                .map(|p| {
                    let (origin, source) = match &p.origin {
                        Origin::BuiltIn => ("built-in", None),
                        Origin::Installed(path) => (
                            "installed",
                            install::install_record(path)
                                .and_then(|r| r["source"].as_str().map(String::from))
                                .or_else(|| Some(path.display().to_string())),
                        ),
                    };
                    serde_json::json!({
                        "name": p.name(), "version": p.plugin.version.to_string(),
                        "api_version": p.plugin.api_version.to_string(), "origin": origin, "source": source,
                        "parser_version": p.plugin.info.parser_version, "chunker_version": p.plugin.info.chunker_version,
                        "patterns": p.plugin.info.handles, "accepts_binary": p.plugin.info.accepts_binary,
                        "blake3": p.plugin.wasm_hash,
                        "disabled": app.config.plugins.disabled.iter().any(|d| d == p.name()),
                        "documents": counts.get(p.name()).copied().unwrap_or(0),
                    })
                })
                .collect();
            if let Some(name) = only
                && rows.is_empty()
            {
                anyhow::bail!("no plugin named {name} (see `kebab plugin list`)");
            }
            if json {
                print_json(
                    &serde_json::json!({ "schema_version": "plugin_list.v1", "plugins": rows }),
                )?;
            } else {
                for r in &rows {
                    println!(
                        "{:<10} {:<8} {:<9} {:>5} docs  {}{}",
                        escape_control(r["name"].as_str().unwrap_or("")),
                        escape_control(r["version"].as_str().unwrap_or("")),
                        r["origin"].as_str().unwrap_or(""),
                        r["documents"],
                        r["patterns"]
                            .as_array()
                            .map(|a| escape_control(
                                &a.iter()
                                    .filter_map(|v| v.as_str())
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            )
                            .into_owned())
                            .unwrap_or_default(),
                        if r["disabled"] == true {
                            "  (disabled)"
                        } else {
                            ""
                        }
                    );
                    if only.is_some() {
                        for key in [
                            "api_version",
                            "parser_version",
                            "chunker_version",
                            "source",
                            "blake3",
                        ] {
                            println!(
                                "  {key:<16} {}",
                                escape_control(r[key].as_str().unwrap_or("-"))
                            );
                        }
                    }
                }
            }
            Ok(EXIT_OK)
        }
        PluginCmd::Remove { name } => {
            let removed = install::remove(&app.paths.data_dir, &name)?;
            let plugins = app.plugins()?;
            let indexed = app.store.indexed_docs()?;
            let owned: Vec<&String> = indexed
                .iter()
                .filter(|(_, d)| d.plugin_name == name)
                .map(|(p, _)| p)
                .collect();
            let rerouted = owned
                .iter()
                .filter(|p| plugins.registry.route(p).is_some())
                .count();
            let orphaned = owned.len() - rerouted;
            if json {
                print_json(&serde_json::json!({
                    "schema_version": "plugin_remove.v1", "name": name,
                    "removed_versions": removed.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "documents": owned.len(), "rerouted": rerouted, "orphaned": orphaned,
                }))?;
            } else {
                let versions: Vec<String> = removed.iter().map(ToString::to_string).collect();
                println!("removed {name} {}", versions.join(", "));
                if rerouted > 0 {
                    println!(
                        "{rerouted} documents will be re-indexed by another plugin on the next `kebab ingest`"
                    );
                }
                if orphaned > 0 {
                    println!(
                        "{orphaned} documents have no plugin now: they stay searchable and are reported as orphaned"
                    );
                }
            }
            Ok(EXIT_OK)
        }
        PluginCmd::Which { path } => {
            let plugins = app.plugins()?;
            let rel = kebab::ids::normalize_workspace_path(&path);
            let explained = plugins.registry.explain(&rel);
            let found = explained.is_some();
            if json {
                let (plugin, reason) = match &explained {
                    Some((p, RouteReason::ConfiguredRoute(g))) => {
                        (Some(p.name()), format!("route {g}"))
                    }
                    Some((p, RouteReason::Pattern { .. })) => {
                        (Some(p.name()), "pattern".to_string())
                    }
                    None => (None, "no plugin claims this file".to_string()),
                };
                print_json(
                    &serde_json::json!({ "schema_version": "plugin_which.v1", "path": rel, "plugin": plugin, "reason": reason }),
                )?;
            } else {
                match explained {
                    Some((p, RouteReason::ConfiguredRoute(glob))) => {
                        println!(
                            "{rel} → {} {} (configured route `{glob}`)",
                            p.name(),
                            p.plugin.version
                        )
                    }
                    Some((p, RouteReason::Pattern { shadowing })) => {
                        let origin = match p.origin {
                            Origin::BuiltIn => "built-in",
                            Origin::Installed(_) => "installed",
                        };
                        println!(
                            "{rel} → {} {} ({origin}, matches {:?})",
                            p.name(),
                            p.plugin.version,
                            p.plugin.info.handles
                        );
                        if !shadowing.is_empty() {
                            println!(
                                "  also claimed by (lower priority): {}",
                                shadowing.join(", ")
                            );
                        }
                    }
                    None => {
                        println!("{rel} → no plugin (the file would be skipped as unsupported)")
                    }
                }
            }
            Ok(if found { EXIT_OK } else { EXIT_NO_HIT })
        }
        PluginCmd::Test { plugin, files } => plugin_test(app, &plugin, &files, json),
        PluginCmd::New { name, lang, dir } => {
            // The SDK of the tree this kebab was built from (Rust projects depend on it by path).
            let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
            let sdk = sdk.canonicalize().unwrap_or(sdk);
            let files = kebab::plugin::scaffold::scaffold(&dir, &name, lang, &sdk)?;
            if json {
                print_json(
                    &serde_json::json!({ "schema_version": "plugin_new.v1", "name": name, "files": files }),
                )?;
            } else {
                for f in &files {
                    println!("created {}", f.display());
                }
                println!(
                    "next: {}/build.sh, then `kebab plugin test <file.wasm> <samples…>` and `kebab plugin install <file.wasm>`",
                    dir.join(&name).display()
                );
            }
            Ok(EXIT_OK)
        }
    }
}

pub(crate) fn plugin_test(app: &App, plugin: &str, files: &[PathBuf], json: bool) -> Result<u8> {
    use kebab::plugin::validate::{SourceShape, validate};
    // A name means the plugin as routing would use it (installed before
    // built-in); a path means that component file.
    let plugins = app.plugins()?;
    let runtime = &plugins.runtime;
    let from_file;
    let loaded = if plugin.ends_with(".wasm") || std::path::Path::new(plugin).is_file() {
        from_file = runtime.load(&kebab::plugin::install::fetch(plugin)?)?;
        &from_file
    } else {
        &plugins
            .registry
            .get(plugin)
            .ok_or_else(|| anyhow::anyhow!("no plugin named {plugin} (see `kebab plugin list`)"))?
            .plugin
    };
    let limits = app.config.plugins.limits_for(&loaded.info.name);
    let settings = std::sync::Arc::new(app.config.plugins.settings_for(&loaded.info.name));
    let policy = kebab::plugin::ChunkPolicy {
        target_tokens: app.config.chunking.target_tokens,
        overlap_tokens: app.config.chunking.overlap_tokens,
    };
    let mut results = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let started = std::time::Instant::now();
        let outcome = std::fs::read(file)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                let run = || {
                    runtime
                        .parse_and_chunk(loaded, &limits, &settings, &name, &bytes, policy)
                        .map_err(|e| e.to_string())
                };
                let first = run()?;
                validate(
                    &first.document,
                    &first.chunks,
                    SourceShape::of(&bytes),
                    &app.config.plugins.output_limits_for(&loaded.info.name),
                )
                .map_err(|e| e.to_string())?;
                let second = run()?;
                if first.document != second.document || first.chunks != second.chunks {
                    return Err("not deterministic: a second run gave different output".to_string());
                }
                Ok((first.document.blocks.len(), first.chunks.len()))
            });
        let ms = started.elapsed().as_millis() as u64;
        results.push(match outcome {
            Ok((blocks, chunks)) => serde_json::json!({ "path": name, "ok": true, "blocks": blocks, "chunks": chunks, "ms": ms }),
            Err(e) => serde_json::json!({ "path": name, "ok": false, "error": e, "ms": ms }),
        });
    }
    let ok = results.iter().all(|r| r["ok"] == true);
    if json {
        print_json(&serde_json::json!({
            "schema_version": "plugin_test.v1", "plugin": loaded.info.name,
            "version": loaded.version.to_string(), "ok": ok, "files": results,
        }))?;
    } else {
        for r in &results {
            if r["ok"] == true {
                println!(
                    "ok    {}: {} blocks, {} chunks, {} ms (x2, identical)",
                    r["path"].as_str().unwrap_or(""),
                    r["blocks"],
                    r["chunks"],
                    r["ms"]
                );
            } else {
                println!(
                    "FAIL  {}: {}",
                    r["path"].as_str().unwrap_or(""),
                    r["error"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(if ok { EXIT_OK } else { EXIT_ERROR })
}
