//! JSON printing and error reporting shared by every command.

use super::prelude::*;

pub(crate) fn print_json(value: &impl Serialize) -> Result<()> {
    let mut line = serde_json::to_vec(value)?;
    line.push(b'\n');
    super::term::write_out(&line);
    Ok(())
}

/// Print `value` as one JSON line with `--json`, else through `text`.
pub(crate) fn render<T: Serialize>(json: bool, value: &T, text: impl FnOnce(&T)) -> Result<u8> {
    if json {
        print_json(value)?;
    } else {
        text(value);
    }
    Ok(EXIT_OK)
}

/// `error: …` plus a hint, or an `error.v1` line on stderr with `--json`.
/// The code, hint and details come from the library
/// ([`kebab::api::error::report_with_message`]), as the MCP server's do.
pub(crate) fn report_error(err: &anyhow::Error, json: bool) {
    let report = kebab::api::error::report_with_message(err.as_ref(), format!("{err:#}"));
    print_error_report(&report, json);
}

/// Print an `error.v1` body: one JSON line with `--json`, else `error:`
/// and `hint:` lines, all on stderr.
pub(crate) fn print_error_report(report: &ErrorReport, json: bool) {
    if json {
        super::term::json_err(&serde_json::to_string(report).unwrap_or_default());
    } else {
        errln!(
            "error: {}",
            kebab::sanitize::escape_control(&report.message)
        );
        if let Some(h) = &report.hint {
            errln!("  hint: {h}");
        }
    }
}
