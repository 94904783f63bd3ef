//! `kebab init`: config file, data directory, database.

use super::prelude::*;

pub(crate) fn init(paths: &Paths, force: bool, json: bool) -> Result<u8> {
    let existed = paths.config_file.exists();
    if !existed || force {
        Config::write_default(&paths.config_file)?;
    }
    let app = App::open(Config::load(&paths.config_file)?, paths.clone())?;
    let schema = app.store.schema_version()?;
    if json {
        print_json(&serde_json::json!({
            "schema_version": "init.v1",
            "config": paths.config_file,
            "config_written": !existed || force,
            "data_dir": paths.data_dir,
            "sqlite": paths.sqlite(),
            "db_schema_version": schema,
        }))?;
    } else {
        let verb = if !existed {
            "created"
        } else if force {
            "rewrote"
        } else {
            "kept"
        };
        println!("{verb:<8} {}", paths.config_file.display());
        println!("{:<8} {}", "data", paths.data_dir.display());
        println!(
            "{:<8} {} (schema v{schema})",
            "opened",
            paths.sqlite().display()
        );
        println!(
            "{:<8} edit {} then `kebab ingest <dir>`",
            "hint",
            paths.config_file.display()
        );
    }
    Ok(EXIT_OK)
}
