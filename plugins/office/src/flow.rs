//! The content of a word-processing document as its readers see it:
//! paragraphs (with their role: heading, list item, body) and tables of
//! cells, in reading order.
//!
//! Readers (Word XML, OpenDocument XML, RTF) drive a [`Flow`] with
//! open/close calls as they walk their markup, and it assembles
//! [`Item`]s. What nests inside a paragraph (a text box, a shape, a frame)
//! is read in full and placed right after that paragraph, so a text box
//! reads after the paragraph it is anchored in. The calls must nest as the
//! markup does; a stray closing (a cell outside a table) is tolerated.

use kebab_plugin_sdk::{LogLevel, log};

use crate::limits::{MAX_BLOCK_TEXT, MAX_BLOCKS};

/// What a paragraph is.
#[derive(Debug, Clone, PartialEq)]
pub enum Role {
    /// Ordinary text.
    Body,
    /// A heading of this level (1 = outermost).
    Heading(u8),
    /// A list item; its text starts with its bullet or number.
    ListItem,
}

/// A finished paragraph.
#[derive(Debug, Clone, PartialEq)]
pub struct Para {
    /// Its text as shown (a list item's mark included).
    pub text: String,
    /// What it is.
    pub role: Role,
}

/// A finished table: rows of cells, each cell its own items.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// Rows of cells; a cell holds paragraphs (and nested tables).
    pub rows: Vec<Vec<Vec<Item>>>,
}

/// One unit of a document's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Para(Para),
    Table(Table),
}

/// Something open while a reader walks its markup.
enum Frame {
    Para {
        text: String,
        /// Items nested inside the paragraph (text boxes), placed after it.
        nested: Vec<Item>,
    },
    Table(Table),
    /// A table cell, a note or a comment: a container of items.
    Container(Vec<Item>),
}

/// Assembles items from a reader's open/close calls.
#[derive(Default)]
pub struct Flow {
    stack: Vec<Frame>,
    done: Vec<Item>,
}

impl Flow {
    /// A paragraph starts.
    pub fn open_paragraph(&mut self) {
        self.stack.push(Frame::Para {
            text: String::new(),
            nested: Vec::new(),
        });
    }

    /// Whether the innermost open thing is a paragraph (text would go
    /// somewhere).
    pub fn in_paragraph(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Para { .. }))
    }

    /// Text of the innermost open paragraph (dropped outside paragraphs).
    pub fn push_text(&mut self, text: &str) {
        if let Some(Frame::Para { text: t, .. }) = self.stack.last_mut() {
            t.push_str(text);
        }
    }

    /// One character of the innermost open paragraph.
    pub fn push_char(&mut self, c: char) {
        if let Some(Frame::Para { text, .. }) = self.stack.last_mut() {
            text.push(c);
        }
    }

    /// The text of the innermost open paragraph so far.
    pub fn current_text(&self) -> &str {
        match self.stack.last() {
            Some(Frame::Para { text, .. }) => text,
            _ => "",
        }
    }

    /// The innermost paragraph ends: it is placed with `role`, and
    /// `prefix` (a list item's bullet or number) put before its text.
    pub fn close_paragraph(&mut self, role: Role, prefix: &str) {
        let Some(Frame::Para { text, nested }) = self.stack.pop() else {
            return;
        };
        let text = clean(&text);
        let text = if prefix.is_empty() || text.is_empty() {
            text
        } else {
            format!("{prefix}{text}")
        };
        self.place(Item::Para(Para { text, role }));
        for item in nested {
            self.place(item);
        }
    }

    /// A table starts.
    pub fn open_table(&mut self) {
        self.stack.push(Frame::Table(Table::default()));
    }

    /// A row of the innermost table starts.
    pub fn open_row(&mut self) {
        if let Some(Frame::Table(t)) = self.stack.last_mut() {
            t.rows.push(Vec::new());
        }
    }

    /// The innermost table ends and is placed.
    pub fn close_table(&mut self) {
        if matches!(self.stack.last(), Some(Frame::Table(_)))
            && let Some(Frame::Table(t)) = self.stack.pop()
        {
            self.place(Item::Table(t));
        }
    }

    /// A container (a cell, a note, a comment) starts.
    pub fn open_container(&mut self) {
        self.stack.push(Frame::Container(Vec::new()));
    }

    /// The innermost container ends; its items are returned (for a note or
    /// comment, which the reader files separately).
    pub fn close_container(&mut self) -> Vec<Item> {
        match self.stack.last() {
            Some(Frame::Container(_)) => match self.stack.pop() {
                Some(Frame::Container(items)) => items,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// The innermost container ends as a cell of the innermost table's
    /// last row (its items are placed as they are when there is no table).
    pub fn close_cell(&mut self) {
        if !matches!(self.stack.last(), Some(Frame::Container(_))) {
            return;
        }
        let items = self.close_container();
        match self.stack.last_mut() {
            Some(Frame::Table(t)) => {
                if t.rows.is_empty() {
                    t.rows.push(Vec::new());
                }
                if let Some(row) = t.rows.last_mut() {
                    row.push(items);
                }
            }
            _ => {
                for item in items {
                    self.place(item);
                }
            }
        }
    }

    /// Whether more items than a document may have blocks were placed at
    /// the top level: reading further would only produce what is left
    /// out.
    pub fn is_full(&self) -> bool {
        self.done.len() > MAX_BLOCKS
    }

    /// Place finished items where the next item would go.
    pub fn place_items(&mut self, items: Vec<Item>) {
        for item in items {
            self.place(item);
        }
    }

    /// Everything placed at the top level, what is still open closed first.
    pub fn finish(mut self) -> Vec<Item> {
        while let Some(frame) = self.stack.last() {
            match frame {
                Frame::Para { .. } => self.close_paragraph(Role::Body, ""),
                Frame::Table(_) => self.close_table(),
                Frame::Container(_) => self.close_cell(),
            }
        }
        self.done
    }

    /// Put a finished item where it belongs: after the paragraph it is
    /// nested in, into its container, or at the top level.
    fn place(&mut self, item: Item) {
        match self.stack.last_mut() {
            Some(Frame::Para { nested, .. }) => nested.push(item),
            Some(Frame::Container(items)) => items.push(item),
            Some(Frame::Table(t)) => match t.rows.last_mut() {
                Some(row) => row.push(vec![item]),
                None => t.rows.push(vec![vec![item]]),
            },
            None => self.done.push(item),
        }
    }
}

/// A paragraph's text as shown: control characters other than tabs and
/// line breaks dropped, spaces before a line break and whitespace at
/// either end trimmed.
pub fn clean(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect();
    let lines: Vec<&str> = kept.split('\n').map(|l| l.trim_end_matches(' ')).collect();
    lines.join("\n").trim().to_string()
}

/// The paragraphs of `items` in reading order, tables' cells included.
pub fn paragraphs(items: &[Item]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack: Vec<std::slice::Iter<'_, Item>> = vec![items.iter()];
    while let Some(top) = stack.last_mut() {
        let Some(item) = top.next() else {
            stack.pop();
            continue;
        };
        match item {
            Item::Para(p) => out.push(p.text.as_str()),
            Item::Table(t) => {
                for cell in t.rows.iter().rev().flat_map(|r| r.iter().rev()) {
                    stack.push(cell.iter());
                }
            }
        }
    }
    out
}

/// One table row as a `| a | b |` line and how many non-empty
/// paragraphs its cells hold.
pub struct Row {
    /// `| a | b |`.
    pub line: String,
    /// How many non-empty paragraphs its cells hold.
    pub paragraphs: u32,
}

/// The rows of a table that hold any text.
pub fn table_rows(table: &Table) -> Vec<Row> {
    let mut out = Vec::new();
    for row in &table.rows {
        let mut count = 0u32;
        let cells: Vec<String> = row
            .iter()
            .map(|cell| {
                let texts: Vec<String> = paragraphs(cell)
                    .into_iter()
                    .filter(|t| !t.is_empty())
                    .map(one_line)
                    .collect();
                count += texts.len() as u32;
                texts.join(" ")
            })
            .collect();
        if count > 0 {
            out.push(Row {
                line: format!("| {} |", cells.join(" | ")),
                paragraphs: count,
            });
        }
    }
    out
}

/// Text on one line: line breaks and tabs become spaces.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\t'])
        .filter(|s| !s.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` cut to [`MAX_BLOCK_TEXT`] bytes at a character boundary.
pub fn bounded(text: &str) -> String {
    if text.len() <= MAX_BLOCK_TEXT {
        return text.to_string();
    }
    let mut end = MAX_BLOCK_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    log(
        LogLevel::Warn,
        &format!(
            "a paragraph of {} bytes was cut to {MAX_BLOCK_TEXT}",
            text.len()
        ),
    );
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn para(text: &str) -> Item {
        Item::Para(Para {
            text: text.into(),
            role: Role::Body,
        })
    }

    #[test]
    fn nested_paragraphs_follow_their_anchor() {
        let mut flow = Flow::default();
        flow.open_paragraph();
        flow.push_text("anchor ");
        flow.open_paragraph();
        flow.push_text("in a text box");
        flow.close_paragraph(Role::Body, "");
        flow.push_text("text");
        flow.close_paragraph(Role::Body, "");
        assert_eq!(
            flow.finish(),
            vec![para("anchor text"), para("in a text box")]
        );
    }

    #[test]
    fn tables_collect_cells_by_row_and_paragraphs_flatten_in_order() {
        let mut flow = Flow::default();
        flow.open_table();
        for row in [["a", "b"], ["c", "d"]] {
            flow.open_row();
            for cell in row {
                flow.open_container();
                flow.open_paragraph();
                flow.push_text(cell);
                flow.close_paragraph(Role::Body, "");
                flow.close_cell();
            }
        }
        flow.close_table();
        let items = flow.finish();
        let Item::Table(t) = &items[0] else {
            panic!("a table");
        };
        assert_eq!(t.rows.len(), 2);
        assert_eq!(paragraphs(&items), vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn unbalanced_calls_do_not_lose_text() {
        let mut flow = Flow::default();
        flow.close_cell();
        flow.close_table();
        flow.open_paragraph();
        flow.push_text(" \u{7}left open\t");
        assert_eq!(flow.finish(), vec![para("left open")]);
    }
}
