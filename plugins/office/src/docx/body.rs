//! The content of one WordprocessingML part (the document body, a header
//! or footer, the footnotes, endnotes or comments) read into [`Item`]s.
//!
//! What a reader of the document sees is kept: runs' text (`w:t`), tabs,
//! breaks, symbols, non-breaking hyphens, the displayed result of fields
//! (never their codes, `w:instrText`), inserted text, hyperlinks', smart
//! tags' and content controls' (`w:sdt`) text, text boxes (read after the
//! paragraph they are anchored in), tables. Left out: deleted and
//! moved-away text, hidden runs (`w:vanish`), property blocks, and the
//! second branch of `mc:AlternateContent` (one rendering of a shape is
//! enough).
//!
//! The walk is a loop over the XML with an explicit stack of what each
//! open element means; nesting past the cursor's bound is skipped.

use kebab_plugin_sdk::PluginError;
use quick_xml::events::BytesStart;

use super::numbering::Numbering;
use super::styles::{NumRef, Styles, outline_level};
use crate::flow::{Flow, Item, Role};
use crate::xml::{Node, XmlCursor, attr, local, skips_alternate};

/// Elements whose content is never shown: property blocks, revision
/// records, deleted text, field codes.
const SKIPPED: &[&str] = &[
    "pPrChange",
    "rPrChange",
    "tblPrChange",
    "trPrChange",
    "tcPrChange",
    "sectPrChange",
    "numberingChange",
    "tblPr",
    "tblGrid",
    "trPr",
    "tcPr",
    "sdtPr",
    "sdtEndPr",
    "del",
    "moveFrom",
    "delText",
    "instrText",
    "delInstrText",
    "fldData",
    "binData",
];

/// What a part holds.
#[derive(Debug, Default)]
pub struct PartContent {
    /// The top-level items, in order.
    pub items: Vec<Item>,
    /// The content of each group element (one footnote, one comment).
    pub groups: Vec<Vec<Item>>,
    /// `(kind, relationship id)` of each header and footer reference
    /// (`header`/`footer`), in order.
    pub header_refs: Vec<(String, String)>,
    /// Whether content nested too deeply was skipped.
    pub skipped_deep: bool,
    /// Whether reading stopped at the block bound.
    pub truncated: bool,
}

/// What an open element means to the walk.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tag {
    Para,
    ParaProps,
    NumPr,
    Run,
    RunProps,
    Text,
    Table,
    Row,
    Cell,
    /// `mc:AlternateContent`; whether a branch was taken.
    Alternate(bool),
    Group,
    Other,
}

/// A paragraph's own properties.
#[derive(Debug, Default)]
struct ParaProps {
    style: Option<String>,
    outline: Option<u8>,
    numbering: NumRef,
}

/// The walk's state.
struct Walk<'s> {
    styles: &'s Styles,
    numbering: &'s mut Numbering,
    flow: Flow,
    tags: Vec<Tag>,
    paras: Vec<ParaProps>,
    /// One entry per open complex field: whether its result is showing.
    fields: Vec<bool>,
    run_hidden: bool,
    out: PartContent,
}

/// Read the part `xml` (named `part`); each element named `group` (a
/// footnote, a comment) is collected into [`PartContent::groups`].
pub fn read(
    xml: &str,
    part: &str,
    styles: &Styles,
    numbering: &mut Numbering,
    group: Option<&str>,
) -> Result<PartContent, PluginError> {
    let mut walk = Walk {
        styles,
        numbering,
        flow: Flow::default(),
        tags: Vec::new(),
        paras: Vec::new(),
        fields: Vec::new(),
        run_hidden: false,
        out: PartContent::default(),
    };
    let mut cursor = XmlCursor::new(xml, part);
    while let Some(node) = cursor.next_node()? {
        match node {
            Node::Open(e) => {
                let name = local(&e);
                if SKIPPED.contains(&name) || walk.skips_branch(name) {
                    cursor.skip()?;
                    continue;
                }
                let tag = if Some(name) == group {
                    walk.flow.open_container();
                    Tag::Group
                } else {
                    walk.open(&e, name)
                };
                walk.tags.push(tag);
            }
            Node::Close => {
                if let Some(tag) = walk.tags.pop() {
                    walk.close(tag);
                }
                if walk.flow.is_full() {
                    walk.out.truncated = true;
                    break;
                }
            }
            Node::Text(t) => {
                if walk.tags.last() == Some(&Tag::Text) && walk.showing() {
                    walk.flow.push_text(&t);
                }
            }
        }
    }
    walk.out.skipped_deep = cursor.skipped_deep();
    let mut out = walk.out;
    out.items = walk.flow.finish();
    Ok(out)
}

impl Walk<'_> {
    /// Whether `name` is an `mc:AlternateContent` branch to skip: a
    /// second choice, or the fallback once a choice was taken.
    fn skips_branch(&mut self, name: &str) -> bool {
        match self.tags.last_mut() {
            Some(Tag::Alternate(taken)) => skips_alternate(taken, name),
            _ => false,
        }
    }

    /// Whether run text shows now: not hidden, not inside a field's code.
    fn showing(&self) -> bool {
        !self.run_hidden && self.fields.iter().all(|showing| *showing)
    }

    /// React to an element opening; what it means is returned.
    fn open(&mut self, e: &BytesStart<'_>, name: &str) -> Tag {
        let parent = self.tags.last().copied();
        match (name, parent) {
            ("p", _) => {
                self.flow.open_paragraph();
                self.paras.push(ParaProps::default());
                Tag::Para
            }
            ("pPr", Some(Tag::Para)) => Tag::ParaProps,
            ("numPr", Some(Tag::ParaProps)) => Tag::NumPr,
            ("pStyle", Some(Tag::ParaProps)) => {
                if let Some(p) = self.paras.last_mut() {
                    p.style = attr(e, "val");
                }
                Tag::Other
            }
            ("outlineLvl", Some(Tag::ParaProps)) => {
                if let Some(p) = self.paras.last_mut() {
                    p.outline = attr(e, "val").and_then(|v| v.parse().ok());
                }
                Tag::Other
            }
            ("numId", Some(Tag::NumPr)) => {
                if let Some(p) = self.paras.last_mut() {
                    p.numbering.num_id = attr(e, "val");
                }
                Tag::Other
            }
            ("ilvl", Some(Tag::NumPr)) => {
                if let Some(p) = self.paras.last_mut() {
                    p.numbering.level = attr(e, "val").and_then(|v| v.parse().ok());
                }
                Tag::Other
            }
            ("r", _) => {
                self.run_hidden = false;
                Tag::Run
            }
            ("rPr", Some(Tag::Run)) => Tag::RunProps,
            ("vanish", Some(Tag::RunProps)) => {
                self.run_hidden = is_on(e);
                Tag::Other
            }
            ("t", Some(Tag::Run)) => Tag::Text,
            (
                "tab" | "ptab" | "br" | "cr" | "noBreakHyphen" | "sym" | "fldChar",
                Some(Tag::Run),
            ) => {
                self.run_content(e, name);
                Tag::Other
            }
            ("tbl", _) => {
                self.flow.open_table();
                Tag::Table
            }
            ("tr", _) => {
                self.flow.open_row();
                Tag::Row
            }
            ("tc", _) => {
                self.flow.open_container();
                Tag::Cell
            }
            ("AlternateContent", _) => Tag::Alternate(false),
            ("headerReference" | "footerReference", _) => {
                if let Some(id) = attr(e, "id") {
                    let kind = name.trim_end_matches("Reference").to_string();
                    self.out.header_refs.push((kind, id));
                }
                Tag::Other
            }
            _ => Tag::Other,
        }
    }

    /// An element inside a run other than its text: tabs, breaks,
    /// symbols, hyphens and field characters.
    fn run_content(&mut self, e: &BytesStart<'_>, name: &str) {
        let shown = match name {
            "tab" | "ptab" => Some('\t'),
            "br" | "cr" => Some('\n'),
            "noBreakHyphen" => Some('-'),
            "sym" => attr(e, "char")
                .and_then(|c| u32::from_str_radix(&c, 16).ok())
                .and_then(char::from_u32)
                .filter(|c| !('\u{E000}'..='\u{F8FF}').contains(c)),
            "fldChar" => {
                match attr(e, "fldCharType").as_deref() {
                    Some("begin") => self.fields.push(false),
                    Some("separate") => {
                        if let Some(top) = self.fields.last_mut() {
                            *top = true;
                        }
                    }
                    Some("end") => {
                        self.fields.pop();
                    }
                    _ => {}
                }
                None
            }
            _ => None,
        };
        if let Some(c) = shown
            && self.showing()
        {
            self.flow.push_char(c);
        }
    }

    /// React to an element closing.
    fn close(&mut self, tag: Tag) {
        match tag {
            Tag::Para => {
                let props = self.paras.pop().unwrap_or_default();
                let (role, prefix) = self.role(&props);
                self.flow.close_paragraph(role, &prefix);
            }
            Tag::Table => self.flow.close_table(),
            Tag::Cell => self.flow.close_cell(),
            Tag::Group => {
                let items = self.flow.close_container();
                self.out.groups.push(items);
            }
            _ => {}
        }
    }

    /// What a paragraph with these properties is, and the list prefix it
    /// shows.
    fn role(&mut self, props: &ParaProps) -> (Role, String) {
        let style = props.style.as_deref();
        let level = match props.outline {
            Some(outline) => outline_level(outline),
            None => self.styles.heading_level(style),
        };
        if let Some(level) = level {
            return (Role::Heading(level), String::new());
        }
        let inherited = self.styles.numbering(style).unwrap_or_default();
        let num_id = props.numbering.num_id.clone().or(inherited.num_id);
        let level = props.numbering.level.or(inherited.level).unwrap_or(0);
        let prefix = match num_id {
            Some(id) if id != "0" => self.numbering.prefix(&id, level),
            _ => String::new(),
        };
        if prefix.is_empty() {
            (Role::Body, prefix)
        } else {
            (Role::ListItem, prefix)
        }
    }
}

/// Whether a toggle property (`w:vanish`, `w:b`) is on: present without
/// a value, or with a true one.
fn is_on(e: &BytesStart<'_>) -> bool {
    attr(e, "val").is_none_or(|v| !matches!(v.as_str(), "0" | "false" | "off"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Para, paragraphs};

    fn body(xml: &str) -> PartContent {
        let doc =
            format!(r#"<w:document xmlns:w="w" xmlns:mc="mc"><w:body>{xml}</w:body></w:document>"#);
        read(
            &doc,
            "document.xml",
            &Styles::default(),
            &mut Numbering::default(),
            None,
        )
        .unwrap()
    }

    fn texts(xml: &str) -> Vec<String> {
        paragraphs(&body(xml).items)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn runs_tabs_breaks_and_symbols() {
        let xml = r#"<w:p><w:r><w:t xml:space="preserve">a </w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t>
            <w:noBreakHyphen/><w:sym w:font="Symbol" w:char="03B1"/><w:softHyphen/></w:r></w:p>"#;
        assert_eq!(texts(xml), vec!["a \tb\nc-α"]);
    }

    #[test]
    fn field_results_stay_and_codes_go() {
        let xml = r#"<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>PAGE</w:instrText></w:r>
            <w:r><w:t>ignored code text</w:t></w:r>
            <w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>7</w:t></w:r>
            <w:r><w:fldChar w:fldCharType="end"/></w:r><w:fldSimple w:instr="DATE"><w:r><w:t> today</w:t></w:r></w:fldSimple></w:p>"#;
        assert_eq!(texts(xml), vec!["7 today"]);
    }

    #[test]
    fn revisions_hidden_text_and_alternate_content() {
        let xml = r#"<w:p><w:del><w:r><w:delText>gone</w:delText></w:r></w:del>
            <w:ins><w:r><w:t>new</w:t></w:r></w:ins><w:moveFrom><w:r><w:t>moved</w:t></w:r></w:moveFrom>
            <w:r><w:rPr><w:vanish/></w:rPr><w:t>hidden</w:t></w:r>
            <w:r><w:rPr><w:vanish w:val="0"/></w:rPr><w:t> shown</w:t></w:r>
            <w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent><w:p><w:r><w:t>box</w:t></w:r></w:p></w:txbxContent></w:drawing></mc:Choice>
            <mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>box</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>"#;
        assert_eq!(texts(xml), vec!["new shown", "box"]);
    }

    #[test]
    fn content_controls_hyperlinks_and_tables() {
        let xml = r#"<w:sdt><w:sdtPr><w:alias w:val="x"/><w:placeholder><w:docPart w:val="y"/></w:placeholder></w:sdtPr>
            <w:sdtContent><w:p><w:hyperlink><w:r><w:t>link</w:t></w:r></w:hyperlink></w:p></w:sdtContent></w:sdt>
            <w:tbl><w:tblPr/><w:tr><w:tc><w:tcPr/><w:p><w:r><w:t>A1</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>B1</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#;
        let content = body(xml);
        assert_eq!(paragraphs(&content.items), vec!["link", "A1", "B1"]);
        assert!(matches!(content.items[1], Item::Table(_)));
    }

    #[test]
    fn outline_levels_make_headings_and_groups_collect() {
        let xml = r#"<w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>Sub</w:t></w:r></w:p>"#;
        assert_eq!(
            body(xml).items,
            vec![Item::Para(Para {
                text: "Sub".into(),
                role: Role::Heading(2)
            })]
        );
        let notes = r#"<w:footnotes xmlns:w="w"><w:footnote w:id="1"><w:p><w:r><w:t>note one</w:t></w:r></w:p></w:footnote>
            <w:footnote w:id="2"><w:p><w:r><w:t>note two</w:t></w:r></w:p></w:footnote></w:footnotes>"#;
        let content = read(
            notes,
            "f.xml",
            &Styles::default(),
            &mut Numbering::default(),
            Some("footnote"),
        )
        .unwrap();
        assert_eq!(content.groups.len(), 2);
        assert_eq!(paragraphs(&content.groups[1]), vec!["note two"]);
    }

    #[test]
    fn a_hundred_thousand_nested_content_controls_do_not_overflow() {
        let depth = 100_000;
        let xml = format!(
            "{}<w:p><w:r><w:t>deep</w:t></w:r></w:p>{}<w:p><w:r><w:t>after</w:t></w:r></w:p>",
            "<w:sdt><w:sdtContent>".repeat(depth),
            "</w:sdtContent></w:sdt>".repeat(depth)
        );
        let content = body(&xml);
        assert!(content.skipped_deep);
        assert_eq!(paragraphs(&content.items), vec!["after"]);
    }
}
