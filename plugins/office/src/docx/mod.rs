//! Word documents in Office Open XML (`.docx`, `.docm`, `.dotx`, `.dotm`):
//! the main part found through the package relationships, its styles and
//! numbering, then — after the body — its headers and footers (each
//! distinct one once, in the order sections reference them), footnotes,
//! endnotes and comments, each under its own heading path.

mod body;
mod numbering;
mod styles;

use std::collections::HashSet;

use kebab_plugin_sdk::{Document, LogLevel, PluginError, log};

use crate::flow::Item;
use crate::meta::{Field, Properties};
use crate::opc::{Package, Rel};
use crate::textdoc::{self, Section};
use body::PartContent;
use numbering::Numbering;
use styles::Styles;

/// Parts read after the body: relationship kind, the element that holds
/// one note, and the section it goes under.
const NOTE_PARTS: [(&str, &str, Section); 3] = [
    ("footnotes", "footnote", Section::Footnotes),
    ("endnotes", "endnote", Section::Endnotes),
    ("comments", "comment", Section::Comments),
];

/// Parse a Word package.
pub fn parse(mut package: Package<'_>) -> Result<Document, PluginError> {
    let main = package
        .rel_target("", "officeDocument")?
        .unwrap_or_else(|| "word/document.xml".to_string());
    let xml = package.part(&main)?.ok_or_else(|| {
        PluginError::Malformed(format!(
            "the Word package has no main document part ({main})"
        ))
    })?;
    let rels = package.rels(&main)?;
    let styles = match part_of(&mut package, &rels, "styles")? {
        Some((name, xml)) => Styles::parse(&xml, &name)?,
        None => Styles::default(),
    };
    let mut numbering = match part_of(&mut package, &rels, "numbering")? {
        Some((name, xml)) => Numbering::parse(&xml, &name)?,
        None => Numbering::default(),
    };
    let mut reader = PartReader {
        styles: &styles,
        numbering: &mut numbering,
        skipped_deep: false,
    };
    let content = reader.read(&xml, &main, None)?;
    let mut groups = headers_and_footers(&mut package, &rels, &content.header_refs, &mut reader)?;
    for (kind, element, section) in NOTE_PARTS {
        if let Some((name, xml)) = part_of(&mut package, &rels, kind)? {
            let notes = reader.read(&xml, &name, Some(element))?.groups;
            groups.extend(notes.into_iter().map(|note| (section, note)));
        }
    }
    let skipped_deep = reader.skipped_deep;
    let props = package.core_properties()?;
    Ok(finish(
        &content.items,
        &groups,
        props,
        &styles,
        skipped_deep,
        "docx",
    ))
}

/// Parse a Word 2003 XML document (WordprocessingML in one XML file, as
/// Word's "XML Document" saves it, sometimes named `.doc`): styles and
/// body in one part; its list definitions are not read, so list items
/// read as plain paragraphs.
pub fn parse_wordml(xml: &str) -> Result<Document, PluginError> {
    let styles = Styles::parse(xml, "WordprocessingML")?;
    let content = body::read(
        xml,
        "WordprocessingML",
        &styles,
        &mut Numbering::default(),
        None,
    )?;
    let mut props = Properties::default();
    props.read_xml(
        xml,
        "WordprocessingML",
        &[
            ("Title", Field::Title),
            ("Author", Field::Author),
            ("Subject", Field::Subject),
        ],
        Some("DocumentProperties"),
    )?;
    Ok(finish(
        &content.items,
        &[],
        props,
        &styles,
        content.skipped_deep,
        "wordml",
    ))
}

/// The document from its body, groups and properties.
fn finish(
    items: &[Item],
    groups: &[(Section, Vec<Item>)],
    mut props: Properties,
    styles: &Styles,
    skipped_deep: bool,
    format: &str,
) -> Document {
    if skipped_deep {
        log(
            LogLevel::Warn,
            "content nested deeper than the XML depth bound was left out",
        );
    }
    props.default_lang = styles.lang.clone();
    props.default_east_asian_lang = styles.east_asian_lang.clone();
    textdoc::document(items, groups, &props, format)
}

/// Reads parts with the document's styles and numbering.
struct PartReader<'s> {
    styles: &'s Styles,
    numbering: &'s mut Numbering,
    skipped_deep: bool,
}

impl PartReader<'_> {
    fn read(
        &mut self,
        xml: &str,
        part: &str,
        group: Option<&str>,
    ) -> Result<PartContent, PluginError> {
        let content = body::read(xml, part, self.styles, self.numbering, group)?;
        self.skipped_deep |= content.skipped_deep;
        if content.truncated {
            log(
                LogLevel::Warn,
                &format!("{part} has more paragraphs than the block bound: the rest was not read"),
            );
        }
        Ok(content)
    }
}

/// The name and text of the part the main part relates to as `kind`.
fn part_of(
    package: &mut Package<'_>,
    rels: &[Rel],
    kind: &str,
) -> Result<Option<(String, String)>, PluginError> {
    let Some(rel) = rels.iter().find(|r| r.kind == kind) else {
        return Ok(None);
    };
    Ok(package
        .part(&rel.target)?
        .map(|xml| (rel.target.clone(), xml)))
}

/// The headers, then the footers, each part once: in the order the
/// sections reference them, or the relationships' order when none does.
fn headers_and_footers(
    package: &mut Package<'_>,
    rels: &[Rel],
    refs: &[(String, String)],
    reader: &mut PartReader<'_>,
) -> Result<Vec<(Section, Vec<Item>)>, PluginError> {
    let mut out = Vec::new();
    for (kind, section) in [("header", Section::Header), ("footer", Section::Footer)] {
        let mut targets: Vec<&str> = refs
            .iter()
            .filter(|(k, _)| k == kind)
            .filter_map(|(_, id)| rels.iter().find(|r| &r.id == id))
            .map(|r| r.target.as_str())
            .collect();
        if targets.is_empty() {
            targets = rels
                .iter()
                .filter(|r| r.kind == kind)
                .map(|r| r.target.as_str())
                .collect();
        }
        let mut seen = HashSet::new();
        for target in targets {
            if seen.insert(target)
                && let Some(xml) = package.part(target)?
            {
                out.push((section, reader.read(&xml, target, None)?.items));
            }
        }
    }
    Ok(out)
}
