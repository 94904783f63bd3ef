//! The lexical index's fields ([`crate::lexical`]): what an entry holds.

use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions,
};

/// The analyser's name in the index schema ([`kebab_core::analysis`]; v2:
/// Latin words stemmed).
pub const ANALYZER: &str = "kebab_v2";
/// The rowid field's name (its column is read for every hit).
pub(crate) const ROWID: &str = "rowid";
/// The group field's name ([`crate::lexical_groups::group_of`]).
pub(crate) const GROUP: &str = "group";
/// The field holding a searched entry's group, to find it.
pub(crate) const SEARCHED: &str = "searched";
/// The role field's name ([`Role`]).
pub(crate) const ROLE: &str = "role";
/// The searched text field's name.
pub(crate) const BODY: &str = "body";
/// The copies' text field's name.
pub(crate) const COPY: &str = "copy";

/// The fields of an entry: the chunk's SQLite rowid (indexed, to delete
/// it; a column, to read the hits), its group and role
/// ([`crate::lexical_groups`]; a searched entry's group also in
/// `searched`), and the analysed text (term frequencies
/// and lengths for BM25; no positions, nothing stored) in `body` for a
/// group's searched entry, in `copy` for the others.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    pub(crate) rowid: Field,
    pub(crate) group: Field,
    pub(crate) role: Field,
    pub(crate) searched: Field,
    pub(crate) body: Field,
    pub(crate) copy: Field,
}

/// The schema of a new index, with its fields.
pub(crate) fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let rowid = builder.add_i64_field(ROWID, INDEXED | FAST);
    let group = builder.add_u64_field(GROUP, INDEXED | FAST);
    let role = builder.add_u64_field(ROLE, FAST);
    let searched = builder.add_u64_field(SEARCHED, INDEXED);
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs)
            .set_fieldnorms(true),
    );
    let body = builder.add_text_field(BODY, words.clone());
    let copy = builder.add_text_field(COPY, words);
    let fields = Fields {
        rowid,
        group,
        role,
        searched,
        body,
        copy,
    };
    (builder.build(), fields)
}

/// What a chunk's entry is to its group, as the index's role column holds
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Words in the field counted but not searched.
    Copy = 0,
    /// The searched entry of a group of one.
    Alone = 1,
    /// The searched entry of a group with copies.
    Shared = 2,
}

impl Role {
    /// The role of a group's searched entry when the group has `entries`.
    pub(crate) fn searched(entries: usize) -> Role {
        if entries > 1 {
            Role::Shared
        } else {
            Role::Alone
        }
    }

    /// The role the column holds as `value`.
    pub(crate) fn from_column(value: u64) -> Role {
        match value {
            2 => Role::Shared,
            1 => Role::Alone,
            _ => Role::Copy,
        }
    }
}
