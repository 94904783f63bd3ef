//! Supported languages: file patterns, labels, grammars and how their
//! top-level items are named.

use tree_sitter::Node;

/// A language with an AST chunker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
}

/// What a syntax node is to the chunker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// An item with this symbol.
    Item(String),
    /// A container (impl block, class) whose methods are items of their own;
    /// the symbol names the container, the prefix qualifies its methods.
    Container { symbol: String, prefix: String },
    /// A comment or attribute that belongs to the item below it.
    Leading,
    /// Anything else: glue.
    Glue,
}

impl Lang {
    /// Every supported language.
    pub const ALL: &'static [Lang] = &[Lang::Rust, Lang::Python];

    /// File name patterns.
    pub fn patterns(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &["*.rs"],
            Lang::Python => &["*.py", "*.pyi"],
        }
    }

    /// The language of a path, by extension.
    pub fn of_path(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "rs" => Some(Lang::Rust),
            "py" | "pyi" => Some(Lang::Python),
            _ => None,
        }
    }

    /// Lowercase language label.
    pub fn label(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
        }
    }

    /// Chunker label stored with this language's chunks.
    pub fn chunker_version(self) -> &'static str {
        match self {
            Lang::Rust => "code-rust-ast-v1",
            Lang::Python => "code-python-ast-v1",
        }
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
        }
    }

    /// Module prefix for symbols from the workspace path (Python's dotted
    /// module path; Rust symbols are file-scoped).
    pub fn module(self, path: &str) -> String {
        match self {
            Lang::Rust => String::new(),
            Lang::Python => {
                let stem = path
                    .strip_suffix(".pyi")
                    .or_else(|| path.strip_suffix(".py"))
                    .unwrap_or(path);
                let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
                stem.trim_start_matches("./").replace('/', ".")
            }
        }
    }

    /// The role of a top-level node (or of a node inside a container, with
    /// the container's `prefix`).
    pub fn role(self, node: Node<'_>, src: &[u8], prefix: &str) -> Role {
        let name = |field: &str| {
            node.child_by_field_name(field)
                .and_then(|n| n.utf8_text(src).ok())
                .map(str::to_string)
        };
        match self {
            Lang::Rust => match node.kind() {
                "function_item" | "function_signature_item" => match name("name") {
                    Some(n) if prefix.is_empty() => Role::Item(format!("fn {n}")),
                    Some(n) => Role::Item(format!("{prefix}::{n}")),
                    None => Role::Glue,
                },
                "struct_item" | "enum_item" | "union_item" | "trait_item" | "type_item"
                | "mod_item" | "macro_definition" => {
                    let keyword = match node.kind() {
                        "struct_item" => "struct",
                        "enum_item" => "enum",
                        "union_item" => "union",
                        "trait_item" => "trait",
                        "type_item" => "type",
                        "mod_item" => "mod",
                        _ => "macro",
                    };
                    name("name").map_or(Role::Glue, |n| Role::Item(format!("{keyword} {n}")))
                }
                "impl_item" => {
                    let ty = name("type").unwrap_or_else(|| "?".into());
                    let symbol = match name("trait") {
                        Some(t) => format!("impl {t} for {ty}"),
                        None => format!("impl {ty}"),
                    };
                    // Methods read `Type::method`, without generic arguments.
                    let base = ty.split('<').next().unwrap_or(&ty).trim().to_string();
                    Role::Container {
                        symbol,
                        prefix: base,
                    }
                }
                // `//!` and `#![…]` describe the enclosing module: glue.
                "line_comment" | "block_comment" => {
                    let text = node.utf8_text(src).unwrap_or("");
                    if text.starts_with("//!") || text.starts_with("/*!") {
                        Role::Glue
                    } else {
                        Role::Leading
                    }
                }
                "attribute_item" => Role::Leading,
                _ => Role::Glue,
            },
            Lang::Python => match node.kind() {
                "decorated_definition" => match node.child_by_field_name("definition") {
                    Some(def) => self.role(def, src, prefix),
                    None => Role::Glue,
                },
                "function_definition" => {
                    name("name").map_or(Role::Glue, |n| Role::Item(join_dotted(prefix, &n)))
                }
                "class_definition" => match name("name") {
                    Some(n) => {
                        let symbol = join_dotted(prefix, &n);
                        Role::Container {
                            prefix: symbol.clone(),
                            symbol,
                        }
                    }
                    None => Role::Glue,
                },
                "comment" => Role::Leading,
                _ => Role::Glue,
            },
        }
    }

    /// The node holding a container's members (impl body, class body).
    pub fn body<'t>(self, node: Node<'t>) -> Option<Node<'t>> {
        let def = if node.kind() == "decorated_definition" {
            node.child_by_field_name("definition")?
        } else {
            node
        };
        def.child_by_field_name("body")
    }
}

fn join_dotted(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}
