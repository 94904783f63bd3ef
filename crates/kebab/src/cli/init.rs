//! `kebab init`: renders [`kebab::api::init`].

use super::prelude::*;

pub(crate) fn init(paths: &Paths, force: bool, json: bool) -> Result<u8> {
    render(json, &kebab::api::init::init(paths, force)?, print_init)
}

fn print_init(done: &kebab::api::init::InitReport) {
    let verb = match (done.config_existed, done.config_written) {
        (false, _) => "created",
        (true, true) => "rewrote",
        (true, false) => "kept",
    };
    outln!("{verb:<8} {}", done.config.display());
    outln!("{:<8} {}", "data", done.data_dir.display());
    outln!(
        "{:<8} {} (schema v{})",
        "opened",
        done.sqlite.display(),
        done.db_schema_version
    );
    outln!(
        "{:<8} edit {} then `kebab ingest <dir>`",
        "hint",
        done.config.display()
    );
}
