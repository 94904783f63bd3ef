//! `kebab doctor`: renders [`kebab::api::Session::doctor`]'s checks
//! (`doctor.v1`); exit 3 when one fails.

use super::prelude::*;

pub(crate) fn doctor(
    session: &Session,
    config_error: Option<kebab::config::ConfigError>,
    json: bool,
) -> Result<u8> {
    let report = session.doctor(config_error.as_ref())?;
    if json {
        print_json(&report)?;
    } else {
        for c in &report.checks {
            outln!(
                "{} {:<20} {}",
                if c.ok { "✓" } else { "✗" },
                c.name,
                c.detail
            );
            if let Some(h) = &c.hint {
                outln!("  hint: {h}");
            }
        }
        let failed = report.checks.iter().filter(|c| !c.ok).count();
        if failed > 0 {
            outln!(
                "{failed} check{} failed.",
                if failed == 1 { "" } else { "s" }
            );
        }
    }
    Ok(if report.ok { EXIT_OK } else { EXIT_UNHEALTHY })
}
