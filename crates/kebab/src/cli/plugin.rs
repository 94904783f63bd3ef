//! `kebab plugin …`: renders the [`kebab::api::plugins`] use cases
//! (install, list, info, remove, which, new, test).

use super::prelude::*;
use kebab::api::plugins::{
    PluginInstallReport, PluginList, PluginNewReport, PluginOrigin, PluginRemoveReport,
    PluginTestReport, PluginWhich,
};
use kebab::plugin::install::InstallOptions;
use kebab::sanitize::escape_control;

pub(crate) fn kebab_plugin_cmd(session: &Session, what: PluginCmd, json: bool) -> Result<u8> {
    match what {
        PluginCmd::Install {
            source,
            blake3,
            allow_downgrade,
            replace_builtin,
        } => {
            // Ctrl-C stops a plugin whose info() never returns.
            kebab::interrupt::install_handler();
            let options = InstallOptions {
                expected_blake3: blake3.as_deref(),
                allow_downgrade,
                replace_builtin,
            };
            let done = session.plugin_install(&source, options)?;
            // Loud in both modes: stderr, beside the report's `warnings`.
            for w in &done.warnings {
                errln!("warning: {w}");
            }
            render(json, &done, print_install)
        }
        PluginCmd::Warm => {
            session.plugin_warm()?;
            Ok(EXIT_OK)
        }
        PluginCmd::List => render(json, &session.plugin_list(None)?, |l| print_list(l, false)),
        PluginCmd::Info { name } => render(json, &session.plugin_list(Some(&name))?, |l| {
            print_list(l, true)
        }),
        PluginCmd::Remove { name } => render(json, &session.plugin_remove(&name)?, print_remove),
        PluginCmd::Which { path } => {
            let which = session.plugin_which(&path)?;
            render(json, &which, print_which)?;
            Ok(if which.plugin.is_some() {
                EXIT_OK
            } else {
                EXIT_NO_HIT
            })
        }
        PluginCmd::Test { plugin, files } => {
            let report = session.plugin_test(&plugin, &files)?;
            render(json, &report, print_test)?;
            Ok(if report.ok { EXIT_OK } else { EXIT_ERROR })
        }
        PluginCmd::New { name, lang, dir } => {
            let made = session.plugin_new(&dir, &name, lang)?;
            render(json, &made, |m| print_new(m, &dir))
        }
    }
}

fn print_install(done: &PluginInstallReport) {
    let verb = if done.unchanged {
        "already installed"
    } else {
        "installed"
    };
    outln!(
        "{verb} {} {} (plugin API {})",
        done.name,
        done.version,
        done.api_version
    );
    for v in &done.rolled_back {
        outln!("removed {} {v} (rollback)", done.name);
    }
    if let Some(replaced) = &done.replaces_builtin {
        outln!("replaces {replaced} for every file it handles");
    }
    for t in &done.takes_over {
        let origin = match t.origin {
            PluginOrigin::BuiltIn => "built-in",
            PluginOrigin::Installed => "installed",
        };
        outln!(
            "takes over from {} ({origin}) the files of: {}",
            escape_control(&t.plugin),
            escape_control(&t.patterns.join(", "))
        );
    }
    outln!(
        "{} indexed documents will be re-indexed by the next `kebab ingest`",
        done.documents_to_reindex
    );
}

fn origin_name(origin: PluginOrigin) -> &'static str {
    match origin {
        PluginOrigin::BuiltIn => "built-in",
        PluginOrigin::Installed => "installed",
    }
}

fn print_list(list: &PluginList, details: bool) {
    for w in &list.warnings {
        errln!("warning: {}", escape_control(w));
    }
    for r in &list.plugins {
        outln!(
            "{:<10} {:<8} {:<9} {:>5} docs  {}{}",
            escape_control(&r.name),
            escape_control(&r.version),
            origin_name(r.origin),
            r.documents,
            escape_control(&r.patterns.join(" ")),
            if r.disabled { "  (disabled)" } else { "" }
        );
        if details {
            for (key, value) in [
                ("api_version", Some(&r.api_version)),
                ("parser_version", Some(&r.parser_version)),
                ("chunker_version", Some(&r.chunker_version)),
                ("source", r.source.as_ref()),
                ("blake3", Some(&r.blake3)),
            ] {
                outln!(
                    "  {key:<16} {}",
                    escape_control(value.map_or("-", String::as_str))
                );
            }
        }
    }
}

fn print_remove(removed: &PluginRemoveReport) {
    outln!(
        "removed {} {}",
        removed.name,
        removed.removed_versions.join(", ")
    );
    if removed.rerouted > 0 {
        outln!(
            "{} documents will be re-indexed by another plugin on the next `kebab ingest`",
            removed.rerouted
        );
    }
    if removed.orphaned > 0 {
        outln!(
            "{} documents have no plugin now: they stay searchable and are reported as orphaned",
            removed.orphaned
        );
    }
}

fn print_which(which: &PluginWhich) {
    let rel = escape_control(&which.path);
    let (Some(plugin), Some(version)) = (&which.plugin, &which.version) else {
        outln!("{rel} → no plugin (the file would be skipped as unsupported)");
        return;
    };
    let plugin = escape_control(plugin);
    if let Some(glob) = &which.route {
        outln!(
            "{rel} → {plugin} {version} (configured route `{}`)",
            escape_control(glob)
        );
        return;
    }
    outln!(
        "{rel} → {plugin} {version} ({}, matches {})",
        which.origin.map_or("", origin_name),
        escape_control(&format!("{:?}", which.patterns))
    );
    if !which.shadowing.is_empty() {
        outln!(
            "  also claimed by (lower priority): {}",
            escape_control(&which.shadowing.join(", "))
        );
    }
}

fn print_test(report: &PluginTestReport) {
    for f in &report.files {
        match (&f.error, f.blocks, f.chunks) {
            (None, Some(blocks), Some(chunks)) => outln!(
                "ok    {}: {blocks} blocks, {chunks} chunks, {} ms (x2, identical)",
                escape_control(&f.path),
                f.ms
            ),
            (error, ..) => outln!(
                "FAIL  {}: {}",
                escape_control(&f.path),
                escape_control(error.as_deref().unwrap_or(""))
            ),
        }
    }
}

fn print_new(made: &PluginNewReport, dir: &std::path::Path) {
    for f in &made.files {
        outln!("created {}", f.display());
    }
    outln!(
        "next: {}/build.sh, then `kebab plugin test <file.wasm> <samples…>` and `kebab plugin install <file.wasm>`",
        dir.join(&made.name).display()
    );
}
