//! PowerPoint presentations in Office Open XML (`.pptx`, `.pptm`,
//! `.ppsx`, `.ppsm`, `.potx`).
//!
//! Slides are taken in presentation order — `p:sldIdLst` of
//! `presentation.xml` through its relationships, never by part names —
//! and each slide's shapes in their tree order: the title placeholder
//! (`title`, `ctrTitle`) becomes the slide's title; every other shape
//! with text, table (`a:tbl`) and SmartArt diagram (its data part) adds
//! to the body; group shapes are descended; slide numbers, dates, headers
//! and footers are left out. Speaker notes come from the slide's
//! `notesSlide` part. A slide with `show="0"` is hidden.

use std::collections::HashMap;

use kebab_plugin_sdk::{Document, LogLevel, PluginError, log};

use crate::flow::{Flow, Item, Role};
use crate::limits::MAX_SLIDES;
use crate::opc::Package;
use crate::slides::{self, Slide};
use crate::xml::{Node, XmlCursor, attr, local, prefixed_attr, skips_alternate};

/// Elements whose content is never text: shape, run and paragraph
/// properties, styles, extensions, timing.
const SKIPPED: &[&str] = &[
    "spPr",
    "grpSpPr",
    "style",
    "extLst",
    "bodyPr",
    "lstStyle",
    "pPr",
    "rPr",
    "endParaRPr",
    "tblPr",
    "tblGrid",
    "tcPr",
    "timing",
    "transition",
    "clrMapOvr",
    "blipFill",
];

/// Placeholders whose text is not the slide's: numbers, dates, headers,
/// footers, the notes page's slide image.
const IGNORED_PLACEHOLDERS: &[&str] = &["sldNum", "dt", "hdr", "ftr", "sldImg"];

/// Parse a PowerPoint package.
pub fn parse(mut package: Package<'_>) -> Result<Document, PluginError> {
    let main = package
        .rel_target("", "officeDocument")?
        .unwrap_or_else(|| "ppt/presentation.xml".to_string());
    let xml = package.part(&main)?.ok_or_else(|| {
        PluginError::Malformed(format!(
            "the PowerPoint package has no presentation part ({main})"
        ))
    })?;
    let rels = package.rels(&main)?;
    let ids = slide_ids(&xml, &main)?;
    if ids.len() > MAX_SLIDES {
        log(
            LogLevel::Warn,
            &format!(
                "{} slides past the first {MAX_SLIDES} were left out",
                ids.len() - MAX_SLIDES
            ),
        );
    }
    let targets: HashMap<&str, &str> = rels
        .iter()
        .map(|r| (r.id.as_str(), r.target.as_str()))
        .collect();
    let mut deck = Vec::new();
    for id in ids.iter().take(MAX_SLIDES) {
        let slide = match targets.get(id.as_str()) {
            Some(target) => read_slide(&mut package, target)?,
            None => {
                log(
                    LogLevel::Warn,
                    &format!("slide {id} has no part; counted empty"),
                );
                Slide::default()
            }
        };
        deck.push(slide);
    }
    let props = package.core_properties()?;
    Ok(slides::document(&deck, &props, "pptx"))
}

/// The relationship ids of the slides, in presentation order.
fn slide_ids(xml: &str, part: &str) -> Result<Vec<String>, PluginError> {
    let mut ids = Vec::new();
    let mut cursor = XmlCursor::new(xml, part);
    while let Some(node) = cursor.next_node()? {
        if let Node::Open(e) = node
            && local(&e) == "sldId"
            && let Some(id) = prefixed_attr(&e, "id")
        {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// One slide, its diagrams and its notes.
fn read_slide(package: &mut Package<'_>, part: &str) -> Result<Slide, PluginError> {
    let Some(xml) = package.part(part)? else {
        log(LogLevel::Warn, &format!("{part} is missing; counted empty"));
        return Ok(Slide::default());
    };
    let content = read_shapes(&xml, part)?;
    let mut slide = Slide {
        hidden: content.hidden,
        ..Slide::default()
    };
    for shape in &content.shapes {
        match shape.placeholder.as_deref() {
            Some("title" | "ctrTitle") => slide.set_title(&shape.items),
            Some(p) if IGNORED_PLACEHOLDERS.contains(&p) => {}
            _ => slide.add_shape(&shape.items),
        }
    }
    let rels = package.rels(part)?;
    for id in &content.diagrams {
        if let Some(rel) = rels.iter().find(|r| &r.id == id)
            && let Some(data) = package.part(&rel.target)?
        {
            slide.add_shape(&read_shapes(&data, &rel.target)?.loose);
        }
    }
    if let Some(rel) = rels.iter().find(|r| r.kind == "notesSlide")
        && let Some(notes) = package.part(&rel.target)?
    {
        for shape in read_shapes(&notes, &rel.target)?.shapes {
            match shape.placeholder.as_deref() {
                Some(p) if IGNORED_PLACEHOLDERS.contains(&p) => {}
                _ => slide.add_notes(&shape.items),
            }
        }
    }
    Ok(slide)
}

/// The text of one shape.
struct Shape {
    /// Its placeholder type (`title`, `body`, `obj` when untyped), if it
    /// is a placeholder.
    placeholder: Option<String>,
    items: Vec<Item>,
}

/// What a slide-like part (slide, notes, diagram data) holds.
#[derive(Default)]
struct Shapes {
    shapes: Vec<Shape>,
    /// Paragraphs outside any shape (a diagram's data points).
    loose: Vec<Item>,
    /// Relationship ids of SmartArt diagrams' data parts.
    diagrams: Vec<String>,
    /// `show="0"` on the slide.
    hidden: bool,
}

/// What an open element means to the walk.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tag {
    Shape,
    Para,
    Run,
    Text,
    Table,
    Cell,
    Alternate(bool),
    Other,
}

/// Read the shapes of a slide, notes slide or diagram data part.
fn read_shapes(xml: &str, part: &str) -> Result<Shapes, PluginError> {
    let mut out = Shapes::default();
    let mut flow = Flow::default();
    let mut tags: Vec<Tag> = Vec::new();
    let mut placeholder: Option<String> = None;
    let mut cursor = XmlCursor::new(xml, part);
    while let Some(node) = cursor.next_node()? {
        match node {
            Node::Open(e) => {
                let name = local(&e);
                let skip_branch = match tags.last_mut() {
                    Some(Tag::Alternate(taken)) => skips_alternate(taken, name),
                    _ => false,
                };
                if SKIPPED.contains(&name) || skip_branch {
                    cursor.skip()?;
                    continue;
                }
                let in_shape = tags.contains(&Tag::Shape);
                let tag = open(name, in_shape, tags.last().copied(), &mut flow);
                match name {
                    "sld" if cursor.depth() == 1 => {
                        out.hidden = attr(&e, "show").as_deref() == Some("0")
                    }
                    "ph" if in_shape => {
                        placeholder = Some(attr(&e, "type").unwrap_or_else(|| "obj".into()))
                    }
                    "relIds" => out.diagrams.extend(prefixed_attr(&e, "dm")),
                    _ => {}
                }
                tags.push(tag);
            }
            Node::Close => match tags.pop() {
                Some(Tag::Shape) => out.shapes.push(Shape {
                    placeholder: placeholder.take(),
                    items: flow.close_container(),
                }),
                Some(Tag::Para) => flow.close_paragraph(Role::Body, ""),
                Some(Tag::Table) => flow.close_table(),
                Some(Tag::Cell) => flow.close_cell(),
                _ => {}
            },
            Node::Text(t) => {
                if tags.last() == Some(&Tag::Text) {
                    flow.push_text(&t);
                }
            }
        }
    }
    out.loose = flow.finish();
    Ok(out)
}

/// React to an element opening; what it means is returned.
fn open(name: &str, in_shape: bool, parent: Option<Tag>, flow: &mut Flow) -> Tag {
    match name {
        "sp" | "graphicFrame" | "cxnSp" | "pic" if !in_shape => {
            flow.open_container();
            Tag::Shape
        }
        "p" => {
            flow.open_paragraph();
            Tag::Para
        }
        "r" | "fld" => Tag::Run,
        "t" if parent == Some(Tag::Run) => Tag::Text,
        "br" => {
            flow.push_char('\n');
            Tag::Other
        }
        "tbl" => {
            flow.open_table();
            Tag::Table
        }
        "tr" => {
            flow.open_row();
            Tag::Other
        }
        "tc" => {
            flow.open_container();
            Tag::Cell
        }
        "AlternateContent" => Tag::Alternate(false),
        _ => Tag::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::paragraphs;

    #[test]
    fn shapes_placeholders_tables_and_groups() {
        let xml = r#"<p:sld show="0"><p:cSld><p:spTree>
          <p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en"/><a:t>Title</a:t></a:r></a:p></p:txBody></p:sp>
          <p:grpSp><p:sp><p:txBody><a:p><a:r><a:t>line </a:t></a:r><a:br/><a:fld type="slidenum"><a:t>2</a:t></a:fld></a:p></p:txBody></p:sp></p:grpSp>
          <p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tblGrid/><a:tr><a:tc><a:txBody><a:p><a:r><a:t>h</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>
          </p:spTree></p:cSld></p:sld>"#;
        let shapes = read_shapes(xml, "slide1.xml").unwrap();
        assert!(shapes.hidden);
        assert_eq!(shapes.shapes.len(), 3);
        assert_eq!(shapes.shapes[0].placeholder.as_deref(), Some("title"));
        assert_eq!(paragraphs(&shapes.shapes[1].items), vec!["line\n2"]);
        assert!(matches!(shapes.shapes[2].items[0], Item::Table(_)));
    }

    #[test]
    fn slide_ids_keep_presentation_order() {
        let xml = r#"<p:presentation><p:sldIdLst><p:sldId id="257" r:id="rId9"/><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>"#;
        assert_eq!(slide_ids(xml, "p.xml").unwrap(), vec!["rId9", "rId2"]);
    }
}
