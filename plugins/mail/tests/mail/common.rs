//! Helpers shared by the mail plugin's integration tests: fixtures, parsing
//! through the plugin's entry points, and looking blocks up by text.

use kebab_plugin_mail::Plugin;
use kebab_plugin_sdk::attachments::Attachment;
use kebab_plugin_sdk::{Block, Chunk, ChunkPolicy, Document, Guest, PartUnit, PluginError, Span};

/// The bytes of `tests/fixtures/formats/mail/<name>`.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/formats/mail/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Parse `bytes` as the file `name`, with what the parse handed over.
pub fn parse(name: &str, bytes: &[u8]) -> (Result<Document, PluginError>, Vec<Attachment>) {
    let _ = kebab_plugin_sdk::attachments::take();
    let doc = Plugin::parse(name.to_string(), bytes.to_vec());
    (doc, kebab_plugin_sdk::attachments::take())
}

/// Parse a fixture that must parse.
pub fn parse_fixture(name: &str) -> (Document, Vec<Attachment>) {
    let (doc, handed) = parse(name, &fixture(name));
    (doc.unwrap_or_else(|e| panic!("{name}: {e:?}")), handed)
}

/// The chunks of a document under a usual policy.
pub fn chunks(doc: &Document) -> Vec<Chunk> {
    let policy = ChunkPolicy {
        target_tokens: 400,
        overlap_tokens: 40,
    };
    Plugin::chunk_document(doc.clone(), policy).expect("chunks")
}

/// The texts of the blocks.
pub fn texts(doc: &Document) -> Vec<&str> {
    doc.blocks.iter().map(|b| b.text.as_str()).collect()
}

/// The block whose text contains `needle` (exactly one must).
pub fn block_with<'d>(doc: &'d Document, needle: &str) -> &'d Block {
    let found: Vec<&Block> = doc
        .blocks
        .iter()
        .filter(|b| b.text.contains(needle))
        .collect();
    assert_eq!(found.len(), 1, "blocks containing {needle:?}: {found:#?}");
    found[0]
}

/// `Span::Part` of `unit` over `first..=last`.
pub fn part(unit: PartUnit, first: u32, last: u32) -> Span {
    Span::parts(unit, first, last)
}

/// A heading path of one title.
pub fn path(title: &str) -> Vec<String> {
    vec![title.to_string()]
}
