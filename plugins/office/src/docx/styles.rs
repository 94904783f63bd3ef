//! Word paragraph styles (`word/styles.xml`): which styles are headings
//! and at what level, which carry list numbering, and the document's
//! default languages.
//!
//! A style is a heading when it (or a style it is based on) sets an
//! outline level (`w:outlineLvl` 0–8) or is named `heading N` / `Title`.
//! Word keeps built-in styles' English names in `w:name` whatever the
//! user's language, while their ids are localised (`berschrift1`,
//! `1`), so names are resolved through ids, never guessed from ids.

use std::collections::HashMap;

use kebab_plugin_sdk::PluginError;

use crate::limits::MAX_STYLE_CHAIN;
use crate::xml::{Node, XmlCursor, attr, local};

/// A list numbering reference: a `w:numId` and a level (`w:ilvl`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NumRef {
    /// The list (`w:numId`; `0` means none).
    pub num_id: Option<String>,
    /// The level in the list (`w:ilvl`, 0-based).
    pub level: Option<u8>,
}

/// One paragraph style.
#[derive(Debug, Clone, Default)]
struct Style {
    /// `w:name`, lowercased.
    name: String,
    based_on: Option<String>,
    /// `w:outlineLvl` (0-based; 9 means body text).
    outline: Option<u8>,
    numbering: Option<NumRef>,
}

/// The paragraph styles of a document.
#[derive(Debug, Clone, Default)]
pub struct Styles {
    styles: HashMap<String, Style>,
    /// The style paragraphs without `w:pStyle` use.
    default_style: Option<String>,
    /// `w:docDefaults`' language of Latin text (`w:lang/@w:val`).
    pub lang: Option<String>,
    /// `w:docDefaults`' language of East Asian text (`@w:eastAsia`).
    pub east_asian_lang: Option<String>,
}

/// What part of `styles.xml` the reader is in.
#[derive(PartialEq)]
enum Scope {
    Style,
    NumPr,
    Defaults,
    Other,
}

impl Styles {
    /// Read `styles.xml`.
    pub fn parse(xml: &str, part: &str) -> Result<Styles, PluginError> {
        let mut styles = Styles::default();
        let mut cursor = XmlCursor::new(xml, part);
        let mut scopes: Vec<Scope> = Vec::new();
        let mut current: Option<(String, Style)> = None;
        while let Some(node) = cursor.next_node()? {
            match node {
                Node::Open(e) => {
                    let name = local(&e);
                    let in_style = scopes.contains(&Scope::Style);
                    let scope = match name {
                        "style" if attr(&e, "type").is_none_or(|t| t == "paragraph") => {
                            let id = attr(&e, "styleId").unwrap_or_default();
                            if attr(&e, "default").is_some_and(|d| d == "1" || d == "true") {
                                styles.default_style = Some(id.clone());
                            }
                            current = Some((id, Style::default()));
                            Scope::Style
                        }
                        "style" => {
                            cursor.skip()?;
                            continue;
                        }
                        "docDefaults" => Scope::Defaults,
                        "numPr" if in_style => Scope::NumPr,
                        _ => {
                            styles.note(&e, name, &scopes, &mut current);
                            Scope::Other
                        }
                    };
                    scopes.push(scope);
                }
                Node::Close => {
                    if scopes.pop() == Some(Scope::Style)
                        && let Some((id, style)) = current.take()
                    {
                        styles.styles.insert(id, style);
                    }
                }
                Node::Text(_) => {}
            }
        }
        Ok(styles)
    }

    /// Record what element `e` (local name `name`) says about the style
    /// being read or the defaults.
    fn note(
        &mut self,
        e: &quick_xml::events::BytesStart<'_>,
        name: &str,
        scopes: &[Scope],
        current: &mut Option<(String, Style)>,
    ) {
        let val = || attr(e, "val");
        if scopes.contains(&Scope::Defaults) && name == "lang" && self.lang.is_none() {
            self.lang = val();
            self.east_asian_lang = attr(e, "eastAsia");
            return;
        }
        let Some((_, style)) = current.as_mut() else {
            return;
        };
        let in_numpr = scopes.last() == Some(&Scope::NumPr);
        match name {
            "name" => style.name = val().unwrap_or_default().to_lowercase(),
            "basedOn" => style.based_on = val(),
            "outlineLvl" => style.outline = val().and_then(|v| v.parse().ok()),
            "numId" if in_numpr => {
                style.numbering.get_or_insert_with(NumRef::default).num_id = val();
            }
            "ilvl" if in_numpr => {
                style.numbering.get_or_insert_with(NumRef::default).level =
                    val().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }

    /// The styles a paragraph of style `id` inherits from, itself first
    /// (the default paragraph style when `id` is `None`).
    fn chain<'s>(&'s self, id: Option<&'s str>) -> impl Iterator<Item = &'s Style> + 's {
        let mut next = id.or(self.default_style.as_deref());
        std::iter::from_fn(move || {
            let style = self.styles.get(next?)?;
            next = style.based_on.as_deref();
            Some(style)
        })
        .take(MAX_STYLE_CHAIN)
    }

    /// The heading level (1-based) paragraphs of style `id` have, if any.
    pub fn heading_level(&self, id: Option<&str>) -> Option<u8> {
        for style in self.chain(id) {
            if let Some(outline) = style.outline {
                return outline_level(outline);
            }
            if let Some(level) = heading_name_level(&style.name) {
                return Some(level);
            }
        }
        None
    }

    /// The list numbering paragraphs of style `id` carry, if any.
    pub fn numbering(&self, id: Option<&str>) -> Option<NumRef> {
        self.chain(id).find_map(|s| s.numbering.clone())
    }
}

/// The heading level of a 0-based outline level (9 is body text).
pub fn outline_level(outline: u8) -> Option<u8> {
    (outline < 9).then_some(outline + 1)
}

/// The level a built-in style name implies: `heading 3` → 3, `title` → 1.
fn heading_name_level(name: &str) -> Option<u8> {
    if name == "title" {
        return Some(1);
    }
    let level: u8 = name.strip_prefix("heading ")?.trim().parse().ok()?;
    (1..=9).contains(&level).then_some(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<w:styles xmlns:w="w">
      <w:docDefaults><w:rPrDefault><w:rPr><w:lang w:val="en-US" w:eastAsia="ko-KR"/></w:rPr></w:rPrDefault></w:docDefaults>
      <w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
      <w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/></w:style>
      <w:style w:type="paragraph" w:styleId="Mine"><w:name w:val="Mine"/><w:basedOn w:val="berschrift1"/></w:style>
      <w:style w:type="paragraph" w:styleId="Outlined"><w:name w:val="x"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
      <w:style w:type="paragraph" w:styleId="Bullet"><w:name w:val="List Bullet"/><w:pPr><w:numPr><w:numId w:val="7"/></w:numPr></w:pPr></w:style>
      <w:style w:type="character" w:styleId="Heading1Char"><w:name w:val="heading 1"/></w:style>
      <w:style w:type="paragraph" w:styleId="Loop"><w:name w:val="loop"/><w:basedOn w:val="Loop"/></w:style>
    </w:styles>"#;

    #[test]
    fn headings_resolve_through_names_based_on_and_outline_levels() {
        let styles = Styles::parse(XML, "styles.xml").unwrap();
        assert_eq!(styles.heading_level(Some("berschrift1")), Some(1));
        assert_eq!(styles.heading_level(Some("Mine")), Some(1));
        assert_eq!(styles.heading_level(Some("Outlined")), Some(3));
        assert_eq!(styles.heading_level(None), None);
        assert_eq!(styles.heading_level(Some("Heading1Char")), None);
        assert_eq!(styles.heading_level(Some("Loop")), None);
        assert_eq!(
            styles.numbering(Some("Bullet")).and_then(|n| n.num_id),
            Some("7".to_string())
        );
        assert_eq!(styles.lang.as_deref(), Some("en-US"));
        assert_eq!(styles.east_asian_lang.as_deref(), Some("ko-KR"));
    }
}
