//! The named bounds every reader in this plugin stops at, so that a hostile
//! or simply enormous file ends in a logged warning instead of an exhausted
//! sandbox or a missed deadline. The host's own output bounds (200 000
//! blocks, 100 000 chunks, 4 MiB of text per item) are stricter than any
//! document needs, so these sit below them.

/// Most blocks one document yields; later paragraphs are left out (and
/// logged).
pub const MAX_BLOCKS: usize = 100_000;

/// Most chunks one document yields.
pub const MAX_CHUNKS: usize = 100_000;

/// Most bytes of text one block holds: a longer paragraph is cut (and
/// logged), a longer table continues in a further block.
pub const MAX_BLOCK_TEXT: usize = 1 << 20;

/// Deepest XML element nesting read; content nested deeper is skipped (and
/// logged). Real documents nest a few dozen levels.
pub const MAX_XML_DEPTH: usize = 256;

/// Deepest `basedOn` / parent-style chain followed when resolving a style.
pub const MAX_STYLE_CHAIN: usize = 32;

/// Most spaces one ODF `text:s` element expands to.
pub const MAX_SPACE_RUN: usize = 1_000;

/// Deepest RTF group nesting tracked; deeper groups inherit the state of
/// the deepest tracked one.
pub const MAX_RTF_DEPTH: usize = 512;

/// Most slides read from one presentation.
pub const MAX_SLIDES: usize = 20_000;

/// Most records walked in one legacy PowerPoint stream.
pub const MAX_PPT_RECORDS: usize = 1_000_000;

/// Most pieces read from a legacy Word piece table.
pub const MAX_DOC_PIECES: usize = 1_000_000;

/// Most bytes read from one stream of an OLE compound file (legacy .doc and
/// .ppt documents): the host hands a plugin at most a few hundred MiB.
pub const MAX_OLE_STREAM: u64 = 256 << 20;
