//! The content of an OpenDocument file read into [`Item`]s.
//!
//! In a text document (`office:text`): paragraphs and headings
//! (`text:p`, `text:h` with its `text:outline-level`; a paragraph of the
//! `Title` style is a level-1 heading), lists with their bullets or
//! numbers, tables, frames and text boxes (read after their anchor
//! paragraph), spans, links and fields; footnotes and endnotes
//! (`text:note`), comments (`office:annotation`) and the master pages'
//! headers and footers are collected apart.
//!
//! In a presentation (`office:presentation`) the same text markup sits in
//! shapes on pages: each shape (`draw:frame`, `draw:custom-shape`, …) is
//! collected apart with its page, its `presentation:class` (`title`,
//! `outline`, `notes`, …) and whether it is on the page's speaker notes
//! (`presentation:notes`). Master pages (placeholder prompts) are skipped.
//!
//! Whitespace follows ODF: runs of spaces, tabs and line ends in the
//! markup collapse to one space; `text:s`, `text:tab` and
//! `text:line-break` are the significant ones.

use kebab_plugin_sdk::{LogLevel, PluginError, log};
use quick_xml::events::BytesStart;

use super::styles::{ListLevel, OdfStyles};
use crate::flow::{Flow, Item, Role};
use crate::limits::MAX_SPACE_RUN;
use crate::textdoc::Section;
use crate::xml::{Node, XmlCursor, attr, local};

/// Content collected apart from the body.
#[derive(Debug, Clone, PartialEq)]
pub enum Collected {
    /// A header, footer, note or comment of a text document.
    Text(Section),
    /// A shape of a presentation page.
    Shape(ShapeAt),
}

/// Where a presentation shape sits and what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeAt {
    /// The 1-based page (slide) it is on; 0 outside any page.
    pub page: usize,
    /// Its `presentation:class` (`title`, `subtitle`, `outline`, `notes`).
    pub class: Option<String>,
    /// Whether it is on the page's speaker notes.
    pub notes: bool,
}

/// Shapes that carry text in a presentation.
const SHAPES: &[&str] = &[
    "frame",
    "custom-shape",
    "rect",
    "ellipse",
    "circle",
    "polygon",
    "polyline",
    "regular-polygon",
    "path",
    "line",
    "connector",
    "caption",
    "measure",
];

/// What a text part holds.
#[derive(Debug, Default)]
pub struct TextContent {
    /// The body's items, in order.
    pub items: Vec<Item>,
    /// Notes, comments, headers and footers, presentation shapes, in
    /// document order.
    pub groups: Vec<(Collected, Vec<Item>)>,
    /// Whether each presentation page is hidden, in order.
    pub hidden_pages: Vec<bool>,
    /// Whether content nested too deeply was skipped.
    pub skipped_deep: bool,
}

/// Elements whose content is never shown: declarations, change records,
/// index templates, alternative text, embedded binaries, the note's mark.
const SKIPPED: &[&str] = &[
    "tracked-changes",
    "note-citation",
    "number",
    "sequence-decls",
    "variable-decls",
    "user-field-decls",
    "dde-connection-decls",
    "forms",
    "desc",
    "binary-data",
    "covered-table-cell",
    "index-title-template",
    "font-face-decls",
    "automatic-styles",
    "styles",
    "settings",
    "scripts",
    "ruby-text",
];

/// What an open element means to the walk.
#[derive(Debug, Clone, PartialEq)]
enum Tag {
    Para,
    Table,
    Cell,
    List,
    ListItem,
    Group(Collected),
    Page,
    Notes,
    Other,
}

/// An open list.
struct List {
    style: Option<String>,
    /// The current item's number (`None` before the first).
    counter: Option<u32>,
    /// Whether the current item's first paragraph is still to come.
    mark_pending: bool,
}

/// A paragraph's role and list prefix, fixed when it opens.
struct OpenPara {
    role: Role,
    prefix: String,
}

/// The walk's state.
struct Walk<'s> {
    styles: &'s OdfStyles,
    flow: Flow,
    tags: Vec<Tag>,
    paras: Vec<OpenPara>,
    lists: Vec<List>,
    groups: Vec<(Collected, Vec<Item>)>,
    /// Whether this is a presentation (shapes collected by page).
    slides: bool,
    hidden_pages: Vec<bool>,
    in_notes: bool,
    in_shape: bool,
}

/// Read a part (content, styles or a flat file) of a text document, or of
/// a presentation when `slides`.
pub fn read(
    xml: &str,
    part: &str,
    styles: &OdfStyles,
    slides: bool,
) -> Result<TextContent, PluginError> {
    let mut walk = Walk {
        styles,
        flow: Flow::default(),
        tags: Vec::new(),
        paras: Vec::new(),
        lists: Vec::new(),
        groups: Vec::new(),
        slides,
        hidden_pages: Vec::new(),
        in_notes: false,
        in_shape: false,
    };
    let mut cursor = XmlCursor::new(xml, part);
    while let Some(node) = cursor.next_node()? {
        match node {
            Node::Open(e) => {
                if walk.skips(&e) {
                    cursor.skip()?;
                    continue;
                }
                let tag = walk.open(&e);
                walk.tags.push(tag);
            }
            Node::Close => {
                if let Some(tag) = walk.tags.pop() {
                    walk.close(tag);
                }
                if walk.flow.is_full() {
                    log(
                        LogLevel::Warn,
                        &format!(
                            "{part} has more paragraphs than the block bound: the rest was not read"
                        ),
                    );
                    break;
                }
            }
            Node::Text(t) => walk.push_collapsed(&t),
        }
    }
    Ok(TextContent {
        items: walk.flow.finish(),
        groups: walk.groups,
        hidden_pages: walk.hidden_pages,
        skipped_deep: cursor.skipped_deep(),
    })
}

impl Walk<'_> {
    /// Whether the element's content is never shown.
    fn skips(&self, e: &BytesStart<'_>) -> bool {
        let name = local(e);
        let in_annotation =
            self.tags.last() == Some(&Tag::Group(Collected::Text(Section::Comments)));
        SKIPPED.contains(&name)
            || (self.slides && name == "master-styles")
            || name.ends_with("-source")
            || matches!(e.name().into_inner(), "svg:title" | "office:meta")
            || (in_annotation && matches!(name, "creator" | "date" | "initials"))
            || (matches!(
                name,
                "header"
                    | "footer"
                    | "header-left"
                    | "footer-left"
                    | "header-first"
                    | "footer-first"
            ) && attr(e, "display").as_deref() == Some("false"))
    }

    /// React to an element opening.
    fn open(&mut self, e: &BytesStart<'_>) -> Tag {
        if self.slides
            && let Some(tag) = self.open_in_slides(e)
        {
            return tag;
        }
        match local(e) {
            "h" => {
                let level = attr(e, "outline-level")
                    .and_then(|l| l.parse::<u8>().ok())
                    .unwrap_or(1);
                self.open_paragraph(Role::Heading(level.max(1)), String::new());
                Tag::Para
            }
            "p" => {
                let style = attr(e, "style-name");
                let (role, prefix) = self.paragraph_role(style.as_deref());
                self.open_paragraph(role, prefix);
                Tag::Para
            }
            "s" => {
                let count = attr(e, "c").and_then(|c| c.parse().ok()).unwrap_or(1usize);
                self.flow.push_text(&" ".repeat(count.min(MAX_SPACE_RUN)));
                Tag::Other
            }
            "tab" => {
                self.flow.push_char('\t');
                Tag::Other
            }
            "line-break" => {
                self.flow.push_char('\n');
                Tag::Other
            }
            "list" => {
                let inherited = self.lists.last().and_then(|l| l.style.clone());
                self.lists.push(List {
                    style: attr(e, "style-name").or(inherited),
                    counter: None,
                    mark_pending: false,
                });
                Tag::List
            }
            "list-item" | "list-header" => {
                self.open_list_item(e, local(e) == "list-item");
                Tag::ListItem
            }
            "table" => {
                self.flow.open_table();
                Tag::Table
            }
            "table-row" => {
                self.flow.open_row();
                Tag::Other
            }
            "table-cell" => {
                self.flow.open_container();
                Tag::Cell
            }
            "note" => self.open_group(Collected::Text(
                if attr(e, "note-class").as_deref() == Some("endnote") {
                    Section::Endnotes
                } else {
                    Section::Footnotes
                },
            )),
            "annotation" => self.open_group(Collected::Text(Section::Comments)),
            "header" | "header-left" | "header-first" => {
                self.open_group(Collected::Text(Section::Header))
            }
            "footer" | "footer-left" | "footer-first" => {
                self.open_group(Collected::Text(Section::Footer))
            }
            _ => Tag::Other,
        }
    }

    /// React to an element closing.
    fn close(&mut self, tag: Tag) {
        match tag {
            Tag::Para => {
                if let Some(p) = self.paras.pop() {
                    self.flow.close_paragraph(p.role, &p.prefix);
                }
            }
            Tag::Table => self.flow.close_table(),
            Tag::Cell => self.flow.close_cell(),
            Tag::List => {
                self.lists.pop();
            }
            Tag::Group(section) => {
                self.in_shape &= !matches!(section, Collected::Shape(_));
                let items = self.flow.close_container();
                self.groups.push((section, items));
            }
            Tag::Notes => self.in_notes = false,
            Tag::ListItem | Tag::Page | Tag::Other => {}
        }
    }

    /// The presentation elements: pages, their notes, and shapes (a shape
    /// inside a shape is read as part of the outer one).
    fn open_in_slides(&mut self, e: &BytesStart<'_>) -> Option<Tag> {
        let name = local(e);
        match name {
            "page" => {
                let hidden = attr(e, "style-name").is_some_and(|s| self.styles.hides_page(&s));
                self.hidden_pages.push(hidden);
                Some(Tag::Page)
            }
            "notes" => {
                self.in_notes = true;
                Some(Tag::Notes)
            }
            _ if SHAPES.contains(&name) && !self.in_shape => {
                self.in_shape = true;
                Some(self.open_group(Collected::Shape(ShapeAt {
                    page: self.hidden_pages.len(),
                    class: attr(e, "class"),
                    notes: self.in_notes,
                })))
            }
            _ => None,
        }
    }

    fn open_paragraph(&mut self, role: Role, prefix: String) {
        self.flow.open_paragraph();
        self.paras.push(OpenPara { role, prefix });
    }

    fn open_group(&mut self, section: Collected) -> Tag {
        self.flow.open_container();
        Tag::Group(section)
    }

    /// A list item starts: its number advances (or restarts at its
    /// `text:start-value`); a list header is unmarked.
    fn open_list_item(&mut self, e: &BytesStart<'_>, numbered: bool) {
        let Some(list) = self.lists.last_mut() else {
            return;
        };
        list.mark_pending = numbered;
        if numbered {
            let restart = attr(e, "start-value").and_then(|s| s.parse().ok());
            list.counter = restart.or(list.counter.map(|n: u32| n.saturating_add(1)));
        }
    }

    /// The role of a `text:p` of style `style`, and its list prefix: a
    /// list item's first paragraph carries its mark; a `Title` paragraph
    /// is a level-1 heading. On slides every paragraph is a plain line (a
    /// presentation's bullets come from its masters, as in PowerPoint).
    fn paragraph_role(&mut self, style: Option<&str>) -> (Role, String) {
        if self.slides {
            return (Role::Body, String::new());
        }
        if self.tags.last() == Some(&Tag::ListItem) {
            let level = self.lists.len();
            let styles = self.styles;
            if let Some(list) = self.lists.last_mut() {
                let indent = "  ".repeat(level.saturating_sub(1));
                if !std::mem::take(&mut list.mark_pending) {
                    return (Role::ListItem, indent);
                }
                let list_style = list
                    .style
                    .as_deref()
                    .or_else(|| style.and_then(|s| styles.paragraph_list(s)));
                let def = list_style.and_then(|s| styles.list_level(s, level));
                return (
                    Role::ListItem,
                    format!("{indent}{}", mark(def, &mut list.counter)),
                );
            }
        }
        if style.is_some_and(|s| self.styles.is_title(s)) {
            return (Role::Heading(1), String::new());
        }
        (Role::Body, String::new())
    }

    /// Push markup text with ODF whitespace collapsing.
    fn push_collapsed(&mut self, text: &str) {
        if !self.flow.in_paragraph() {
            return;
        }
        let mut out = String::with_capacity(text.len());
        let mut space =
            self.flow.current_text().is_empty() || self.flow.current_text().ends_with(' ');
        for c in text.chars() {
            if matches!(c, ' ' | '\t' | '\n' | '\r') {
                if !space {
                    out.push(' ');
                    space = true;
                }
            } else {
                out.push(c);
                space = false;
            }
        }
        self.flow.push_text(&out);
    }
}

/// The mark of a list item in a level defined as `def` (a bullet when the
/// list style is unknown); `counter` is the item's number, set to the
/// level's start when the list has not counted yet.
fn mark(def: Option<&ListLevel>, counter: &mut Option<u32>) -> String {
    match def {
        Some(ListLevel::Number {
            format,
            prefix,
            suffix,
            start,
        }) => {
            let n = *counter.get_or_insert(*start);
            format!("{prefix}{}{suffix} ", format.write(n))
        }
        Some(ListLevel::Unmarked) => String::new(),
        Some(ListLevel::Bullet) | None => "- ".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Para, paragraphs};

    fn read_body(body: &str, styles: &OdfStyles) -> TextContent {
        let xml = format!(
            "<office:document-content><office:body><office:text>{body}</office:text></office:body></office:document-content>"
        );
        read(&xml, "content.xml", styles, false).unwrap()
    }

    #[test]
    fn whitespace_spaces_tabs_and_breaks() {
        let c = read_body(
            "<text:p>\n  a   b<text:s text:c=\"3\"/>c<text:tab/>d<text:line-break/>e <text:span>f</text:span></text:p>",
            &OdfStyles::default(),
        );
        assert_eq!(paragraphs(&c.items), vec!["a b   c\td\ne f"]);
    }

    #[test]
    fn headings_lists_notes_and_comments() {
        let mut styles = OdfStyles::default();
        styles
            .read(
                r#"<text:list-style style:name="L1"><text:list-level-style-number text:level="1" style:num-suffix="." style:num-format="1"/></text:list-style>"#,
                "s",
            )
            .unwrap();
        let c = read_body(
            r#"<text:h text:outline-level="2">Sub</text:h>
            <text:list text:style-name="L1"><text:list-item><text:p>one</text:p><text:p>more</text:p></text:list-item>
            <text:list-item><text:p>two<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>the note</text:p></text:note-body></text:note></text:p></text:list-item></text:list>
            <text:p>x<office:annotation><dc:creator>Kim</dc:creator><dc:date>2024</dc:date><text:p>a comment</text:p></office:annotation></text:p>"#,
            &styles,
        );
        assert_eq!(
            c.items[0],
            Item::Para(Para {
                text: "Sub".into(),
                role: Role::Heading(2)
            })
        );
        assert_eq!(
            paragraphs(&c.items),
            vec!["Sub", "1. one", "more", "2. two", "x"]
        );
        assert_eq!(c.groups.len(), 2);
        assert_eq!(c.groups[0].0, Collected::Text(Section::Footnotes));
        assert_eq!(paragraphs(&c.groups[0].1), vec!["the note"]);
        assert_eq!(paragraphs(&c.groups[1].1), vec!["a comment"]);
    }

    #[test]
    fn presentation_shapes_are_collected_by_page() {
        let xml = r#"<office:presentation><draw:page draw:name="p1">
            <draw:frame presentation:class="title"><draw:text-box><text:p>Hello</text:p></draw:text-box></draw:frame>
            <draw:g><draw:custom-shape><text:p>in a group</text:p></draw:custom-shape></draw:g>
            <presentation:notes><draw:page-thumbnail/><draw:frame presentation:class="notes"><draw:text-box><text:p>say hi</text:p></draw:text-box></draw:frame></presentation:notes>
            </draw:page><draw:page><draw:frame><table:table><table:table-row><table:table-cell><text:p>c</text:p></table:table-cell></table:table-row></table:table></draw:frame></draw:page></office:presentation>"#;
        let c = read(xml, "content.xml", &OdfStyles::default(), true).unwrap();
        assert_eq!(c.hidden_pages, vec![false, false]);
        let shapes: Vec<(usize, Option<String>, bool, Vec<&str>)> = c
            .groups
            .iter()
            .map(|(s, items)| match s {
                Collected::Shape(at) => (at.page, at.class.clone(), at.notes, paragraphs(items)),
                _ => panic!("only shapes"),
            })
            .collect();
        assert_eq!(shapes[0], (1, Some("title".into()), false, vec!["Hello"]));
        assert_eq!(shapes[1], (1, None, false, vec!["in a group"]));
        assert_eq!(shapes[2], (1, Some("notes".into()), true, vec!["say hi"]));
        assert_eq!(shapes[3], (2, None, false, vec!["c"]));
    }
}
