//! Word list numbering (`word/numbering.xml`): the bullet or number a
//! list paragraph shows, counted as Word counts it — per list (`w:numId`),
//! a level's counter restarting whenever a shallower level advances, from
//! the level's start value (or the list's `w:startOverride`).
//!
//! Bullets become `- `; numbers follow the level's `w:lvlText` (`%1.`,
//! `%1.%2)`) in its format ([`NumberFormat`]). Nested levels
//! are indented by two spaces per level.

use std::collections::HashMap;

use kebab_plugin_sdk::PluginError;

use crate::numbers::NumberFormat;
use crate::xml::{Node, XmlCursor, attr, local};

/// Levels a Word list has.
const LEVELS: usize = 9;

/// How one level of a list is numbered.
#[derive(Debug, Clone)]
struct Level {
    format: String,
    text: String,
    start: u32,
}

impl Default for Level {
    fn default() -> Level {
        Level {
            format: "decimal".into(),
            text: String::new(),
            start: 1,
        }
    }
}

/// The lists of a document and their counters so far.
#[derive(Debug, Default)]
pub struct Numbering {
    /// Abstract list id → its levels.
    abstracts: HashMap<String, Vec<Level>>,
    /// List id → abstract list id and start overrides per level.
    lists: HashMap<String, (String, Vec<(u8, u32)>)>,
    /// List id → the current number of each level (`None`: not started).
    counters: HashMap<String, [Option<u32>; LEVELS]>,
}

impl Numbering {
    /// Read `numbering.xml`.
    pub fn parse(xml: &str, part: &str) -> Result<Numbering, PluginError> {
        let mut out = Numbering::default();
        let mut cursor = XmlCursor::new(xml, part);
        let mut abstract_id: Option<String> = None;
        let mut list_id: Option<String> = None;
        let mut level: Option<u8> = None;
        while let Some(node) = cursor.next_node()? {
            let Node::Open(e) = node else { continue };
            let val = || attr(&e, "val");
            match local(&e) {
                "abstractNum" => {
                    list_id = None;
                    abstract_id = attr(&e, "abstractNumId");
                }
                "num" => {
                    abstract_id = None;
                    list_id = attr(&e, "numId");
                }
                "lvl" | "lvlOverride" => level = attr(&e, "ilvl").and_then(|v| v.parse().ok()),
                "abstractNumId" => {
                    if let (Some(list), Some(target)) = (&list_id, val()) {
                        out.lists.entry(list.clone()).or_default().0 = target;
                    }
                }
                "startOverride" => {
                    if let (Some(list), Some(l), Some(start)) =
                        (&list_id, level, val().and_then(|v| v.parse().ok()))
                    {
                        out.lists
                            .entry(list.clone())
                            .or_default()
                            .1
                            .push((l, start));
                    }
                }
                name @ ("start" | "numFmt" | "lvlText") => {
                    if let (Some(id), Some(l), Some(value)) = (&abstract_id, level, val()) {
                        out.set_level(id, l, name, value);
                    }
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Set one property of level `l` of abstract list `id`.
    fn set_level(&mut self, id: &str, l: u8, name: &str, value: String) {
        let levels = self.abstracts.entry(id.to_string()).or_default();
        let l = usize::from(l);
        if l >= LEVELS {
            return;
        }
        if levels.len() <= l {
            levels.resize(l + 1, Level::default());
        }
        let level = &mut levels[l];
        match name {
            "start" => level.start = value.parse().unwrap_or(1),
            "numFmt" => level.format = value,
            _ => level.text = value,
        }
    }

    /// The prefix the next paragraph of list `num_id` at `level` shows
    /// (advancing the count); empty when the list shows nothing (`numId`
    /// 0, format `none`).
    pub fn prefix(&mut self, num_id: &str, level: u8) -> String {
        let l = usize::from(level).min(LEVELS - 1);
        let Some((abstract_id, overrides)) = self.lists.get(num_id) else {
            return String::new();
        };
        let levels = self.abstracts.get(abstract_id).cloned().unwrap_or_default();
        let start = |i: usize| {
            overrides
                .iter()
                .find(|(o, _)| usize::from(*o) == i)
                .map(|(_, s)| *s)
                .unwrap_or_else(|| levels.get(i).map_or(1, |lv| lv.start))
        };
        let counters = self
            .counters
            .entry(num_id.to_string())
            .or_insert([None; LEVELS]);
        counters[l] = Some(counters[l].map_or(start(l), |n| n.saturating_add(1)));
        for deeper in counters.iter_mut().skip(l + 1) {
            *deeper = None;
        }
        let def = levels.get(l).cloned().unwrap_or_default();
        let indent = "  ".repeat(l);
        match def.format.as_str() {
            "none" => String::new(),
            "bullet" => format!("{indent}- "),
            _ => {
                let mut text = if def.text.is_empty() {
                    format!("%{}.", l + 1)
                } else {
                    def.text.clone()
                };
                for (i, counter) in counters.iter().enumerate().take(l + 1) {
                    let n = counter.unwrap_or_else(|| start(i));
                    let format = levels.get(i).map_or("decimal", |lv| lv.format.as_str());
                    let number = NumberFormat::from_word(format).write(n);
                    text = text.replace(&format!("%{}", i + 1), &number);
                }
                format!("{indent}{} ", text.trim())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<w:numbering xmlns:w="w">
      <w:abstractNum w:abstractNumId="1">
        <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>
        <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%1.%2)"/></w:lvl>
      </w:abstractNum>
      <w:abstractNum w:abstractNumId="2"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="&#61623;"/></w:lvl></w:abstractNum>
      <w:num w:numId="5"><w:abstractNumId w:val="1"/></w:num>
      <w:num w:numId="6"><w:abstractNumId w:val="2"/></w:num>
      <w:num w:numId="8"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="4"/></w:lvlOverride></w:num>
    </w:numbering>"#;

    #[test]
    fn numbers_count_per_list_and_restart_below() {
        let mut n = Numbering::parse(XML, "numbering.xml").unwrap();
        assert_eq!(n.prefix("5", 0), "1. ");
        assert_eq!(n.prefix("5", 1), "  1.a) ");
        assert_eq!(n.prefix("5", 1), "  1.b) ");
        assert_eq!(n.prefix("5", 0), "2. ");
        assert_eq!(n.prefix("5", 1), "  2.a) ");
        assert_eq!(n.prefix("6", 0), "- ");
        assert_eq!(n.prefix("8", 0), "4. ");
        assert_eq!(n.prefix("0", 0), "");
    }
}
