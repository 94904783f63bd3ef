//! Human-readable output: every line the CLI prints for a person goes
//! through here, so no byte of a document, a file name, a plugin's message
//! or a model's answer reaches the terminal as a control sequence.
//!
//! A document can hold `ESC ]52` (write the clipboard), `ESC ]0` (retitle
//! the window), cursor movement or a carriage return that overwrites a
//! line already printed. [`outln!`] and [`errln!`] format their arguments
//! and write them with every control character except the line break made
//! visible ([`kebab::sanitize::escape_control_keep_lines`]); [`stream`]
//! does the same for the pieces of a streamed answer. JSON output does not
//! come here: it is written by `serde_json`, which escapes control
//! characters itself, and stays lossless.
//!
//! `std`'s print macros are disallowed in this crate (`crates/clippy.toml`),
//! so a new output path cannot skip this module by accident.

#![allow(clippy::disallowed_macros)]

use std::io::Write;

use kebab::sanitize::escape_control_keep_lines;

/// Print a formatted line on stdout, control characters made visible.
macro_rules! outln {
    () => { $crate::cli::term::line_out("") };
    ($($arg:tt)*) => { $crate::cli::term::line_out(&format!($($arg)*)) };
}

/// Print a formatted line on stderr, control characters made visible.
macro_rules! errln {
    () => { $crate::cli::term::line_err("") };
    ($($arg:tt)*) => { $crate::cli::term::line_err(&format!($($arg)*)) };
}

pub(crate) use {errln, outln};

/// Write `text` and a line break to stdout, escaped.
pub(crate) fn line_out(text: &str) {
    let mut line = escape_control_keep_lines(text).into_owned();
    line.push('\n');
    write_out(line.as_bytes());
}

/// Write `text` and a line break to stderr, escaped.
pub(crate) fn line_err(text: &str) {
    write_err(&format!("{}\n", escape_control_keep_lines(text)));
}

/// Write one streamed piece of text to stdout, escaped, and flush it. A
/// control sequence split across pieces is harmless: each control
/// character is escaped on its own.
pub(crate) fn stream(piece: &str) {
    write_out(escape_control_keep_lines(piece).as_bytes());
}

/// Write one line of JSON to stderr as it is (`error.v1` with `--json`).
pub(crate) fn json_err(line: &str) {
    write_err(&format!("{line}\n"));
}

/// Write `bytes` to stdout and flush. When the reader went away (`kebab
/// list docs | head`), the command ends here, quietly and with exit code
/// 0, as Unix tools do; nothing else it could print would be read.
pub(crate) fn write_out(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

/// Write `text` to stderr; a stderr nobody reads is no reason to stop.
fn write_err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
