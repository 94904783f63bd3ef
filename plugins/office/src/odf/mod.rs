//! OpenDocument text documents and presentations, packaged (`.odt`,
//! `.ott`, `.odp`, `.otp`: a ZIP archive of `content.xml`, `styles.xml`,
//! `meta.xml`) or flat (`.fodt`, `.fodp`: one XML file holding them all).
//!
//! The kind is read from the package's `mimetype` (or the flat file's
//! `office:mimetype`), else from the body element. A package whose
//! manifest lists encryption data is password-protected and refused.

mod content;
mod styles;

use kebab_plugin_sdk::archive::Archive;
use kebab_plugin_sdk::{Document, LogLevel, PluginError, log};

use crate::flow::Item;
use crate::meta::{Field, Properties};
use crate::slides::{self, Slide};
use crate::textdoc::{self, Section};
use crate::xml;
use content::{Collected, TextContent};
use styles::OdfStyles;

/// What an OpenDocument file holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Presentation,
}

/// `meta.xml` elements and the properties they hold.
const META_FIELDS: [(&str, Field); 9] = [
    ("title", Field::Title),
    ("initial-creator", Field::Author),
    ("creator", Field::LastModifiedBy),
    ("creation-date", Field::Created),
    ("date", Field::Modified),
    ("subject", Field::Subject),
    ("keyword", Field::Keywords),
    ("description", Field::Description),
    ("language", Field::Language),
];

/// Parse an OpenDocument package.
pub fn parse_package(mut archive: Archive<'_>) -> Result<Document, PluginError> {
    if let Some(manifest) = read_xml(&mut archive, "META-INF/manifest.xml")?
        && manifest.contains("encryption-data")
    {
        return Err(PluginError::Unsupported(
            "encrypted (password-protected) OpenDocument file: remove the password and ingest again"
                .into(),
        ));
    }
    let mimetype = read_xml(&mut archive, "mimetype")?.unwrap_or_default();
    let content = read_xml(&mut archive, "content.xml")?.ok_or_else(|| {
        PluginError::Malformed("the OpenDocument package has no content.xml".into())
    })?;
    let kind = kind(mimetype.trim(), &content)?;
    let styles_xml = read_xml(&mut archive, "styles.xml")?.unwrap_or_default();
    let mut styles = OdfStyles::default();
    styles.read(&styles_xml, "styles.xml")?;
    styles.read(&content, "content.xml")?;
    let mut props = Properties::default();
    if let Some(meta) = read_xml(&mut archive, "meta.xml")? {
        props.read_xml(&meta, "meta.xml", &META_FIELDS, None)?;
    }
    let slides = kind == Kind::Presentation;
    let mut body = content::read(&content, "content.xml", &styles, slides)?;
    if !slides {
        let masters = content::read(&styles_xml, "styles.xml", &styles, false)?;
        body.groups.extend(masters.groups);
        body.skipped_deep |= masters.skipped_deep;
    }
    let format = if slides { "odp" } else { "odt" };
    Ok(build(body, kind, &styles, props, format))
}

/// The member `name` of an OpenDocument package as text, `None` when
/// absent.
fn read_xml(archive: &mut Archive<'_>, name: &str) -> Result<Option<String>, PluginError> {
    Ok(archive.read(name)?.map(|bytes| xml::decode(&bytes)))
}

/// Parse a flat OpenDocument file.
pub fn parse_flat(bytes: &[u8]) -> Result<Document, PluginError> {
    let xml = xml::decode(bytes);
    let mimetype = root_mimetype(&xml);
    let kind = kind(&mimetype, &xml)?;
    let mut styles = OdfStyles::default();
    styles.read(&xml, "the flat OpenDocument file")?;
    let mut props = Properties::default();
    props.read_xml(
        &xml,
        "the flat OpenDocument file",
        &META_FIELDS,
        Some("meta"),
    )?;
    let slides = kind == Kind::Presentation;
    let body = content::read(&xml, "the flat OpenDocument file", &styles, slides)?;
    let format = if slides { "fodp" } else { "fodt" };
    Ok(build(body, kind, &styles, props, format))
}

/// The document from what the parts held.
fn build(
    body: TextContent,
    kind: Kind,
    styles: &OdfStyles,
    mut props: Properties,
    format: &str,
) -> Document {
    if body.skipped_deep {
        log(
            LogLevel::Warn,
            "content nested deeper than the XML depth bound was left out",
        );
    }
    props.default_lang = styles.lang.clone();
    props.default_east_asian_lang = styles.east_asian_lang.clone();
    match kind {
        Kind::Text => {
            let groups: Vec<(Section, Vec<Item>)> = body
                .groups
                .into_iter()
                .filter_map(|(c, items)| match c {
                    Collected::Text(section) => Some((section, items)),
                    Collected::Shape(_) => None,
                })
                .collect();
            textdoc::document(&body.items, &groups, &props, format)
        }
        Kind::Presentation => slides::document(&deck(body), &props, format),
    }
}

/// The slides of a presentation from its shapes: titles, body shapes and
/// notes; page numbers, dates, headers and footers left out.
fn deck(body: TextContent) -> Vec<Slide> {
    let mut slides: Vec<Slide> = body
        .hidden_pages
        .iter()
        .map(|&hidden| Slide {
            hidden,
            ..Slide::default()
        })
        .collect();
    for (section, items) in &body.groups {
        let Collected::Shape(at) = section else {
            continue;
        };
        let Some(slide) = at.page.checked_sub(1).and_then(|i| slides.get_mut(i)) else {
            continue;
        };
        place_shape(slide, at.class.as_deref(), at.notes, items);
    }
    slides
}

/// Put one shape's content where it belongs on its slide.
fn place_shape(slide: &mut Slide, class: Option<&str>, notes: bool, items: &[Item]) {
    match class {
        Some("page-number" | "footer" | "date-time" | "header" | "handout") => {}
        _ if notes => slide.add_notes(items),
        Some("title") => slide.set_title(items),
        _ => slide.add_shape(items),
    }
}

/// The kind a mimetype names, else the kind of body `content` holds.
fn kind(mimetype: &str, content: &str) -> Result<Kind, PluginError> {
    let kind = match mimetype {
        m if m.starts_with("application/vnd.oasis.opendocument.text") => Some(Kind::Text),
        m if m.starts_with("application/vnd.oasis.opendocument.presentation") => {
            Some(Kind::Presentation)
        }
        "" => None,
        other => {
            return Err(PluginError::Malformed(format!(
                "an OpenDocument file of type {other}, not a text document or presentation"
            )));
        }
    };
    if let Some(kind) = kind {
        return Ok(kind);
    }
    if content.contains("<office:presentation") {
        Ok(Kind::Presentation)
    } else if content.contains("<office:text") {
        Ok(Kind::Text)
    } else {
        Err(PluginError::Malformed(
            "an OpenDocument file with neither a text nor a presentation body".into(),
        ))
    }
}

/// The `office:mimetype` attribute of a flat file's root element.
fn root_mimetype(xml: &str) -> String {
    let Some(start) = xml.find("office:mimetype=") else {
        return String::new();
    };
    let rest = &xml[start + "office:mimetype=".len()..];
    let quote = rest.chars().next().unwrap_or('"');
    rest.get(1..)
        .and_then(|r| r.split(quote).next())
        .unwrap_or("")
        .to_string()
}
