//! A whole book: the container leads to the package document, whose spine
//! gives the chapters in reading order; each chapter's XHTML becomes
//! blocks under its title (from the table of contents when it has one).
//!
//! Chapter numbers are spine positions: chapter n is the n-th `itemref` of
//! the spine, counting every entry (`linear="no"` ones in place, as EPUB
//! CFIs and reading systems' spine indexes count them), so a number never
//! shifts when an item yields no text. Items without text (a cover image,
//! a page of only pictures), items that are not XHTML and the EPUB 3
//! navigation document (its text is the table of contents itself) add no
//! blocks, but keep their numbers.

use std::collections::HashMap;

use kebab_plugin_sdk::{Block, BlockKind, Document, LogLevel, PluginError, log};

use crate::chapters::{self, TitleSources};
use crate::members::Members;
use crate::package::{Item, Package};
use crate::xhtml::{self, Budget, Page};
use crate::{container, encryption, package, toc};

/// The most text (bytes) a book gives; the chapters past it are left out.
pub const MAX_BOOK_TEXT: usize = 48 << 20;

/// The most XHTML (bytes) read from a book's chapters: past it the
/// chapters left are not read, which bounds the time a book takes.
pub const MAX_BOOK_XHTML: usize = 96 << 20;

/// The most blocks a book gives (so its chunks stay under the host's
/// bound of 100 000).
pub const MAX_BLOCKS: usize = 100_000;

/// Parse the bytes of an EPUB file.
pub fn parse(bytes: &[u8]) -> Result<Document, PluginError> {
    let mut members = Members::open(bytes)?;
    let opf_path = container::package_path(&mut members)?;
    let opf = members.text(&opf_path)?.ok_or_else(|| {
        PluginError::Malformed(format!(
            "the package document {opf_path} named by META-INF/container.xml is missing"
        ))
    })?;
    let package = package::parse(&opf, &opf_path)?;
    encryption::refuse_drm(&mut members, &package)?;
    let titles = toc_titles(&mut members, &package);
    let blocks = read_chapters(&mut members, &package, &titles)?;
    Ok(Document {
        title: package.metadata.title().map(str::to_string),
        lang: package.metadata.language(),
        blocks,
        metadata: package.metadata.pairs(package.unique_id.as_deref()),
    })
}

/// Chapter titles by member (lower case): the navigation document's
/// entries, then the NCX's for files the former does not name.
fn toc_titles(members: &mut Members<'_>, package: &Package) -> HashMap<String, String> {
    let mut titles = HashMap::new();
    let sources = [
        (package.nav(), toc::from_nav as fn(&str, &str) -> _),
        (package.ncx(), toc::from_ncx),
    ];
    for (item, read) in sources {
        let Some(item) = item else { continue };
        let text = match members.text(&item.path) {
            Ok(Some(text)) => text,
            Ok(None) => {
                log(
                    LogLevel::Warn,
                    &format!("the table of contents {} is missing", item.path),
                );
                continue;
            }
            Err(e) => {
                log(
                    LogLevel::Warn,
                    &format!("the table of contents {} is unreadable: {e:?}", item.path),
                );
                continue;
            }
        };
        match read(&text, &item.path) {
            Ok(entries) => {
                for (target, label) in entries {
                    titles.entry(target.to_lowercase()).or_insert(label);
                }
            }
            Err(e) => log(
                LogLevel::Warn,
                &format!(
                    "the table of contents {} is not XML ({e}): not used",
                    item.path
                ),
            ),
        }
    }
    titles
}

/// The items to read with their chapter numbers: the spine's text items
/// but the navigation document; a book without a spine reads its
/// manifest's XHTML in manifest order (with a warning).
fn reading_order(package: &Package) -> Vec<(u32, &Item)> {
    if package.spine.is_empty() {
        log(
            LogLevel::Warn,
            "the spine is empty: reading the manifest's XHTML in its order",
        );
        let items = package
            .manifest_order
            .iter()
            .filter_map(|id| package.manifest.get(id))
            .filter(|item| item.is_chapter());
        return numbered(items.map(Some));
    }
    numbered(package.spine.iter().map(|entry| {
        let item = package.item(entry);
        if item.is_none() {
            log(
                LogLevel::Warn,
                &format!(
                    "the spine names {} which the manifest lacks: skipped",
                    entry.idref
                ),
            );
        }
        item
    }))
}

/// 1-based positions of the text items among `items`.
fn numbered<'a>(items: impl Iterator<Item = Option<&'a Item>>) -> Vec<(u32, &'a Item)> {
    items
        .zip(1u32..)
        .filter_map(|(item, number)| item.map(|item| (number, item)))
        .filter(|(_, item)| item.is_chapter())
        .collect()
}

/// What reading the chapters has made so far.
struct Progress {
    budget: Budget,
    blocks: Vec<Block>,
    /// The title of the last chapter with text.
    previous: Option<String>,
    /// The first chapter whose XHTML broke, and how.
    first_error: Option<String>,
    xhtml_bytes: usize,
}

/// Every chapter's blocks, in reading order, within the book's bounds.
fn read_chapters(
    members: &mut Members<'_>,
    package: &Package,
    titles: &HashMap<String, String>,
) -> Result<Vec<Block>, PluginError> {
    let order = reading_order(package);
    let mut progress = Progress {
        budget: Budget {
            bytes: MAX_BOOK_TEXT,
            pieces: MAX_BLOCKS,
        },
        blocks: Vec::new(),
        previous: None,
        first_error: None,
        xhtml_bytes: 0,
    };
    for (read, &(number, item)) in order.iter().enumerate() {
        let left = order.len() - read - 1;
        if progress.xhtml_bytes >= MAX_BOOK_XHTML {
            log(
                LogLevel::Warn,
                &format!(
                    "the book's chapters pass {} MiB of XHTML: chapter {number} and the \
                     {left} after it are left out",
                    MAX_BOOK_XHTML >> 20
                ),
            );
            break;
        }
        if !read_chapter(members, package, titles, (number, item), &mut progress)? {
            log(
                LogLevel::Warn,
                &format!(
                    "the book's text passes its bound ({} MiB, {MAX_BLOCKS} blocks) in chapter \
                     {number}: the rest of it and {left} more chapters are left out",
                    MAX_BOOK_TEXT >> 20
                ),
            );
            progress.blocks.truncate(MAX_BLOCKS);
            break;
        }
    }
    match progress.first_error {
        Some(error) if progress.blocks.is_empty() => Err(PluginError::Malformed(format!(
            "no chapter could be read: {error}"
        ))),
        _ => Ok(progress.blocks),
    }
}

/// Add the blocks of chapter `number`; `false` when the book's bounds are
/// reached.
fn read_chapter(
    members: &mut Members<'_>,
    package: &Package,
    titles: &HashMap<String, String>,
    (number, item): (u32, &Item),
    progress: &mut Progress,
) -> Result<bool, PluginError> {
    let Some(text) = members.text(&item.path)? else {
        log(
            LogLevel::Warn,
            &format!(
                "chapter {number} ({}) is not in the archive: skipped",
                item.path
            ),
        );
        return Ok(true);
    };
    progress.xhtml_bytes += text.len();
    let page = xhtml::read(&text, &mut progress.budget);
    if let Some(error) = &page.error {
        log(
            LogLevel::Warn,
            &format!(
                "chapter {number} ({}) is broken XHTML: {error}; indexed the text before it",
                item.path
            ),
        );
        progress
            .first_error
            .get_or_insert_with(|| format!("{}: {error}", item.path));
    }
    let cut = page.cut;
    let previous = progress.previous.as_deref();
    if let Some(title) = chapter_title(&page, titles, item, package, previous, number) {
        progress
            .blocks
            .extend(chapters::blocks(number, &title, page.pieces));
        progress.previous = Some(title);
    }
    Ok(!cut && progress.blocks.len() < MAX_BLOCKS)
}

/// The title of a chapter that has text (see [`chapters::title`]); `None`
/// for one without.
fn chapter_title(
    page: &Page,
    titles: &HashMap<String, String>,
    item: &Item,
    package: &Package,
    previous: Option<&str>,
    number: u32,
) -> Option<String> {
    let first = page.pieces.first()?;
    let sources = TitleSources {
        toc: titles.get(&item.path.to_lowercase()).map(String::as_str),
        leading_heading: (first.kind == BlockKind::Heading).then_some(first.text.as_str()),
        page_title: page.title.as_deref(),
        book_title: package.metadata.title(),
        previous,
    };
    Some(chapters::title(sources, number))
}
