//! Chapter titles from the book's table of contents: the EPUB 3 navigation
//! document (`<nav epub:type="toc">`) or the EPUB 2 NCX (`navPoint`s).
//! Each entry points at a member (its `#fragment` dropped), resolved
//! against the folder of the file that holds the table; entries come in
//! reading order, so an outer entry comes before the ones nested in it.

use quick_xml::events::{BytesStart, Event};

use crate::{paths, xml};

/// The most entries one table of contents gives.
const MAX_ENTRIES: usize = 100_000;

/// A table-of-contents entry: the member it points at and its label.
pub type Entry = (String, String);

/// The entries of the navigation document `text`, stored at `path`.
pub fn from_nav(text: &str, path: &str) -> Result<Vec<Entry>, quick_xml::Error> {
    let base = paths::folder(path);
    let mut reader = xml::reader(text);
    let mut entries = Vec::new();
    // Open elements inside the toc `<nav>`; 0 outside it.
    let mut depth = 0usize;
    loop {
        match reader.read_event()? {
            Event::Start(e) if depth == 0 => depth = usize::from(is_toc_nav(&e)),
            Event::Start(e) if xml::is(&e, "a") => {
                let href = xml::attr(&e, "href");
                let label = xml::inner_text(&mut reader)?;
                let label = Some(label)
                    .filter(|l| !l.is_empty())
                    .or_else(|| xml::attr(&e, "title").map(|t| xml::collapse(&t)));
                if let (Some(target), Some(label)) =
                    (href.and_then(|h| paths::resolve(base, &h)), label)
                {
                    push(&mut entries, target, label);
                }
            }
            Event::Start(_) => depth += 1,
            Event::End(_) if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(entries)
}

/// Whether a start tag opens the table-of-contents `<nav>`.
fn is_toc_nav(start: &BytesStart<'_>) -> bool {
    let typed = |value: Option<String>, token: &str| {
        value.is_some_and(|v| v.split_whitespace().any(|t| t == token))
    };
    xml::is(start, "nav")
        && (typed(xml::prefixed_attr(start, "type"), "toc")
            || typed(xml::attr(start, "role"), "doc-toc"))
}

/// A `navPoint` being read: where it starts in reading order, its label
/// and target once seen.
struct OpenPoint {
    order: usize,
    label: Option<String>,
    target: Option<String>,
}

/// The entries of the NCX `text`, stored at `path`.
pub fn from_ncx(text: &str, path: &str) -> Result<Vec<Entry>, quick_xml::Error> {
    let base = paths::folder(path);
    let mut reader = xml::reader(text);
    let mut open: Vec<OpenPoint> = Vec::new();
    let mut done: Vec<(usize, Entry)> = Vec::new();
    let mut started = 0usize;
    loop {
        match reader.read_event()? {
            Event::Start(e) if xml::is(&e, "navPoint") => {
                open.push(OpenPoint {
                    order: started,
                    label: None,
                    target: None,
                });
                started += 1;
            }
            Event::Start(e) if xml::is(&e, "text") => {
                let label = xml::inner_text(&mut reader)?;
                if let Some(point) = open.last_mut().filter(|p| p.label.is_none()) {
                    point.label = Some(label).filter(|l| !l.is_empty());
                }
            }
            Event::Start(e) | Event::Empty(e) if xml::is(&e, "content") => {
                if let Some(point) = open.last_mut().filter(|p| p.target.is_none()) {
                    point.target = xml::attr(&e, "src").and_then(|s| paths::resolve(base, &s));
                }
            }
            Event::End(e) if xml::local(e.name()).eq_ignore_ascii_case("navPoint") => {
                if let Some(OpenPoint {
                    order,
                    label: Some(label),
                    target: Some(target),
                }) = open.pop()
                    && done.len() < MAX_ENTRIES
                {
                    done.push((order, (target, label)));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    done.sort_by_key(|(order, _)| *order);
    Ok(done.into_iter().map(|(_, entry)| entry).collect())
}

fn push(entries: &mut Vec<Entry>, target: String, label: String) {
    if entries.len() < MAX_ENTRIES {
        entries.push((target, label));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[(&str, &str)]) -> Vec<Entry> {
        list.iter()
            .map(|(t, l)| (t.to_string(), l.to_string()))
            .collect()
    }

    #[test]
    fn nav_entries_come_from_the_toc_nav_only() {
        let nav = r##"<html xmlns:epub="http://www.idpf.org/2007/ops"><body>
<nav epub:type="landmarks"><ol><li><a href="cover.xhtml">Cover</a></li></ol></nav>
<nav epub:type="toc" id="toc"><h1>Contents</h1><ol>
  <li><a href="text/c1.xhtml">Part <em>One</em></a>
    <ol><li><a href="text/c1.xhtml#s1">Section</a></li>
        <li><a href="text/c%202.xhtml#x"><img alt=""/></a></li></ol></li>
  <li><span>Heading only</span></li>
  <li><a href="../c3.xhtml" title="Three"><img src="x.png"/></a></li>
</ol></nav>
<nav epub:type="page-list"><ol><li><a href="text/c1.xhtml#p1">1</a></li></ol></nav>
</body></html>"##;
        assert_eq!(
            from_nav(nav, "OEBPS/nav.xhtml").unwrap(),
            entries(&[
                ("OEBPS/text/c1.xhtml", "Part One"),
                ("OEBPS/text/c1.xhtml", "Section"),
                ("c3.xhtml", "Three"),
            ])
        );
    }

    #[test]
    fn ncx_entries_keep_reading_order_with_nesting() {
        let ncx = r#"<ncx><docTitle><text>Book</text></docTitle><navMap>
  <navPoint id="a" playOrder="1"><navLabel><text>Chapter 1</text></navLabel>
    <content src="Text/c1.xhtml"/>
    <navPoint id="b" playOrder="2"><navLabel><text> Inner </text></navLabel>
      <content src="Text/c1b.xhtml#s"/></navPoint>
  </navPoint>
  <navPoint id="c"><content src="Text/c2.xhtml"/><navLabel><text>장 2</text></navLabel></navPoint>
</navMap></ncx>"#;
        assert_eq!(
            from_ncx(ncx, "OEBPS/toc.ncx").unwrap(),
            entries(&[
                ("OEBPS/Text/c1.xhtml", "Chapter 1"),
                ("OEBPS/Text/c1b.xhtml", "Inner"),
                ("OEBPS/Text/c2.xhtml", "장 2"),
            ])
        );
    }
}
