//! kebab's own tokenizer for SentencePiece Unigram models (the XLM-R
//! family: multilingual-e5, bge-m3), giving exactly the ids the Hugging
//! Face `tokenizers` crate gives for their `tokenizer.json`, with padding
//! off and truncation to `max_length` tokens.
//!
//! Why: the `tokenizers` crate takes about a second and some 290 MB to
//! load multilingual-e5-small's 17 MB `tokenizer.json` (250 002 pieces),
//! a second added to every `kebab search`. This reads the file with typed
//! serde structs, keeps the vocabulary in one byte blob and an open
//! addressing table of its pieces and their prefixes, and runs the same
//! pipeline: added (special) tokens cut from the raw text; SentencePiece's
//! precompiled normalization charsmap, applied per grapheme as `tokenizers`
//! applies it (first match of its double-array trie over the grapheme, or
//! per character); runs of spaces collapsed (the `Replace` of ` {2,}`);
//! Metaspace (`▁` for spaces, prepended, split before each `▁`); the
//! Viterbi segmentation of each word, unknown characters scored
//! `min score - 10` and consecutive ones fused; the template's special
//! tokens around at most `max_length` tokens in all.
//!
//! [`Unigram::from_file`] answers `None` for a file using anything else
//! (another model, normalizer, pre-tokenizer or post-processor, added
//! tokens matched after normalization or as single words, byte fallback):
//! the caller keeps the `tokenizers` crate for it.
//!
//! Bounds: a text is read in one pass, word by word, and the Viterbi of a
//! word hands its tokens over at every position no vocabulary piece
//! crosses (there the best path of the whole word passes, whatever
//! follows), so encoding stops once `max_length` tokens are known. A word
//! with no such position (one letter repeated, say) is segmented whole
//! first, in time and memory linear in its length, as `tokenizers` does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use unicode_segmentation::UnicodeSegmentation;

/// A Unigram tokenizer read from a `tokenizer.json` (see the module docs).
pub struct Unigram {
    /// Added tokens, cut from the raw text before normalization.
    added: Vec<Added>,
    /// Whether some added token starts with this byte.
    added_first: [bool; 256],
    /// SentencePiece's normalization, when the file has one.
    charsmap: Option<Charsmap>,
    /// Whether runs of spaces become one (after the charsmap).
    collapse_spaces: bool,
    metaspace: Metaspace,
    vocab: Vocab,
    unk_id: u32,
    /// Score of an unknown character: the lowest score minus 10.
    unk_score: f64,
    /// Special tokens before and after the text's (the template's).
    prefix: Vec<u32>,
    suffix: Vec<u32>,
    max_length: usize,
}

/// An added token: its text, id, and whether it takes the whitespace
/// before (`lstrip`) or after it (`rstrip`) along.
struct Added {
    content: Box<str>,
    id: u32,
    lstrip: bool,
    rstrip: bool,
}

/// The Metaspace pre-tokenizer.
struct Metaspace {
    replacement: char,
    prepend: Prepend,
    split: bool,
}

/// When Metaspace prepends its replacement to a text segment.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prepend {
    Always,
    /// Only to the segment at the very start of the text.
    First,
    Never,
}

impl Unigram {
    /// Read the `tokenizer.json` at `path` for texts truncated to
    /// `max_length` tokens (special tokens included): `Ok(None)` when the
    /// file is not a Unigram tokenizer this type reproduces exactly, an
    /// error when it cannot be read.
    pub fn from_file(path: &Path, max_length: usize) -> Result<Option<Unigram>, String> {
        let json = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Unigram::from_json(&json, max_length))
    }

    /// [`Unigram::from_file`] on the file's text.
    fn from_json(json: &str, max_length: usize) -> Option<Unigram> {
        let file: File<'_> = serde_json::from_str(json).ok()?;
        let model = file.model;
        if model.kind.0 != "Unigram" || model.byte_fallback || model.vocab.is_empty() {
            return None;
        }
        let unk = model.unk_id?;
        let (unk_piece, unk_piece_score) = model.vocab.get(unk)?;
        let vocab = Vocab::build(&model.vocab)?;
        // Fused unknowns are looked up as one piece by `tokenizers`; that
        // only finds one (and so differs from `unk_id`) when the unknown
        // piece scores above 0 or its repetitions are pieces.
        if *unk_piece_score > 0.0
            || (2..=vocab.max_bytes / unk_piece.0.len().max(1))
                .any(|n| vocab.id(unk_piece.0.repeat(n).as_bytes()).is_some())
        {
            return None;
        }
        let min_score = model
            .vocab
            .iter()
            .map(|(_, score)| *score)
            .fold(f64::INFINITY, f64::min);

        let (charsmap, collapse_spaces) = normalizer(file.normalizer.as_ref())?;
        let metaspace = pre_tokenizer(file.pre_tokenizer.as_ref()?)?;
        let (prefix, suffix) = match &file.post_processor {
            None => (Vec::new(), Vec::new()),
            Some(part) => post_processor(part)?,
        };

        // As `tokenizers` adds them: an added token takes the model's id
        // for its text, else the next one past the vocabulary.
        let mut added: Vec<Added> = Vec::new();
        let mut next_id = u32::try_from(model.vocab.len()).ok()?;
        for token in &file.added_tokens {
            if token.content.0.is_empty() {
                continue;
            }
            if token.single_word
                || token.normalized
                || added.iter().any(|a| *a.content == *token.content.0)
            {
                return None;
            }
            let id = match vocab.id(token.content.0.as_bytes()) {
                Some(id) => id,
                None => {
                    next_id += 1;
                    next_id - 1
                }
            };
            added.push(Added {
                content: token.content.0.as_ref().into(),
                id,
                lstrip: token.lstrip,
                rstrip: token.rstrip,
            });
        }
        let mut added_first = [false; 256];
        for a in &added {
            added_first[usize::from(a.content.as_bytes()[0])] = true;
        }

        Some(Unigram {
            added,
            added_first,
            charsmap,
            collapse_spaces,
            metaspace,
            vocab,
            unk_id: u32::try_from(unk).ok()?,
            unk_score: min_score - 10.0,
            prefix,
            suffix,
            max_length,
        })
    }

    /// The ids of `text` with the template's special tokens, at most
    /// `max_length` of them: the text's first tokens are kept, and the
    /// special tokens always.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.encode_to(text, self.max_length)
    }

    /// [`Unigram::encode`] truncating to `max_length`.
    fn encode_to(&self, text: &str, max_length: usize) -> Vec<u32> {
        let specials = self.prefix.len() + self.suffix.len();
        let limit = max_length.saturating_sub(specials);
        let mut pass = Pass::new(self, limit);
        pass.text(text);
        let mut body = pass.out;
        body.truncate(limit);
        let mut ids = Vec::with_capacity(body.len() + specials);
        ids.extend_from_slice(&self.prefix);
        ids.extend_from_slice(&body);
        ids.extend_from_slice(&self.suffix);
        ids
    }

    /// [`Unigram::encode`] of each text, in order.
    pub fn encode_batch(&self, texts: &[String]) -> Vec<Vec<u32>> {
        texts.iter().map(|t| self.encode(t)).collect()
    }
}

// ---------------------------------------------------------------------------
// tokenizer.json

/// The parts of a `tokenizer.json` read here; the others are skipped.
#[derive(Deserialize)]
struct File<'a> {
    #[serde(borrow)]
    added_tokens: Vec<AddedToken<'a>>,
    #[serde(borrow)]
    normalizer: Option<Part<'a>>,
    #[serde(borrow)]
    pre_tokenizer: Option<Part<'a>>,
    #[serde(borrow)]
    post_processor: Option<Part<'a>>,
    #[serde(borrow)]
    model: Model<'a>,
}

/// A string, borrowed from the file unless it has escapes.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize)]
struct AddedToken<'a> {
    #[serde(borrow)]
    content: Text<'a>,
    single_word: bool,
    lstrip: bool,
    rstrip: bool,
    normalized: bool,
}

#[derive(Deserialize)]
struct Model<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    unk_id: Option<usize>,
    #[serde(default)]
    byte_fallback: bool,
    #[serde(borrow, default)]
    vocab: Vec<(Text<'a>, f64)>,
}

/// A normalizer, pre-tokenizer or post-processor: its type and the fields
/// of the types handled here.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    #[serde(borrow, default)]
    normalizers: Vec<Part<'a>>,
    #[serde(borrow, default)]
    pretokenizers: Vec<Part<'a>>,
    #[serde(borrow)]
    precompiled_charsmap: Option<Text<'a>>,
    pattern: Option<Pattern>,
    content: Option<String>,
    replacement: Option<char>,
    add_prefix_space: Option<bool>,
    prepend_scheme: Option<String>,
    split: Option<bool>,
    single: Option<Vec<TemplatePiece>>,
    special_tokens: Option<HashMap<String, TemplateSpecial>>,
    sep: Option<(String, u32)>,
    cls: Option<(String, u32)>,
}

#[derive(Deserialize)]
enum Pattern {
    /// A literal (unsupported here).
    String(serde::de::IgnoredAny),
    Regex(String),
}

#[derive(Deserialize)]
enum TemplatePiece {
    SpecialToken { id: String, type_id: u32 },
    Sequence { id: String, type_id: u32 },
}

#[derive(Deserialize)]
struct TemplateSpecial {
    ids: Vec<u32>,
}

/// The charsmap and whether spaces collapse, from the normalizer: none,
/// `Precompiled`, the `Replace` of ` {2,}` by a space, or a `Sequence` of
/// them in that order.
fn normalizer(part: Option<&Part<'_>>) -> Option<(Option<Charsmap>, bool)> {
    fn steps<'p, 'a>(part: &'p Part<'a>, into: &mut Vec<&'p Part<'a>>) {
        if part.kind.0 == "Sequence" {
            for p in &part.normalizers {
                steps(p, into);
            }
        } else {
            into.push(part);
        }
    }
    let mut flat = Vec::new();
    if let Some(part) = part {
        steps(part, &mut flat);
    }
    let (mut charsmap, mut collapse) = (None, false);
    for step in flat {
        match step.kind.0.as_ref() {
            "Precompiled" if charsmap.is_none() && !collapse => {
                let blob = base64(&step.precompiled_charsmap.as_ref()?.0)?;
                charsmap = Some(Charsmap::parse(&blob)?);
            }
            "Replace"
                if matches!(&step.pattern, Some(Pattern::Regex(r)) if r == " {2,}")
                    && step.content.as_deref() == Some(" ") =>
            {
                collapse = true;
            }
            _ => return None,
        }
    }
    Some((charsmap, collapse))
}

/// The Metaspace pre-tokenizer (alone or as a one-step `Sequence`), read
/// as `tokenizers` reads it.
fn pre_tokenizer(part: &Part<'_>) -> Option<Metaspace> {
    let part = match (part.kind.0.as_ref(), part.pretokenizers.as_slice()) {
        ("Sequence", [one]) => one,
        _ => part,
    };
    if part.kind.0 != "Metaspace" {
        return None;
    }
    let prepend = match part.prepend_scheme.as_deref() {
        None | Some("always") => Prepend::Always,
        Some("first") => Prepend::First,
        Some("never") => Prepend::Never,
        Some(_) => return None,
    };
    // `add_prefix_space: false` is refused unless the scheme says never.
    if part.add_prefix_space == Some(false) && prepend != Prepend::Never {
        return None;
    }
    Some(Metaspace {
        replacement: part.replacement?,
        prepend,
        split: part.split.unwrap_or(true),
    })
}

/// The special token ids before and after a text's: from a
/// `TemplateProcessing` (its `single` template, all of type 0, as the
/// rows kebab makes from ids have) or a `RobertaProcessing` or
/// `BertProcessing` (`cls`, text, `sep`).
fn post_processor(part: &Part<'_>) -> Option<(Vec<u32>, Vec<u32>)> {
    match part.kind.0.as_ref() {
        "TemplateProcessing" => {
            let specials = part.special_tokens.as_ref()?;
            let (mut prefix, mut suffix) = (Vec::new(), Vec::new());
            let mut seen_text = false;
            for piece in part.single.as_ref()? {
                match piece {
                    TemplatePiece::Sequence { type_id: 1.., .. }
                    | TemplatePiece::SpecialToken { type_id: 1.., .. } => return None,
                    TemplatePiece::Sequence { id, .. } if id == "A" && !seen_text => {
                        seen_text = true
                    }
                    TemplatePiece::Sequence { .. } => return None,
                    TemplatePiece::SpecialToken { id, .. } => {
                        let ids = &specials.get(id)?.ids;
                        match seen_text {
                            false => prefix.extend_from_slice(ids),
                            true => suffix.extend_from_slice(ids),
                        }
                    }
                }
            }
            seen_text.then_some((prefix, suffix))
        }
        "RobertaProcessing" | "BertProcessing" => {
            Some((vec![part.cls.as_ref()?.1], vec![part.sep.as_ref()?.1]))
        }
        _ => None,
    }
}

/// Standard base64 (padding optional), as the charsmap is stored.
fn base64(text: &str) -> Option<Vec<u8>> {
    let text = text
        .strip_suffix("==")
        .or(text.strip_suffix('='))
        .unwrap_or(text);
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

// ---------------------------------------------------------------------------
// Normalization

/// SentencePiece's precompiled normalization: a darts-clone double array
/// over UTF-8 keys whose leaves hold offsets into a blob of NUL-ended
/// replacements (the layout `spm_precompiled` reads for `tokenizers`:
/// little-endian u32 trie size in bytes, the trie's u32 units, the blob).
struct Charsmap {
    units: Vec<u32>,
    replacements: Box<str>,
}

impl Charsmap {
    fn parse(blob: &[u8]) -> Option<Charsmap> {
        let size = u32::from_le_bytes(blob.get(..4)?.try_into().ok()?) as usize;
        let trie = blob.get(4..4 + size / 4 * 4)?;
        let units = trie
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let replacements = std::str::from_utf8(&blob[4 + size / 4 * 4..]).ok()?.into();
        Some(Charsmap {
            units,
            replacements,
        })
    }

    /// The replacement of the shortest key that starts `key` (the first
    /// result of the common prefix search, as `tokenizers` takes it; a NUL
    /// byte ends the search).
    fn lookup(&self, key: &[u8]) -> Option<&str> {
        let offset = |u: u32| ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize;
        let mut pos = offset(*self.units.first()?);
        for &c in key {
            if c == 0 {
                return None;
            }
            pos ^= usize::from(c);
            let unit = *self.units.get(pos)?;
            if unit & ((1 << 31) | 0xFF) != u32::from(c) {
                return None;
            }
            pos ^= offset(unit);
            if (unit >> 8) & 1 == 1 {
                let at = (*self.units.get(pos)? & 0x7FFF_FFFF) as usize;
                let rest = self.replacements.as_bytes().get(at..)?;
                let len = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                return self.replacements.get(at..at + len);
            }
        }
        None
    }

    /// Append the normalization of one grapheme: the replacement of the
    /// whole grapheme's first match when it is under 6 bytes and has one
    /// (the rest of the grapheme is dropped then, as in `tokenizers`), else
    /// each character's replacement or the character.
    fn push_grapheme(&self, grapheme: &str, out: &mut String) {
        if grapheme.len() < 6
            && let Some(r) = self.lookup(grapheme.as_bytes())
        {
            out.push_str(r);
            return;
        }
        let mut rest = grapheme;
        while let Some(c) = rest.chars().next() {
            let (part, after) = rest.split_at(c.len_utf8());
            out.push_str(self.lookup(part.as_bytes()).unwrap_or(part));
            rest = after;
        }
    }
}

// ---------------------------------------------------------------------------
// Vocabulary

/// The pieces: their bytes in one blob, and an open addressing table of
/// every piece and every proper prefix of one (at character boundaries),
/// so that the pieces starting at a position are found extending one
/// character at a time until no piece goes on.
struct Vocab {
    blob: Vec<u8>,
    entries: Vec<Entry>,
    /// At each slot, 0 for empty, else the entry's index + 1 in the low
    /// [`Vocab::bits`] bits and hash bits above them (so that most
    /// probes of other keys stop at the slot).
    slots: Vec<u32>,
    /// log2 of `slots.len()`.
    bits: u32,
    scores: Vec<f64>,
    /// Longest piece in bytes.
    max_bytes: usize,
}

#[derive(Clone, Copy)]
struct Entry {
    start: u32,
    /// The piece's id, or [`NO_ID`] for a prefix that is no piece.
    id: u32,
    /// Length in bytes, with [`LONGER`] when a longer piece starts with it.
    len: u16,
}

const LONGER: u16 = 0x8000;
const NO_ID: u32 = u32::MAX;
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

impl Vocab {
    /// The table of `pieces` (id = position); a later duplicate of a piece
    /// takes its id, as in `tokenizers`. `None` for a piece over 32 KiB
    /// or a score that is not a number.
    fn build(pieces: &[(Text<'_>, f64)]) -> Option<Vocab> {
        // About two entries a piece (XLM-R: 505 198 for 250 002 pieces),
        // in a table at most half full.
        let bits = (pieces.len() * 4)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(4, 30);
        let mut vocab = Vocab {
            blob: Vec::with_capacity(pieces.iter().map(|(p, _)| p.0.len()).sum()),
            entries: Vec::with_capacity(pieces.len() * 2),
            slots: vec![0; 1 << bits],
            bits,
            scores: Vec::with_capacity(pieces.len()),
            max_bytes: 0,
        };
        for (id, (piece, score)) in pieces.iter().enumerate() {
            if score.is_nan() {
                return None;
            }
            vocab.scores.push(*score);
            let bytes = piece.0.as_bytes();
            if bytes.len() >= usize::from(LONGER) {
                return None;
            }
            vocab.max_bytes = vocab.max_bytes.max(bytes.len());
            let start = u32::try_from(vocab.blob.len()).ok()?;
            vocab.blob.extend_from_slice(bytes);
            let mut h = FNV_OFFSET;
            for (i, &b) in bytes.iter().enumerate() {
                h = fnv(h, b);
                let end = i + 1;
                if end < bytes.len() && is_continuation(bytes[end]) {
                    continue;
                }
                let e = vocab.find_or_insert(h, start, end as u16)?;
                if end < bytes.len() {
                    vocab.entries[e].len |= LONGER;
                } else {
                    vocab.entries[e].id = u32::try_from(id).ok()?;
                }
            }
        }
        Some(vocab)
    }

    fn slot(&self, h: u64) -> usize {
        (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// The hash bits a slot keeps above the entry index.
    fn tag(&self, h: u64) -> u32 {
        ((h as u32) >> self.bits) << self.bits
    }

    fn bytes(&self, e: &Entry) -> &[u8] {
        let start = e.start as usize;
        &self.blob[start..start + usize::from(e.len & !LONGER)]
    }

    /// The low bits of a slot: an entry index + 1 (below `slots.len()`,
    /// as the table is at most half full).
    fn index_mask(&self) -> u32 {
        (1 << self.bits) - 1
    }

    /// The entry of `key` (hashed to `h`).
    fn find(&self, h: u64, key: &[u8]) -> Option<Entry> {
        let (tag, index) = (self.tag(h), self.index_mask());
        let mask = self.slots.len() - 1;
        let mut i = self.slot(h);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot & !index == tag {
                let e = self.entries[(slot & index) as usize - 1];
                if self.bytes(&e) == key {
                    return Some(e);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of the piece `key`.
    fn id(&self, key: &[u8]) -> Option<u32> {
        let h = key.iter().fold(FNV_OFFSET, |h, &b| fnv(h, b));
        self.find(h, key).map(|e| e.id).filter(|&id| id != NO_ID)
    }

    /// The index of the entry of `blob[start..start + len]`, added when
    /// new; `None` past 2^29 entries.
    fn find_or_insert(&mut self, h: u64, start: u32, len: u16) -> Option<usize> {
        let (tag, index) = (self.tag(h), self.index_mask());
        let key = start as usize..start as usize + usize::from(len);
        let mask = self.slots.len() - 1;
        let mut i = self.slot(h);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                break;
            }
            if slot & !index == tag {
                let n = (slot & index) as usize - 1;
                if self.bytes(&self.entries[n]) == &self.blob[key.clone()] {
                    return Some(n);
                }
            }
            i = (i + 1) & mask;
        }
        self.entries.push(Entry {
            start,
            len,
            id: NO_ID,
        });
        self.slots[i] = tag | self.entries.len() as u32;
        if self.entries.len() * 2 > self.slots.len() {
            self.grow()?;
        }
        Some(self.entries.len() - 1)
    }

    /// Double the table (half full at most); `None` past 2^30 slots.
    fn grow(&mut self) -> Option<()> {
        if self.bits >= 30 {
            return None;
        }
        self.bits += 1;
        let mut slots = vec![0u32; 1 << self.bits];
        let mask = slots.len() - 1;
        for (n, e) in self.entries.iter().enumerate() {
            let h = self.bytes(e).iter().fold(FNV_OFFSET, |h, &b| fnv(h, b));
            let mut i = self.slot(h);
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = self.tag(h) | (n as u32 + 1);
        }
        self.slots = slots;
        Some(())
    }
}

// ---------------------------------------------------------------------------
// Encoding

/// One text being encoded: the pipeline's state and the ids so far.
struct Pass<'t> {
    tok: &'t Unigram,
    /// Stop once this many ids are known.
    limit: usize,
    out: Vec<u32>,
    /// The current word, normalized, its `▁` included.
    word: String,
    lattice: Lattice,
    /// A grapheme's normalization.
    grapheme: String,
    /// Whether the segment has given a character yet, whether it started
    /// the text, and whether its last character was a space.
    started: bool,
    at_origin: bool,
    last_space: bool,
}

impl<'t> Pass<'t> {
    fn new(tok: &'t Unigram, limit: usize) -> Pass<'t> {
        Pass {
            tok,
            limit,
            out: Vec::new(),
            word: String::new(),
            lattice: Lattice::default(),
            grapheme: String::new(),
            started: false,
            at_origin: false,
            last_space: false,
        }
    }

    fn full(&self) -> bool {
        self.out.len() >= self.limit
    }

    /// Split the added tokens off `text` as `tokenizers` does (leftmost
    /// longest match, then `lstrip`/`rstrip`) and encode the segments
    /// between them.
    fn text(&mut self, text: &str) {
        let tok = self.tok;
        let bytes = text.as_bytes();
        let (mut done, mut i) = (0, 0);
        while i < bytes.len() && !self.full() {
            if !tok.added_first[usize::from(bytes[i])] {
                i += 1;
                continue;
            }
            let found = tok
                .added
                .iter()
                .filter(|a| bytes[i..].starts_with(a.content.as_bytes()))
                .max_by_key(|a| a.content.len());
            let Some(added) = found else {
                i += 1;
                continue;
            };
            let (mut start, end) = (i, i + added.content.len());
            let mut stop = end;
            if added.lstrip {
                let kept = text[..start].trim_end_matches(char::is_whitespace).len();
                start = kept.max(done);
            }
            if added.rstrip {
                stop = end
                    + (text[end..].len()
                        - text[end..].trim_start_matches(char::is_whitespace).len());
            }
            if done < start {
                self.segment(&text[done..start], done == 0);
                if self.full() {
                    return;
                }
            }
            self.out.push(added.id);
            done = stop;
            i = end;
        }
        if done < bytes.len() && !self.full() {
            self.segment(&text[done..], done == 0);
        }
    }

    /// Normalize, pre-tokenize and segment one stretch of text between
    /// added tokens.
    fn segment(&mut self, raw: &str, at_origin: bool) {
        self.started = false;
        self.at_origin = at_origin;
        self.last_space = false;
        let tok = self.tok;
        match &tok.charsmap {
            Some(map) => {
                let mut grapheme = std::mem::take(&mut self.grapheme);
                for g in raw.graphemes(true) {
                    grapheme.clear();
                    map.push_grapheme(g, &mut grapheme);
                    if grapheme.chars().any(|c| self.push(c)) {
                        break;
                    }
                }
                self.grapheme = grapheme;
            }
            None => {
                for c in raw.chars() {
                    if self.push(c) {
                        break;
                    }
                }
            }
        }
        if !self.full() {
            self.end_word();
        }
        self.word.clear();
    }

    /// Take one normalized character: collapse spaces, replace them by
    /// the Metaspace, prepend one to the segment, start a word at each.
    /// `true` once enough ids are known.
    fn push(&mut self, c: char) -> bool {
        if c == ' ' && self.tok.collapse_spaces && self.last_space {
            return false;
        }
        self.last_space = c == ' ';
        let ms = &self.tok.metaspace;
        let c = if c == ' ' { ms.replacement } else { c };
        if !self.started {
            self.started = true;
            let prepend = match ms.prepend {
                Prepend::Always => true,
                Prepend::First => self.at_origin,
                Prepend::Never => false,
            };
            if prepend && c != ms.replacement {
                self.word.push(ms.replacement);
            }
        }
        if ms.split && c == ms.replacement && !self.word.is_empty() {
            self.end_word();
            if self.full() {
                return true;
            }
        }
        self.word.push(c);
        self.lattice
            .advance(&self.word, false, self.tok, &mut self.out, self.limit);
        self.full()
    }

    /// Segment the rest of the current word and start the next.
    fn end_word(&mut self) {
        if !self.word.is_empty() {
            self.lattice
                .advance(&self.word, true, self.tok, &mut self.out, self.limit);
        }
        self.word.clear();
        self.lattice.reset();
    }
}

/// The Viterbi of one word, run as its characters come: the best path
/// to each byte offset.
#[derive(Default)]
struct Lattice {
    nodes: Vec<Node>,
    /// The next start offset to extend from.
    next: usize,
    /// The furthest end of a piece seen so far.
    reach: usize,
    /// Tokens before this offset are handed over.
    done: usize,
    /// Whether the last token handed over in this word is unknown.
    prev_unk: bool,
    path: Vec<u32>,
}

/// The best path ending at an offset: its score, where its last piece
/// starts ([`UNSET`] for none yet) and that piece's id.
#[derive(Clone, Copy)]
struct Node {
    score: f64,
    from: usize,
    id: u32,
}

const UNSET: usize = usize::MAX;

impl Lattice {
    fn reset(&mut self) {
        self.nodes.clear();
        self.next = 0;
        self.reach = 0;
        self.done = 0;
        self.prev_unk = false;
    }

    /// Extend from every start whose pieces all lie within `word` (all of
    /// them when `last`), handing over the tokens before each offset no
    /// piece crosses; with `last`, hand over the rest. Stops once `out`
    /// holds `limit` ids.
    ///
    /// Exactly `tokenizers`' `encode_optimized`: starts in order, a node
    /// replaced only by a strictly higher score, scores summed in the
    /// same order, an unknown node where no one-character piece starts.
    fn advance(&mut self, word: &str, last: bool, tok: &Unigram, out: &mut Vec<u32>, limit: usize) {
        let bytes = word.as_bytes();
        let len = bytes.len();
        let vocab = &tok.vocab;
        if self.nodes.len() < len + 1 {
            let unset = Node {
                score: 0.0,
                from: UNSET,
                id: 0,
            };
            self.nodes.resize(len + 1, unset);
        }
        while self.next < len && (last || self.next + vocab.max_bytes <= len) {
            let s = self.next;
            if self.reach <= s && s > self.done {
                self.emit(s, tok.unk_id, out);
                if out.len() >= limit {
                    return;
                }
            }
            let base = self.nodes[s].score;
            let char_len = match bytes[s] {
                b if b < 0x80 => 1,
                b if b < 0xE0 => 2,
                b if b < 0xF0 => 3,
                _ => 4,
            };
            let mut single = false;
            let mut h = FNV_OFFSET;
            for end in s + 1..=len.min(s + vocab.max_bytes) {
                h = fnv(h, bytes[end - 1]);
                if end < len && is_continuation(bytes[end]) {
                    continue;
                }
                let Some(e) = vocab.find(h, &bytes[s..end]) else {
                    break;
                };
                if e.id != NO_ID {
                    let score = vocab.scores[e.id as usize] + base;
                    relax(&mut self.nodes[end], score, s, e.id);
                    single |= end - s == char_len;
                    self.reach = self.reach.max(end);
                }
                if e.len & LONGER == 0 {
                    break;
                }
            }
            if !single {
                let end = s + char_len;
                relax(&mut self.nodes[end], tok.unk_score + base, s, tok.unk_id);
                self.reach = self.reach.max(end);
            }
            self.next = s + char_len;
        }
        if last && self.next >= len && self.done < len {
            self.emit(len, tok.unk_id, out);
        }
    }

    /// Hand over the best path's tokens from `done` to `upto` (an offset
    /// every path passes), fusing consecutive unknown tokens into one.
    fn emit(&mut self, upto: usize, unk_id: u32, out: &mut Vec<u32>) {
        self.path.clear();
        let mut at = upto;
        while at > self.done {
            let node = self.nodes[at];
            self.path.push(node.id);
            at = node.from;
        }
        for &id in self.path.iter().rev() {
            if id == unk_id {
                if self.prev_unk {
                    continue;
                }
                self.prev_unk = true;
            } else {
                self.prev_unk = false;
            }
            out.push(id);
        }
        self.done = upto;
    }
}

/// Take the path `score` (last piece `id` from `from`) at `node` when it
/// has none yet or a lower score.
fn relax(node: &mut Node, score: f64, from: usize, id: u32) {
    if node.from == UNSET || score > node.score {
        *node = Node { score, from, id };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::str::FromStr;
    use std::sync::OnceLock;
    use std::time::Instant;
    use tokenizers::{Tokenizer, TruncationParams};

    /// A model's `tokenizer.json` in the offline assets
    /// (`scripts/fetch-assets.sh`, `KEBAB_ASSETS_DIR`).
    fn asset(model: &str) -> PathBuf {
        let dir = std::env::var_os("KEBAB_ASSETS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/kebab-assets")
            });
        let path = dir.join("models").join(model).join("tokenizer.json");
        assert!(
            path.is_file(),
            "{} missing: run scripts/fetch-assets.sh",
            path.display()
        );
        path
    }

    fn e5_path() -> PathBuf {
        asset("multilingual-e5-small")
    }

    /// `tokenizer` set up as `onnx::OnnxModel::load` sets it up.
    fn configured(mut tokenizer: Tokenizer, max_length: usize) -> Tokenizer {
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                ..Default::default()
            }))
            .expect("truncation");
        tokenizer
    }

    /// multilingual-e5-small's tokenizer, ours and `tokenizers`', loaded once.
    fn e5() -> &'static (Unigram, Tokenizer) {
        static PAIR: OnceLock<(Unigram, Tokenizer)> = OnceLock::new();
        PAIR.get_or_init(|| {
            let path = e5_path();
            let ours = Unigram::from_file(&path, 512)
                .expect("read")
                .expect("a Unigram tokenizer this module handles");
            let theirs = Tokenizer::from_file(&path).expect("tokenizers reads it");
            (ours, configured(theirs, 512))
        })
    }

    /// Assert both tokenizers give the same ids for every text, truncating
    /// to `max_length`; the number of texts compared.
    fn assert_same(
        ours: &Unigram,
        theirs: &Tokenizer,
        texts: &[String],
        max_length: usize,
    ) -> usize {
        let theirs = configured(theirs.clone(), max_length);
        let mut differ = Vec::new();
        for text in texts {
            let want = theirs.encode(text.as_str(), true).expect("encode");
            let got = ours.encode_to(text, max_length);
            if got != want.get_ids() {
                differ.push(format!(
                    "{:?}\n  tokenizers {:?}\n  unigram    {:?}",
                    text.chars().take(200).collect::<String>(),
                    want.get_ids(),
                    got
                ));
            }
        }
        assert!(
            differ.is_empty(),
            "{} of {} texts differ at max_length {max_length}, e.g.:\n{}",
            differ.len(),
            texts.len(),
            differ[..differ.len().min(5)].join("\n")
        );
        texts.len()
    }

    /// Texts picked to hit each step of the pipeline.
    fn edge_cases() -> Vec<String> {
        let mut texts: Vec<String> = [
            "",
            " ",
            "   ",
            "\t",
            "\n",
            "\r\n",
            "\r\n\r\n",
            " \t\n\r ",
            "\u{3000}",
            "\u{a0}x\u{a0}\u{a0}y",
            "a\u{2028}b\u{2029}c\u{85}d",
            "Hello, world!",
            "hello   world",
            "  leading and trailing  ",
            "tabs\tand\nnewlines\r\nmixed\t\t\tin  it",
            "query: 한국어 형태소 분석기는 검색에 쓰인다.",
            "passage: 서울특별시 강남구 테헤란로",
            "한글과 English가 섞인 문장입니다.",
            "日本語のテキストです。カタカナとひらがな。",
            "ｶﾀｶﾅ ﾊﾟﾋﾟﾌﾟ ｶﾞｷﾞ",
            "中文文本，简体和繁體。",
            "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ！？",
            "ﬁ ﬂ ﬀ ﬃ ﬄ ligatures",
            "Ⅻ Ⅳ ⅻ ⑫ ㈱ ㍻ ㎏ ℃ ™ ½ ²",
            "①②③ ⒜ ㊙",
            "e\u{301} a\u{308} n\u{303} o\u{302}\u{323}",
            "Ａ\u{301} ｶ\u{3099} ﬁ\u{301}",
            "x\u{301}\u{302}\u{303}\u{304}",
            "\u{301}alone \u{301}",
            "กี่\u{e48}\u{e35} ภาษาไทย",
            "😀 👍🏽 👨‍👩‍👧‍👦 🇰🇷🇯🇵 ❤️ ☺︎",
            "\u{1}\u{2}control\u{7f}\u{80}\u{9f}\u{1b}[0m",
            "zero\u{200b}width\u{200d}joiner\u{feff}bom\u{200e}",
            "soft\u{ad}hyphen",
            "<s>",
            "</s>",
            "<mask>",
            "<unk>",
            "<pad>",
            "a<mask>b",
            "text with <mask> inside",
            "<s><s></s>",
            "<mask",
            "mask>",
            "<<mask>>",
            " <mask> ",
            "  <mask>  x",
            "</s> ",
            "a </s>  b",
            "</s>  <mask>",
            "x\u{3000}<mask>\u{3000}y",
            "＜ｍａｓｋ＞ ＜ｕｎｋ＞ ＜ｓ＞",
            "▁",
            "▁▁ ▁",
            "a▁b",
            " ▁ ",
            "\u{0}",
            "nul\u{0}inside",
            "\u{1100}\u{1161}\u{11a8}",
            "\u{1112}\u{1161}\u{11ab}\u{1100}\u{1173}\u{11af}",
            "\u{600}١٢٣ العربية",
            "Ελληνικά Русский текст हिन्दी भाषा עברית",
            "𝐀𝐁𝐂 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠀀𠀁 \u{e000}\u{f8ff} \u{10fffd}",
            "\u{e0041}\u{e0042} tags",
            "ＡＢＣ\u{3000}\u{3000}ｄｅｆ",
            "x  \u{3000} y",
            "don't stop—“quotes” ‘single’ … «guillemets»",
            "https://example.com/path?q=1&r=2#frag user@example.org",
            "fn main() { println!(\"{}\", 1 + 2); }",
            "1234567890 3.14159 -42 1e10 0x1F",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        texts.push("x".repeat(100));
        texts.push("가".repeat(300));
        texts.push("\u{10fffd}".repeat(50) + "ok");
        texts.push("ab\u{10fffd}\u{10fffd}cd\u{10fffd}".into());
        texts
    }

    /// Lines and whole files of the repository's text (sample notes, test
    /// fixtures, documentation).
    fn repo_texts() -> Vec<String> {
        fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, files);
                } else {
                    files.push(path);
                }
            }
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for dir in ["samples", "tests/fixtures", "docs"] {
            walk(&root.join(dir), &mut files);
        }
        for file in ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"] {
            files.push(root.join(file));
        }
        files.sort();
        let mut texts = Vec::new();
        for file in files {
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            if bytes.len() > 1 << 20 {
                continue;
            }
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            texts.extend(text.split_inclusive('\n').map(str::to_owned));
            texts.push(text);
        }
        texts
    }

    /// `n` random texts mixing scripts, marks, controls, spaces, emoji
    /// sequences and the special tokens' strings.
    fn random_texts(n: usize, seed: u64) -> Vec<String> {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let ranges: &[(u32, u32)] = &[
            (0x20, 0x7e),
            (0x20, 0x7e),
            (0x61, 0x7a),
            (0x61, 0x7a),
            (0x0, 0x1f),
            (0x7f, 0xa0),
            (0xa1, 0x24f),
            (0x300, 0x36f),
            (0x370, 0x3ff),
            (0x400, 0x4ff),
            (0x590, 0x5ff),
            (0x600, 0x6ff),
            (0x900, 0x97f),
            (0x981, 0x9ff),
            (0xe00, 0xe7f),
            (0x1100, 0x11ff),
            (0x2000, 0x206f),
            (0x2070, 0x218f),
            (0x2460, 0x24ff),
            (0x2e80, 0x2fdf),
            (0x3000, 0x30ff),
            (0x3130, 0x318f),
            (0x3200, 0x33ff),
            (0x4e00, 0x9fff),
            (0xac00, 0xd7a3),
            (0xac00, 0xd7a3),
            (0xf900, 0xfaff),
            (0xfb00, 0xfb4f),
            (0xfe00, 0xfe6f),
            (0xff00, 0xffef),
            (0x1d400, 0x1d7ff),
            (0x1f1e6, 0x1f1ff),
            (0x1f300, 0x1faff),
            (0x20000, 0x2a6df),
            (0xe0000, 0xe007f),
            (0xf0000, 0xf00ff),
        ];
        let pieces = [
            "<s>", "</s>", "<mask>", "<unk>", "<pad>", "<ma", "▁", " ", "  ", "\t", "\n", "\r\n",
            "\u{200d}", "\u{fe0f}", "\u{301}", "\u{3099}", "ﬁ", "ｶﾞ", "Ⅻ", "e\u{301}", " the",
            " of", "ing", "는", "です",
        ];
        (0..n)
            .map(|_| {
                let len = next() % 48;
                let mut text = String::new();
                for _ in 0..len {
                    let r = next();
                    match r % 8 {
                        0 => text.push_str(pieces[(r >> 8) as usize % pieces.len()]),
                        _ => {
                            let (lo, hi) = ranges[(r >> 8) as usize % ranges.len()];
                            let c = lo + (next() % u64::from(hi - lo + 1)) as u32;
                            if let Some(c) = char::from_u32(c) {
                                let times = if r % 16 == 1 { 1 + (r >> 40) % 4 } else { 1 };
                                for _ in 0..times {
                                    text.push(c);
                                }
                            }
                        }
                    }
                }
                text
            })
            .collect()
    }

    /// Texts of about 20 000 characters.
    fn long_texts() -> Vec<String> {
        let korean = "한국어 형태소 분석은 검색 품질을 좌우한다. ";
        let mixed = "Mixed 텍스트 with 日本語 and 中文, ｶﾀｶﾅ, Ⅻ, 😀👍🏽 <mask> and\ttabs\n\n";
        let chinese = "中文文本没有空格所以整段是一个词简体和繁體都有";
        vec![
            korean.repeat(20_000 / korean.chars().count()),
            mixed.repeat(20_000 / mixed.chars().count()),
            chinese.repeat(20_000 / chinese.chars().count()),
            "a".repeat(20_000),
            "\u{10fffd}".repeat(20_000),
            "\u{10fffd}".repeat(10_000) + &"word ".repeat(2_000),
            random_texts(600, 7).concat(),
        ]
    }

    #[test]
    fn the_e5_tokenizer_is_handled() {
        let (ours, _) = e5();
        assert_eq!(ours.vocab.scores.len(), 250_002);
        assert_eq!(
            (ours.prefix.as_slice(), ours.suffix.as_slice()),
            (&[0][..], &[2][..])
        );
        assert!(ours.charsmap.is_some() && ours.collapse_spaces);
        assert_eq!(ours.added.len(), 5);
        assert_eq!(ours.encode(""), [0, 2]);
    }

    #[test]
    fn matches_tokenizers_on_edge_cases() {
        let (ours, theirs) = e5();
        let texts = edge_cases();
        for max_length in [512, 8, 3, 2] {
            assert_same(ours, theirs, &texts, max_length);
        }
    }

    #[test]
    fn matches_tokenizers_on_the_repository_text() {
        let (ours, theirs) = e5();
        let texts = repo_texts();
        assert!(texts.len() > 3_000, "only {} texts", texts.len());
        assert_same(ours, theirs, &texts, 512);
    }

    #[test]
    fn matches_tokenizers_on_random_unicode() {
        let (ours, theirs) = e5();
        let texts = random_texts(5_000, 0x9E37_79B9_7F4A_7C15);
        assert_same(ours, theirs, &texts, 512);
        assert_same(ours, theirs, &texts[..1_000], 9);
    }

    #[test]
    fn matches_tokenizers_on_long_texts_truncated_or_not() {
        let (ours, theirs) = e5();
        let texts = long_texts();
        for max_length in [512, 100, 3, 1_000_000] {
            assert_same(ours, theirs, &texts, max_length);
        }
    }

    /// The e5 tokenizer.json with a 20 000-piece vocabulary (many
    /// unknowns, `<mask>` past the vocabulary) and `change` applied.
    fn variant(change: impl FnOnce(&mut serde_json::Value)) -> String {
        static BASE: OnceLock<serde_json::Value> = OnceLock::new();
        let base = BASE.get_or_init(|| {
            let json = std::fs::read_to_string(e5_path()).expect("read");
            let mut value: serde_json::Value = serde_json::from_str(&json).expect("json");
            value["model"]["vocab"]
                .as_array_mut()
                .expect("vocab")
                .truncate(20_000);
            value
        });
        let mut value = base.clone();
        change(&mut value);
        value.to_string()
    }

    #[test]
    fn matches_tokenizers_on_variants_of_the_file() {
        use serde_json::json;
        let variants: Vec<(&str, String)> = vec![
            ("small vocabulary", variant(|_| {})),
            (
                "prepend first",
                variant(|v| v["pre_tokenizer"]["prepend_scheme"] = json!("first")),
            ),
            (
                "prepend never",
                variant(|v| {
                    v["pre_tokenizer"]["prepend_scheme"] = json!("never");
                    v["pre_tokenizer"]["add_prefix_space"] = json!(false);
                }),
            ),
            (
                "no split",
                variant(|v| v["pre_tokenizer"]["split"] = json!(false)),
            ),
            (
                "precompiled only",
                variant(|v| v["normalizer"] = v["normalizer"]["normalizers"][0].clone()),
            ),
            ("no normalizer", variant(|v| v["normalizer"] = json!(null))),
            (
                "roberta processing",
                variant(|v| {
                    v["post_processor"] = json!({"type": "RobertaProcessing", "sep": ["</s>", 2],
                        "cls": ["<s>", 0], "trim_offsets": true, "add_prefix_space": true})
                }),
            ),
            (
                "no post-processor",
                variant(|v| v["post_processor"] = json!(null)),
            ),
            (
                "stripping and extra added tokens",
                variant(|v| {
                    let added = v["added_tokens"].as_array_mut().expect("added");
                    added[4]["lstrip"] = json!(true);
                    added[2]["rstrip"] = json!(true);
                    for (content, special) in [("<mask>x", false), ("<m", true), ("▁the", false)]
                    {
                        added.push(json!({"id": 0, "content": content, "single_word": false,
                            "lstrip": false, "rstrip": false, "normalized": false, "special": special}));
                    }
                }),
            ),
            (
                "stripping, prepend never",
                variant(|v| {
                    let added = v["added_tokens"].as_array_mut().expect("added");
                    added[4]["lstrip"] = json!(true);
                    added[2]["rstrip"] = json!(true);
                    v["pre_tokenizer"]["prepend_scheme"] = json!("never");
                    v["pre_tokenizer"]["add_prefix_space"] = json!(false);
                }),
            ),
        ];
        let mut texts = edge_cases();
        texts.extend(random_texts(1_500, 42));
        texts.extend(repo_texts().into_iter().step_by(10));
        for (name, json) in variants {
            let ours =
                Unigram::from_json(&json, 512).unwrap_or_else(|| panic!("{name}: not handled"));
            let theirs = Tokenizer::from_str(&json).expect("tokenizers reads it");
            for max_length in [512, 7] {
                assert_same(&ours, &theirs, &texts, max_length);
            }
        }
    }

    #[test]
    fn other_tokenizers_are_left_to_the_tokenizers_crate() {
        use serde_json::json;
        let minilm = Unigram::from_file(&asset("all-minilm-l6-v2"), 512).expect("read");
        assert!(minilm.is_none(), "WordPiece is not handled");
        let refused = [
            variant(|v| v["model"]["byte_fallback"] = json!(true)),
            variant(|v| v["model"]["type"] = json!("BPE")),
            variant(|v| v["normalizer"] = json!({"type": "NFKC"})),
            variant(|v| v["normalizer"]["normalizers"][1]["pattern"] = json!({"String": "  "})),
            variant(|v| v["pre_tokenizer"] = json!({"type": "Whitespace"})),
            variant(|v| v["pre_tokenizer"]["add_prefix_space"] = json!(false)),
            variant(|v| v["added_tokens"][4]["normalized"] = json!(true)),
            variant(|v| v["added_tokens"][4]["single_word"] = json!(true)),
            variant(|v| v["post_processor"] = json!({"type": "ByteLevel"})),
            variant(|v| v["post_processor"]["single"][0]["SpecialToken"]["type_id"] = json!(1)),
            "not json".to_string(),
        ];
        for json in refused {
            assert!(Unigram::from_json(&json, 512).is_none());
        }
        assert!(Unigram::from_file(Path::new("/nonexistent/tokenizer.json"), 512).is_err());
    }

    #[test]
    fn base64_decodes_with_or_without_padding() {
        assert_eq!(base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(base64("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(base64("aGk=").as_deref(), Some(&b"hi"[..]));
        assert_eq!(base64("").as_deref(), Some(&b""[..]));
        assert_eq!(base64("a*b="), None);
    }

    /// Resident set size of this process in kB (Linux).
    fn rss_kb() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// Load time, memory and throughput against `tokenizers`; run alone
    /// in a release build:
    /// `cargo test --release -p kebab-search unigram::tests::bench -- --ignored --nocapture --exact`
    #[test]
    #[ignore]
    #[allow(clippy::disallowed_macros)] // a report, as the benches print
    fn bench() {
        let path = e5_path();
        let rss0 = rss_kb();
        let t = Instant::now();
        let ours = Unigram::from_file(&path, 512)
            .expect("read")
            .expect("handled");
        let ours_load = t.elapsed();
        let rss1 = rss_kb();
        let t = Instant::now();
        let theirs = configured(Tokenizer::from_file(&path).expect("read"), 512);
        let theirs_load = t.elapsed();
        let rss2 = rss_kb();
        println!(
            "load: unigram {:.0} ms, +{} MB RSS; tokenizers {:.0} ms, +{} MB RSS",
            ours_load.as_secs_f64() * 1e3,
            (rss1 - rss0) / 1024,
            theirs_load.as_secs_f64() * 1e3,
            (rss2 - rss1) / 1024
        );
        // Warm loads (file in the page cache, allocator warm).
        let t = Instant::now();
        for _ in 0..5 {
            drop(Unigram::from_file(&path, 512));
        }
        println!(
            "unigram warm load: {:.0} ms",
            t.elapsed().as_secs_f64() * 1e3 / 5.0
        );

        // Passages of about 200 tokens from the repository's lines.
        let lines: Vec<String> = repo_texts()
            .into_iter()
            .filter(|t| t.len() < 2_000 && !t.trim().is_empty())
            .collect();
        let mut passages = Vec::new();
        let mut passage = String::new();
        for line in lines.iter().cycle() {
            passage.push_str(line);
            if ours.encode_to(&passage, usize::MAX).len() >= 200 {
                passages.push(std::mem::take(&mut passage));
                if passages.len() == 2_000 {
                    break;
                }
            }
        }
        let tokens: usize = passages.iter().map(|p| ours.encode(p).len()).sum();
        println!(
            "{} passages, {:.0} tokens each (truncated to 512)",
            passages.len(),
            tokens as f64 / passages.len() as f64
        );
        let t = Instant::now();
        let a = ours.encode_batch(&passages);
        let ours_time = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let b = theirs.encode_batch(passages.clone(), true).expect("encode");
        let batch_time = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for p in &passages {
            theirs.encode(p.as_str(), true).expect("encode");
        }
        let seq_time = t.elapsed().as_secs_f64();
        assert!(a.iter().zip(&b).all(|(a, b)| a == b.get_ids()));
        let n = passages.len() as f64;
        println!(
            "encode: unigram {:.0} texts/s (one thread); tokenizers encode_batch {:.0} texts/s \
             (all cores), encode {:.0} texts/s (one thread)",
            n / ours_time,
            n / batch_time,
            n / seq_time
        );
    }
}
