//! The XML of an OpenDocument spreadsheet as a stream of the few things its
//! reader acts on: the openings of known elements (by local name, whatever
//! the prefix), closings, and text with references resolved. The
//! attributes the reader needs are read as an element opens; nothing is
//! allocated per element otherwise, so a million cells stream quickly.
//!
//! Only XML's five entities and character references are resolved: entities
//! a DTD declares are never expanded. A package's read bound ends the
//! stream with [`Step::Stop`] instead of an error.

use std::io::BufRead;

use kebab_plugin_sdk::PluginError;
use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};

use super::cell::CellAttrs;
use crate::meter::Meter;

/// The elements the reader acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    Table,
    Row,
    Cell,
    CoveredCell,
    Paragraph,
    Spaces,
    Tab,
    LineBreak,
    Annotation,
    Style,
    TableProperties,
    Meta,
    Title,
    InitialCreator,
    Creator,
    Other,
}

impl Name {
    fn of(local: &str) -> Name {
        match local {
            "table" => Name::Table,
            "table-row" => Name::Row,
            "table-cell" => Name::Cell,
            "covered-table-cell" => Name::CoveredCell,
            "p" | "h" => Name::Paragraph,
            "s" => Name::Spaces,
            "tab" => Name::Tab,
            "line-break" => Name::LineBreak,
            "annotation" => Name::Annotation,
            "style" => Name::Style,
            "table-properties" => Name::TableProperties,
            "meta" => Name::Meta,
            "title" => Name::Title,
            "initial-creator" => Name::InitialCreator,
            "creator" => Name::Creator,
            _ => Name::Other,
        }
    }
}

/// One step through the XML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// An element opens (an empty one closes right after); for tables,
    /// rows, cells, spaces and styles [`Events::attrs`] holds its
    /// attributes.
    Start(Name),
    /// The innermost open element closes.
    End,
    /// Character data, in [`Events::text`].
    Text,
    /// The end of the XML.
    Eof,
    /// The package's read bound was reached: nothing more is read.
    Stop,
}

/// The attributes of the element that just opened (those the reader uses).
#[derive(Debug, Default)]
pub struct Attrs {
    /// `table:name` or `style:name`.
    pub name: Option<String>,
    /// `table:style-name`.
    pub style_name: Option<String>,
    /// `table:display="false"`.
    pub hidden: bool,
    /// `table:number-rows-repeated` or `table:number-columns-repeated`.
    pub repeat: u32,
    /// `text:c`, the spaces a `text:s` stands for.
    pub spaces: u32,
    /// What a cell's attributes say.
    pub cell: CellAttrs,
}

/// A pull reader over the XML.
pub struct Events<R: BufRead> {
    xml: Reader<R>,
    buf: Vec<u8>,
    meter: Option<Meter>,
    stopped: bool,
    /// The text of the last [`Step::Text`].
    pub text: String,
    /// The attributes of the last [`Step::Start`] that has any.
    pub attrs: Attrs,
}

impl<R: BufRead> Events<R> {
    /// A reader over `source`, whose read errors are the meter's bound
    /// when `meter` says it is spent.
    pub fn new(source: R, meter: Option<Meter>) -> Events<R> {
        let mut xml = Reader::from_reader(source);
        let config = xml.config_mut();
        config.expand_empty_elements = true;
        config.check_end_names = false;
        config.allow_unmatched_ends = true;
        Events {
            xml,
            buf: Vec::new(),
            meter,
            stopped: false,
            text: String::new(),
            attrs: Attrs::default(),
        }
    }

    /// The next step; [`Step::Stop`] from the moment the meter stopped the
    /// reading on.
    pub fn next(&mut self) -> Result<Step, PluginError> {
        loop {
            if self.stopped {
                return Ok(Step::Stop);
            }
            self.buf.clear();
            let event = match self.xml.read_event_into(&mut self.buf) {
                Ok(event) => event,
                Err(_) if self.meter.as_ref().is_some_and(Meter::spent) => {
                    self.stopped = true;
                    return Ok(Step::Stop);
                }
                Err(e) => {
                    return Err(PluginError::Malformed(format!(
                        "bad XML in the spreadsheet: {e}"
                    )));
                }
            };
            self.text.clear();
            return Ok(match event {
                Event::Start(e) => {
                    let name = Name::of(local(e.name().0));
                    if matches!(
                        name,
                        Name::Table
                            | Name::Row
                            | Name::Cell
                            | Name::CoveredCell
                            | Name::Spaces
                            | Name::Style
                            | Name::TableProperties
                    ) {
                        self.attrs = attributes(&e);
                    }
                    Step::Start(name)
                }
                Event::End(_) => Step::End,
                Event::Text(t) => {
                    self.text.push_str(&t.xml10_content());
                    Step::Text
                }
                Event::CData(t) => {
                    self.text.push_str(&t.xml10_content());
                    Step::Text
                }
                Event::GeneralRef(r) => {
                    push_reference(&mut self.text, &r);
                    Step::Text
                }
                Event::Eof => Step::Eof,
                _ => continue,
            });
        }
    }
}

/// The attributes the reader uses of an element.
fn attributes(start: &BytesStart<'_>) -> Attrs {
    let mut attrs = Attrs {
        repeat: 1,
        spaces: 1,
        ..Attrs::default()
    };
    for a in start.attributes().with_checks(false).filter_map(Result::ok) {
        let value = || {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_or_else(|_| a.value.to_string(), |v| v.into_owned())
        };
        match local(a.key.0) {
            "name" => attrs.name = Some(value()),
            "style-name" => attrs.style_name = Some(value()),
            "display" => attrs.hidden = value() == "false",
            "number-rows-repeated" | "number-columns-repeated" => {
                attrs.repeat = value().trim().parse::<u32>().unwrap_or(1).max(1);
            }
            "c" => attrs.spaces = value().trim().parse().unwrap_or(1),
            key => attrs.cell.note(key, a.key.0, value),
        }
    }
    attrs
}

/// The local part of a name (`table:table-cell` → `table-cell`).
fn local(name: &str) -> &str {
    name.rsplit_once(':').map_or(name, |(_, local)| local)
}

/// Append what a reference stands for: a character, one of XML's five
/// entities, or the reference as written.
fn push_reference(out: &mut String, r: &BytesRef<'_>) {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        out.push(c);
        return;
    }
    let name: &str = r;
    match quick_xml::escape::resolve_predefined_entity(name) {
        Some(text) => out.push_str(text),
        None => {
            out.push('&');
            out.push_str(name);
            out.push(';');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_text_and_attributes() {
        let xml = r#"<table:table table:name="R&amp;D" table:style-name="ta1"><table:table-row table:number-rows-repeated="3"><text:s text:c="4"/>a &lt; &#xAC00;&custom;</table:table-row></table:table>"#;
        let mut events = Events::new(xml.as_bytes(), None);
        assert_eq!(events.next().unwrap(), Step::Start(Name::Table));
        assert_eq!(events.attrs.name.as_deref(), Some("R&D"));
        assert_eq!(events.attrs.style_name.as_deref(), Some("ta1"));
        assert_eq!(events.next().unwrap(), Step::Start(Name::Row));
        assert_eq!(events.attrs.repeat, 3);
        assert_eq!(events.next().unwrap(), Step::Start(Name::Spaces));
        assert_eq!(events.attrs.spaces, 4);
        assert_eq!(events.next().unwrap(), Step::End);
        let mut text = String::new();
        while let Ok(Step::Text) = events.next() {
            text.push_str(&events.text);
        }
        assert_eq!(text, "a < 가&custom;");
    }
}
