//! `META-INF/container.xml`: where the package document (the OPF) is. A
//! book may list several renditions; the first OPF rootfile is read, as
//! reading systems do.

use kebab_plugin_sdk::{LogLevel, PluginError, log};
use quick_xml::events::Event;

use crate::members::Members;
use crate::paths;
use crate::xml;

/// The container document's fixed name.
const CONTAINER: &str = "META-INF/container.xml";

/// The media type of a package document.
const OPF_MEDIA_TYPE: &str = "application/oebps-package+xml";

/// The member name of the book's package document. Without a container,
/// the first `.opf` member stands in (with a warning); without either the
/// file is no EPUB.
pub fn package_path(members: &mut Members<'_>) -> Result<String, PluginError> {
    let Some(text) = members.text(CONTAINER)? else {
        return match members.first_ending_with(".opf") {
            Some(opf) => {
                log(
                    LogLevel::Warn,
                    &format!("{CONTAINER} is missing: reading {opf}"),
                );
                Ok(opf)
            }
            None => Err(PluginError::Malformed(format!(
                "not an EPUB: {CONTAINER} is missing"
            ))),
        };
    };
    rootfile(&text)?.ok_or_else(|| {
        PluginError::Malformed(format!("{CONTAINER} names no package document (rootfile)"))
    })
}

/// The `full-path` of the first package rootfile (of any rootfile when none
/// says its media type).
fn rootfile(text: &str) -> Result<Option<String>, PluginError> {
    let mut reader = xml::reader(text);
    let mut fallback = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| PluginError::Malformed(format!("{CONTAINER} is not XML: {e}")))?;
        match event {
            Event::Start(e) | Event::Empty(e) if xml::is(&e, "rootfile") => {
                let Some(path) = xml::attr(&e, "full-path").filter(|p| !p.trim().is_empty()) else {
                    continue;
                };
                let Some(path) = paths::resolve("", &path) else {
                    continue;
                };
                match xml::attr(&e, "media-type") {
                    Some(kind) if kind.trim().eq_ignore_ascii_case(OPF_MEDIA_TYPE) => {
                        return Ok(Some(path));
                    }
                    _ => {
                        fallback.get_or_insert(path);
                    }
                }
            }
            Event::Eof => return Ok(fallback),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_package_rootfile_wins() {
        let xml = r#"<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="other.pdf" media-type="application/pdf"/>
    <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>"#;
        assert_eq!(rootfile(xml).unwrap().as_deref(), Some("OEBPS/content.opf"));
        assert_eq!(rootfile("<container/>").unwrap(), None);
    }
}
