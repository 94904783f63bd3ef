//! Document properties (title, author, dates, subject, keywords, language)
//! from wherever a format keeps them — Office Open XML `docProps/core.xml`,
//! OpenDocument `meta.xml`, an RTF `\info` group, an OLE summary stream —
//! and the assembly of the final [`Document`]: its title (the property,
//! else the first heading), its language and its metadata list.

use kebab_plugin_sdk::{Block, Document, PluginError};

use crate::xml::{Node, XmlCursor, local};

/// What a property is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field {
    Title,
    Author,
    LastModifiedBy,
    Created,
    Modified,
    Subject,
    Keywords,
    Description,
    Language,
}

impl Field {
    /// The metadata key the property is stored under.
    fn key(self) -> &'static str {
        match self {
            Field::Title => "title",
            Field::Author => "author",
            Field::LastModifiedBy => "last_modified_by",
            Field::Created => "created",
            Field::Modified => "modified",
            Field::Subject => "subject",
            Field::Keywords => "keywords",
            Field::Description => "description",
            Field::Language => "language",
        }
    }
}

/// Every property kept, in [`Field`] order.
const FIELDS: [Field; 9] = [
    Field::Title,
    Field::Author,
    Field::LastModifiedBy,
    Field::Created,
    Field::Modified,
    Field::Subject,
    Field::Keywords,
    Field::Description,
    Field::Language,
];

/// A document's properties, and the default languages its styles declare.
#[derive(Debug, Clone, Default)]
pub struct Properties {
    values: Vec<(Field, String)>,
    /// The default language of Latin-script text (styles), if declared.
    pub default_lang: Option<String>,
    /// The default language of East Asian text (styles), if declared.
    pub default_east_asian_lang: Option<String>,
}

impl Properties {
    /// Set `field` (whitespace trimmed; an empty value is ignored; a
    /// repeated keyword is appended).
    pub fn set(&mut self, field: Field, value: &str) {
        let value = value.trim();
        if value.is_empty() {
            return;
        }
        match self.values.iter_mut().find(|(f, _)| *f == field) {
            Some((_, old)) if field == Field::Keywords => {
                old.push_str(", ");
                old.push_str(value);
            }
            Some(_) => {}
            None => self.values.push((field, value.to_string())),
        }
    }

    /// Set `field`, replacing any earlier value (a better rendering of
    /// the same property: RTF's Unicode twin of an ANSI title).
    pub fn replace(&mut self, field: Field, value: &str) {
        self.values.retain(|(f, _)| *f != field);
        self.set(field, value);
    }

    /// The value of `field`, if set.
    pub fn get(&self, field: Field) -> Option<&str> {
        self.values
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v.as_str())
    }

    /// Read the properties of an XML part where each is an element
    /// holding text, with `fields` mapping local element names to
    /// properties (`creator` → author). With `within`, only elements
    /// inside an element of that local name count (`meta` in a flat
    /// OpenDocument file, whose body has `text:title` fields too).
    pub fn read_xml(
        &mut self,
        xml: &str,
        part: &str,
        fields: &[(&str, Field)],
        within: Option<&str>,
    ) -> Result<(), PluginError> {
        let mut cursor = XmlCursor::new(xml, part);
        let mut scope_depth: Option<usize> = None;
        while let Some(node) = cursor.next_node()? {
            match node {
                Node::Open(e) => {
                    let name = local(&e);
                    if within == Some(name) && scope_depth.is_none() {
                        scope_depth = Some(cursor.depth());
                        continue;
                    }
                    let in_scope = within.is_none() || scope_depth.is_some();
                    if let Some((_, field)) = fields.iter().find(|(f, _)| *f == name)
                        && in_scope
                    {
                        let text = cursor.text_content()?;
                        self.set(*field, &text);
                    }
                }
                Node::Close => {
                    if scope_depth.is_some_and(|d| cursor.depth() < d) {
                        scope_depth = None;
                    }
                }
                Node::Text(_) => {}
            }
        }
        Ok(())
    }
}

/// The finished document: `blocks` with the title, language and metadata
/// drawn from `props`, `format` (`docx`, `odp`, …) and `extra` entries.
pub fn assemble(
    blocks: Vec<Block>,
    props: &Properties,
    first_heading: Option<&str>,
    format: &str,
    extra: Vec<(String, String)>,
) -> Document {
    let title = props
        .get(Field::Title)
        .or(first_heading)
        .map(str::to_string);
    let lang = props
        .get(Field::Language)
        .and_then(bcp47)
        .or_else(|| styles_lang(props, &blocks));
    let mut metadata = vec![("format".to_string(), format.to_string())];
    for field in FIELDS {
        if let Some(value) = props.get(field) {
            metadata.push((field.key().to_string(), value.to_string()));
        }
    }
    metadata.extend(extra);
    Document {
        title,
        lang,
        blocks,
        metadata,
    }
}

/// The styles' default language: the East Asian one when most letters of
/// the text are CJK or Hangul, else the Latin one.
fn styles_lang(props: &Properties, blocks: &[Block]) -> Option<String> {
    let east = props.default_east_asian_lang.as_deref().and_then(bcp47);
    let latin = props.default_lang.as_deref().and_then(bcp47);
    match (latin, east) {
        (latin, Some(east)) if mostly_east_asian(blocks) || latin.is_none() => Some(east),
        (latin, _) => latin,
    }
}

/// Whether most letters of the blocks' text are CJK ideographs, kana or
/// Hangul (a sample of the first 64 KiB is enough).
fn mostly_east_asian(blocks: &[Block]) -> bool {
    let (mut east, mut all) = (0usize, 0usize);
    for c in blocks.iter().flat_map(|b| b.text.chars()).take(64 << 10) {
        if c.is_alphabetic() {
            all += 1;
            if matches!(c, '\u{1100}'..='\u{11FF}' | '\u{3040}'..='\u{30FF}' | '\u{3130}'..='\u{318F}' | '\u{3400}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}')
            {
                east += 1;
            }
        }
    }
    all > 0 && east * 2 > all
}

/// A language tag in BCP-47 form (`en_US` → `en-US`); `None` for the
/// "no language" markers (`x-none`, `none`, `zxx`).
pub fn bcp47(tag: &str) -> Option<String> {
    let tag = tag.trim().replace('_', "-");
    let primary = tag.split('-').next().unwrap_or("");
    let valid =
        (2..=8).contains(&primary.len()) && primary.chars().all(|c| c.is_ascii_alphabetic());
    if !valid
        || matches!(
            primary.to_ascii_lowercase().as_str(),
            "x" | "none" | "zxx" | "und"
        )
    {
        return None;
    }
    Some(tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_read_from_xml_elements() {
        let xml = r#"<cp:coreProperties xmlns:dc="d"><dc:title>Report</dc:title>
            <dc:creator>Kim</dc:creator><cp:keywords>a</cp:keywords><meta:keyword>b</meta:keyword></cp:coreProperties>"#;
        let mut props = Properties::default();
        props
            .read_xml(
                xml,
                "core.xml",
                &[
                    ("title", Field::Title),
                    ("creator", Field::Author),
                    ("keywords", Field::Keywords),
                    ("keyword", Field::Keywords),
                ],
                None,
            )
            .unwrap();
        assert_eq!(props.get(Field::Title), Some("Report"));
        assert_eq!(props.get(Field::Author), Some("Kim"));
        assert_eq!(props.get(Field::Keywords), Some("a, b"));
    }

    #[test]
    fn language_tags_are_normalised() {
        assert_eq!(bcp47("en_US").as_deref(), Some("en-US"));
        assert_eq!(bcp47("ko-KR").as_deref(), Some("ko-KR"));
        assert_eq!(bcp47("x-none"), None);
        assert_eq!(bcp47(""), None);
    }
}
