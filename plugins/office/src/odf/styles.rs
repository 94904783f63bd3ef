//! OpenDocument styles (from `styles.xml` and the automatic styles of
//! `content.xml`, or both in a flat file): which paragraph styles derive
//! from `Title`, how list styles number each level, which drawing-page
//! styles hide a slide, and the default languages.

use std::collections::{HashMap, HashSet};

use kebab_plugin_sdk::PluginError;

use crate::limits::MAX_STYLE_CHAIN;
use crate::numbers::NumberFormat;
use crate::xml::{Node, XmlCursor, attr, local};

/// How one level of a list style marks its items.
#[derive(Debug, Clone, PartialEq)]
pub enum ListLevel {
    Bullet,
    Number {
        format: NumberFormat,
        prefix: String,
        suffix: String,
        start: u32,
    },
    /// `style:num-format=""`: no mark at all.
    Unmarked,
}

/// The styles of an OpenDocument file.
#[derive(Debug, Clone, Default)]
pub struct OdfStyles {
    /// Style name → parent style name.
    parents: HashMap<String, String>,
    /// Style name → display name, where they differ.
    display: HashMap<String, String>,
    /// List style name → its levels (index 0 is level 1).
    lists: HashMap<String, Vec<Option<ListLevel>>>,
    /// Paragraph style name → the list style it applies.
    paragraph_lists: HashMap<String, String>,
    /// Drawing-page styles that hide their slides.
    hidden_pages: HashSet<String>,
    /// Default language of Latin text, BCP-47-ish (`en-US`).
    pub lang: Option<String>,
    /// Default language of East Asian text.
    pub east_asian_lang: Option<String>,
}

impl OdfStyles {
    /// Add the styles defined in `xml` (a styles part, a content part, or
    /// a flat file).
    pub fn read(&mut self, xml: &str, part: &str) -> Result<(), PluginError> {
        let mut cursor = XmlCursor::new(xml, part);
        let mut style: Option<String> = None;
        let mut list: Option<String> = None;
        let mut in_default_paragraph = false;
        while let Some(node) = cursor.next_node()? {
            let Node::Open(e) = node else { continue };
            match local(&e) {
                "style" => {
                    style = attr(&e, "name");
                    if let Some(name) = &style {
                        self.note_style(name, &e);
                    }
                }
                "default-style" => {
                    in_default_paragraph = attr(&e, "family").as_deref() == Some("paragraph");
                }
                "text-properties" if in_default_paragraph && self.lang.is_none() => {
                    self.lang = language(attr(&e, "language"), attr(&e, "country"));
                    self.east_asian_lang =
                        language(attr(&e, "language-asian"), attr(&e, "country-asian"));
                }
                "drawing-page-properties" => {
                    if let Some(name) = &style
                        && attr(&e, "visibility").as_deref() == Some("hidden")
                    {
                        self.hidden_pages.insert(name.clone());
                    }
                }
                "list-style" => list = attr(&e, "name"),
                name @ ("list-level-style-bullet"
                | "list-level-style-image"
                | "list-level-style-number") => {
                    if let Some(list) = &list {
                        self.note_list_level(list, name, &e);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Remember a style's parent, display name and list style.
    fn note_style(&mut self, name: &str, e: &quick_xml::events::BytesStart<'_>) {
        if let Some(parent) = attr(e, "parent-style-name") {
            self.parents.insert(name.to_string(), parent);
        }
        if let Some(display) = attr(e, "display-name") {
            self.display.insert(name.to_string(), display);
        }
        if let Some(list) = attr(e, "list-style-name").filter(|l| !l.is_empty()) {
            self.paragraph_lists.insert(name.to_string(), list);
        }
    }

    /// Remember one level of list style `list`.
    fn note_list_level(&mut self, list: &str, kind: &str, e: &quick_xml::events::BytesStart<'_>) {
        let Some(level) = attr(e, "level").and_then(|l| l.parse::<usize>().ok()) else {
            return;
        };
        if !(1..=10).contains(&level) {
            return;
        }
        let def = match (kind, attr(e, "num-format")) {
            ("list-level-style-number", Some(f)) if f.is_empty() => ListLevel::Unmarked,
            ("list-level-style-number", format) => ListLevel::Number {
                format: NumberFormat::from_odf(format.as_deref().unwrap_or("1")),
                prefix: attr(e, "num-prefix").unwrap_or_default(),
                suffix: attr(e, "num-suffix").unwrap_or_default(),
                start: attr(e, "start-value")
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(1),
            },
            _ => ListLevel::Bullet,
        };
        let levels = self.lists.entry(list.to_string()).or_default();
        if levels.len() < level {
            levels.resize(level, None);
        }
        levels[level - 1] = Some(def);
    }

    /// Whether paragraph style `name` is (or derives from) `Title`.
    pub fn is_title(&self, name: &str) -> bool {
        let mut next = Some(name);
        for _ in 0..MAX_STYLE_CHAIN {
            let Some(current) = next else { return false };
            let display = self.display.get(current).map_or(current, String::as_str);
            if current == "Title" || display == "Title" {
                return true;
            }
            next = self.parents.get(current).map(String::as_str);
        }
        false
    }

    /// How level `level` (1-based) of list style `list` marks its items.
    pub fn list_level(&self, list: &str, level: usize) -> Option<&ListLevel> {
        self.lists.get(list)?.get(level.checked_sub(1)?)?.as_ref()
    }

    /// The list style a paragraph style applies, if any.
    pub fn paragraph_list(&self, paragraph_style: &str) -> Option<&str> {
        self.paragraph_lists
            .get(paragraph_style)
            .map(String::as_str)
    }

    /// Whether drawing-page style `name` hides its slide.
    pub fn hides_page(&self, name: &str) -> bool {
        self.hidden_pages.contains(name)
    }
}

/// `en` + `US` → `en-US`; `None` without a language.
fn language(lang: Option<String>, country: Option<String>) -> Option<String> {
    let lang = lang.filter(|l| !l.is_empty() && l != "none" && l != "zxx")?;
    Some(match country.filter(|c| !c.is_empty() && c != "none") {
        Some(country) => format!("{lang}-{country}"),
        None => lang,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_lists_hidden_pages_and_languages() {
        let xml = r#"<office:document-styles>
          <style:default-style style:family="paragraph"><style:text-properties fo:language="en" fo:country="US" style:language-asian="ko" style:country-asian="KR"/></style:default-style>
          <style:style style:name="Title" style:family="paragraph"/>
          <style:style style:name="P1" style:parent-style-name="Title"/>
          <style:style style:name="dp2" style:family="drawing-page"><style:drawing-page-properties presentation:visibility="hidden"/></style:style>
          <text:list-style style:name="L1">
            <text:list-level-style-number text:level="1" style:num-suffix="." style:num-format="1"/>
            <text:list-level-style-bullet text:level="2" text:bullet-char="•"/>
          </text:list-style></office:document-styles>"#;
        let mut styles = OdfStyles::default();
        styles.read(xml, "styles.xml").unwrap();
        assert!(styles.is_title("P1"));
        assert!(!styles.is_title("P2"));
        assert!(styles.hides_page("dp2"));
        assert_eq!(styles.list_level("L1", 2), Some(&ListLevel::Bullet));
        assert!(
            matches!(styles.list_level("L1", 1), Some(ListLevel::Number { suffix, .. }) if suffix == ".")
        );
        assert_eq!(styles.lang.as_deref(), Some("en-US"));
        assert_eq!(styles.east_asian_lang.as_deref(), Some("ko-KR"));
    }
}
