//! The plugin contract, one frozen WIT folder per released API version
//! (`wit/v<version>/`), one set of host bindings per folder, and the
//! conversions that let the rest of the host speak only the newest version.
//!
//! The folder name is the one place a version is written: `host/build.rs`
//! checks that each folder's `package` line agrees with its name and writes
//! [`HOST_API_VERSION`] (the newest folder) and [`SUPPORTED_API_VERSIONS`].
//! A component is bound with the bindings of the version it exports
//! (`kebab:plugin/parser@<version>`), and what an older version returns is
//! converted to the [`current`] types here, and the current types to
//! kebab's own document model (`kebab_core::document`), so the runtime's
//! callers never see a binding type of any version.
//!
//! Adding a version: copy the newest folder to `wit/v<new>/`, change it,
//! add a binding module and its `From` conversions below, record its hash in
//! the frozen-contract test, and point the SDK at the new folder.

include!(concat!(env!("OUT_DIR"), "/plugin_api.rs"));

/// Bindings of API 1.0.0 (`wit/v1.0.0`): the first release.
pub mod v1_0 {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../../wit/v1.0.0",
        additional_derives: [PartialEq],
        // Guest calls are futures so a deadline can stop a guest blocked in
        // a host call (see `runtime`); the imports stay synchronous.
        exports: { default: async },
    });
}

/// Bindings of API 1.1.0 (`wit/v1.1.0`): adds the `settings` import.
pub mod v1_1 {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../../wit/v1.1.0",
        additional_derives: [PartialEq],
        exports: { default: async },
    });
}

/// Bindings of API 1.2.0 (`wit/v1.2.0`): adds span kinds for files without
/// lines (slides, cells, parts, regions) and the `attachments` and `ocr`
/// imports.
pub mod v1_2 {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../../wit/v1.2.0",
        additional_derives: [PartialEq],
        exports: { default: async },
    });
}

/// The newest bindings: the types the rest of the host uses.
pub use v1_2 as current;

/// Field-by-field conversions from one version's types to the next one's
/// (and the one input type, the chunk policy, the other way), for versions
/// whose types have the same fields: written once, expanded in a module per
/// version pair that names the two as `old`/`old_log` and `new`/`new_log`.
/// A span converts case by case, so the next version may add cases.
macro_rules! convert_to_next_version {
    () => {
        impl From<old::LineRange> for new::LineRange {
            fn from(r: old::LineRange) -> Self {
                new::LineRange {
                    start: r.start,
                    end: r.end,
                }
            }
        }

        impl From<old::CodeSpan> for new::CodeSpan {
            fn from(c: old::CodeSpan) -> Self {
                new::CodeSpan {
                    start: c.start,
                    end: c.end,
                    symbol: c.symbol,
                    lang: c.lang,
                }
            }
        }

        impl From<old::Span> for new::Span {
            fn from(s: old::Span) -> Self {
                match s {
                    old::Span::Lines(r) => new::Span::Lines(r.into()),
                    old::Span::Page(p) => new::Span::Page(p),
                    old::Span::Code(c) => new::Span::Code(c.into()),
                }
            }
        }

        impl From<old::BlockKind> for new::BlockKind {
            fn from(k: old::BlockKind) -> Self {
                match k {
                    old::BlockKind::Heading => new::BlockKind::Heading,
                    old::BlockKind::Paragraph => new::BlockKind::Paragraph,
                    old::BlockKind::List => new::BlockKind::List,
                    old::BlockKind::Code => new::BlockKind::Code,
                    old::BlockKind::Table => new::BlockKind::Table,
                    old::BlockKind::Quote => new::BlockKind::Quote,
                    old::BlockKind::ImageRef => new::BlockKind::ImageRef,
                    old::BlockKind::Page => new::BlockKind::Page,
                }
            }
        }

        impl From<old::Block> for new::Block {
            fn from(b: old::Block) -> Self {
                new::Block {
                    kind: b.kind.into(),
                    heading_path: b.heading_path,
                    span: b.span.into(),
                    text: b.text,
                    level: b.level,
                    lang: b.lang,
                }
            }
        }

        impl From<old::Document> for new::Document {
            fn from(d: old::Document) -> Self {
                new::Document {
                    title: d.title,
                    lang: d.lang,
                    blocks: d.blocks.into_iter().map(Into::into).collect(),
                    metadata: d.metadata,
                }
            }
        }

        impl From<old::Chunk> for new::Chunk {
            fn from(c: old::Chunk) -> Self {
                new::Chunk {
                    text: c.text,
                    heading_path: c.heading_path,
                    blocks: c.blocks,
                    spans: c.spans.into_iter().map(Into::into).collect(),
                }
            }
        }

        impl From<old::PluginInfo> for new::PluginInfo {
            fn from(i: old::PluginInfo) -> Self {
                new::PluginInfo {
                    name: i.name,
                    version: i.version,
                    parser_version: i.parser_version,
                    chunker_version: i.chunker_version,
                    handles: i.handles,
                    accepts_binary: i.accepts_binary,
                }
            }
        }

        impl From<old::Error> for new::Error {
            fn from(e: old::Error) -> Self {
                match e {
                    old::Error::Unsupported(m) => new::Error::Unsupported(m),
                    old::Error::Malformed(m) => new::Error::Malformed(m),
                }
            }
        }

        impl From<new::ChunkPolicy> for old::ChunkPolicy {
            fn from(p: new::ChunkPolicy) -> Self {
                old::ChunkPolicy {
                    target_tokens: p.target_tokens,
                    overlap_tokens: p.overlap_tokens,
                }
            }
        }

        impl From<old_log::Level> for new_log::Level {
            fn from(l: old_log::Level) -> Self {
                match l {
                    old_log::Level::Debug => new_log::Level::Debug,
                    old_log::Level::Info => new_log::Level::Info,
                    old_log::Level::Warn => new_log::Level::Warn,
                    old_log::Level::Error => new_log::Level::Error,
                }
            }
        }
    };
}

/// API 1.0.0 → 1.1.0: 1.1.0 changed no type.
mod from_v1_0 {
    use super::v1_0::kebab::plugin::{log as old_log, types as old};
    use super::v1_1::kebab::plugin::{log as new_log, types as new};
    convert_to_next_version!();
}

/// API 1.1.0 → 1.2.0: 1.2.0 added span cases and no field.
mod from_v1_1 {
    use super::v1_1::kebab::plugin::{log as old_log, types as old};
    use super::v1_2::kebab::plugin::{log as new_log, types as new};
    convert_to_next_version!();
}

/// API 1.0.0 → 1.2.0 for the types the runtime converts straight to the
/// current ones: through 1.1.0.
mod from_v1_0_to_current {
    use super::current::kebab::plugin::{log as new_log, types as new};
    use super::v1_0::kebab::plugin::{log as old_log, types as old};
    use super::v1_1::kebab::plugin::{log as mid_log, types as mid};

    macro_rules! through_v1_1 {
        ($($ty:ident),* $(,)?) => {$(
            impl From<old::$ty> for new::$ty {
                fn from(value: old::$ty) -> Self {
                    let mid: mid::$ty = value.into();
                    mid.into()
                }
            }
        )*};
    }
    through_v1_1!(Document, Chunk, PluginInfo, Error);

    impl From<old_log::Level> for new_log::Level {
        fn from(level: old_log::Level) -> Self {
            let mid: mid_log::Level = level.into();
            mid.into()
        }
    }

    impl From<new::ChunkPolicy> for old::ChunkPolicy {
        fn from(policy: new::ChunkPolicy) -> Self {
            let mid: mid::ChunkPolicy = policy.into();
            mid.into()
        }
    }
}

/// Conversions from the current contract's values to kebab's own document
/// model (and the one input type the other way): the only place a binding
/// type becomes a `kebab_core` one.
mod to_core {
    use super::current::kebab::plugin::types as wit;
    use kebab_core::document as core;
    use kebab_core::spans::{Confidence, PartUnit, SourceSpan};

    impl From<wit::Span> for SourceSpan {
        fn from(span: wit::Span) -> SourceSpan {
            match span {
                wit::Span::Lines(r) => SourceSpan::Line {
                    start: r.start,
                    end: r.end,
                },
                wit::Span::Page(page) => SourceSpan::Page { page },
                wit::Span::Code(c) => SourceSpan::Code {
                    start: c.start,
                    end: c.end,
                    symbol: c.symbol,
                    lang: c.lang,
                },
                wit::Span::Slide(slide) => SourceSpan::Slide { slide },
                wit::Span::Cells(c) => SourceSpan::Cells {
                    sheet: c.sheet,
                    first_row: c.first_row,
                    last_row: c.last_row,
                    first_column: c.first_column,
                    last_column: c.last_column,
                },
                wit::Span::Part(p) => SourceSpan::Part {
                    unit: match p.unit {
                        wit::PartUnit::Paragraph => PartUnit::Paragraph,
                        wit::PartUnit::Chapter => PartUnit::Chapter,
                        wit::PartUnit::Message => PartUnit::Message,
                    },
                    first: p.first,
                    last: p.last,
                },
                wit::Span::Region(r) => SourceSpan::Region {
                    page: r.page,
                    x: r.x,
                    y: r.y,
                    width: r.width,
                    height: r.height,
                    confidence: Confidence(r.confidence),
                },
            }
        }
    }

    impl From<wit::BlockKind> for core::BlockKind {
        fn from(k: wit::BlockKind) -> Self {
            match k {
                wit::BlockKind::Heading => core::BlockKind::Heading,
                wit::BlockKind::Paragraph => core::BlockKind::Paragraph,
                wit::BlockKind::List => core::BlockKind::List,
                wit::BlockKind::Code => core::BlockKind::Code,
                wit::BlockKind::Table => core::BlockKind::Table,
                wit::BlockKind::Quote => core::BlockKind::Quote,
                wit::BlockKind::ImageRef => core::BlockKind::ImageRef,
                wit::BlockKind::Page => core::BlockKind::Page,
            }
        }
    }

    impl From<wit::Block> for core::Block {
        fn from(b: wit::Block) -> Self {
            core::Block {
                kind: b.kind.into(),
                heading_path: b.heading_path,
                span: b.span.into(),
                text: b.text,
                level: b.level,
                lang: b.lang,
            }
        }
    }

    impl From<wit::Document> for core::Document {
        fn from(d: wit::Document) -> Self {
            core::Document {
                title: d.title,
                lang: d.lang,
                blocks: d.blocks.into_iter().map(Into::into).collect(),
                metadata: d.metadata,
            }
        }
    }

    impl From<wit::Chunk> for core::Chunk {
        fn from(c: wit::Chunk) -> Self {
            core::Chunk {
                text: c.text,
                heading_path: c.heading_path,
                blocks: c.blocks,
                spans: c.spans.into_iter().map(Into::into).collect(),
            }
        }
    }

    impl From<core::ChunkPolicy> for wit::ChunkPolicy {
        fn from(p: core::ChunkPolicy) -> Self {
            wit::ChunkPolicy {
                target_tokens: p.target_tokens,
                overlap_tokens: p.overlap_tokens,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab_core::spans::SourceSpan;

    /// blake3 of each released contract. A released folder is frozen: a
    /// change to the contract is a new version folder, never an edit.
    const FROZEN: &[(&str, &str)] = &[
        (
            "1.0.0",
            "06ec5d3abbbe155d28402976fe6a74938374027ba0367a7d5bffea17939b1edb",
        ),
        (
            "1.1.0",
            "c8f5bb03f21d4c52e38f03efb9301efe8a1cf378327e79d3ba896d20e2db1dd9",
        ),
        (
            "1.2.0",
            "626dc1d7b0036979fc77aaf6dfcb0ca7f363b2710ab37cf63a8456389a521a4a",
        ),
    ];

    #[test]
    fn released_contracts_are_frozen() {
        let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit");
        let supported: Vec<&str> = SUPPORTED_API_VERSIONS.to_vec();
        let recorded: Vec<&str> = FROZEN.iter().map(|(v, _)| *v).collect();
        assert_eq!(
            supported, recorded,
            "every wit/v* folder needs a recorded hash (and a binding module)"
        );
        for (version, hash) in FROZEN {
            let text = std::fs::read(wit.join(format!("v{version}/plugin.wit"))).unwrap();
            assert_eq!(
                blake3::hash(&text).to_hex().as_str(),
                *hash,
                "wit/v{version} changed after release: add a new version instead"
            );
        }
    }

    #[test]
    fn the_host_version_is_the_newest_folder() {
        let newest = SUPPORTED_API_VERSIONS
            .iter()
            .map(|v| semver::Version::parse(v).unwrap())
            .max()
            .unwrap();
        assert_eq!(newest, HOST_API_VERSION);
    }

    #[test]
    fn spans_convert_to_the_stored_form() {
        use current::kebab::plugin::types::{CodeSpan, LineRange, Span};
        let line = SourceSpan::from(Span::Lines(LineRange { start: 3, end: 9 }));
        assert_eq!(line, SourceSpan::Line { start: 3, end: 9 });
        assert_eq!(
            SourceSpan::from(Span::Page(4)),
            SourceSpan::Page { page: 4 }
        );
        let code = SourceSpan::from(Span::Code(CodeSpan {
            start: 1,
            end: 2,
            symbol: Some("a::b".into()),
            lang: None,
        }));
        assert_eq!(
            code.to_json(),
            serde_json::json!({"kind": "code", "start": 1, "end": 2, "symbol": "a::b", "lang": null})
        );
    }

    #[test]
    fn an_old_document_converts_field_by_field() {
        use v1_0::kebab::plugin::types as old;
        let doc = old::Document {
            title: Some("t".into()),
            lang: Some("en".into()),
            blocks: vec![old::Block {
                kind: old::BlockKind::Code,
                heading_path: vec!["A".into()],
                span: old::Span::Code(old::CodeSpan {
                    start: 2,
                    end: 9,
                    symbol: Some("fn f".into()),
                    lang: Some("rust".into()),
                }),
                text: "fn f() {}".into(),
                level: None,
                lang: Some("rust".into()),
            }],
            metadata: vec![("k".into(), "v".into())],
        };
        let new: kebab_core::document::Document = current::kebab::plugin::types::Document::from(
            v1_1::kebab::plugin::types::Document::from(doc),
        )
        .into();
        assert_eq!(new.title.as_deref(), Some("t"));
        assert_eq!(new.blocks[0].kind, kebab_core::document::BlockKind::Code);
        assert_eq!(
            new.blocks[0].span,
            SourceSpan::Code {
                start: 2,
                end: 9,
                symbol: Some("fn f".into()),
                lang: Some("rust".into()),
            }
        );
        assert_eq!(new.metadata, vec![("k".to_string(), "v".to_string())]);
    }
}
