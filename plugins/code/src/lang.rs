//! Supported languages: file patterns, labels, grammars and how their
//! top-level items are named.

use tree_sitter::Node;

/// A language with an AST chunker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    Go,
    JavaScript,
    TypeScript,
    Tsx,
    Java,
    Kotlin,
    C,
    Cpp,
}

/// What a syntax node is to the chunker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// An item with this symbol.
    Item(String),
    /// A container (impl block, class) whose methods are items of their own;
    /// the symbol names the container, the prefix qualifies its methods.
    Container { symbol: String, prefix: String },
    /// A statement whose blocks hold items of the enclosing scope (Python's
    /// module-level `if`/`try`/`with`): its items are collected with the
    /// same prefix, its own lines are glue.
    Transparent,
    /// A comment or attribute that belongs to the item below it.
    Leading,
    /// Anything else: glue.
    Glue,
}

impl Lang {
    /// Every supported language.
    pub const ALL: &'static [Lang] = &[
        Lang::Rust,
        Lang::Python,
        Lang::Go,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Java,
        Lang::Kotlin,
        Lang::C,
        Lang::Cpp,
    ];

    /// File name patterns.
    pub fn patterns(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &["*.rs"],
            Lang::Python => &["*.py", "*.pyi"],
            Lang::Go => &["*.go"],
            Lang::JavaScript => &["*.js", "*.jsx", "*.mjs", "*.cjs"],
            Lang::TypeScript => &["*.ts", "*.mts", "*.cts"],
            Lang::Tsx => &["*.tsx"],
            Lang::Java => &["*.java"],
            Lang::Kotlin => &["*.kt", "*.kts"],
            Lang::C => &["*.c", "*.h"],
            Lang::Cpp => &["*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx"],
        }
    }

    /// The language of a path, by extension.
    pub fn of_path(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "rs" => Some(Lang::Rust),
            "py" | "pyi" => Some(Lang::Python),
            "go" => Some(Lang::Go),
            "js" | "jsx" | "mjs" | "cjs" => Some(Lang::JavaScript),
            "ts" | "mts" | "cts" => Some(Lang::TypeScript),
            "tsx" => Some(Lang::Tsx),
            "java" => Some(Lang::Java),
            "kt" | "kts" => Some(Lang::Kotlin),
            "c" | "h" => Some(Lang::C),
            "cpp" | "cc" | "cxx" | "hpp" | "hh" | "hxx" => Some(Lang::Cpp),
            _ => None,
        }
    }

    /// Lowercase language label.
    pub fn label(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Go => "go",
            Lang::JavaScript => "javascript",
            Lang::TypeScript | Lang::Tsx => "typescript",
            Lang::Java => "java",
            Lang::Kotlin => "kotlin",
            Lang::C => "c",
            Lang::Cpp => "cpp",
        }
    }

    /// Chunker label stored with this language's chunks.
    pub fn chunker_version(self) -> &'static str {
        match self {
            Lang::Rust => "code-rust-ast-v1",
            Lang::Python => "code-python-ast-v1",
            Lang::Go => "code-go-ast-v1",
            Lang::JavaScript => "code-js-ast-v1",
            Lang::TypeScript | Lang::Tsx => "code-ts-ast-v1",
            Lang::Java => "code-java-ast-v1",
            Lang::Kotlin => "code-kotlin-ast-v1",
            Lang::C => "code-c-ast-v1",
            Lang::Cpp => "code-cpp-ast-v1",
        }
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    /// Symbol prefix from the file: Python's dotted module path, the
    /// slash-separated module path for JS/TS, the package for Go and Java
    /// (read from the source); Rust, C and C++ symbols are file-scoped.
    pub fn module(self, path: &str, root: Node<'_>, src: &[u8]) -> String {
        let stem = path
            .rsplit_once('.')
            .map_or(path, |(s, _)| s)
            .trim_start_matches("./");
        match self {
            Lang::Python => stem
                .strip_suffix("/__init__")
                .unwrap_or(stem)
                .replace('/', "."),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => stem.to_string(),
            Lang::Go => first_child_text(root, "package_clause", src)
                .map(|t| t.trim_start_matches("package").trim().to_string())
                .unwrap_or_default(),
            Lang::Kotlin => first_child_text(root, "package_header", src)
                .map(|t| t.trim_start_matches("package").trim().to_string())
                .unwrap_or_default(),
            Lang::Java => first_child_text(root, "package_declaration", src)
                .map(|t| {
                    t.trim_start_matches("package")
                        .trim()
                        .trim_end_matches(';')
                        .trim()
                        .to_string()
                })
                .unwrap_or_default(),
            Lang::Rust | Lang::C | Lang::Cpp => String::new(),
        }
    }

    /// The role of a top-level node (or of a node inside a container, with
    /// the container's `prefix`).
    pub fn role(self, node: Node<'_>, src: &[u8], prefix: &str) -> Role {
        let site = Site {
            lang: self,
            node,
            src,
            prefix,
        };
        match self {
            Lang::Rust => rust_role(&site),
            Lang::Go => go_role(&site),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => javascript_role(&site),
            Lang::Java => java_role(&site),
            Lang::Kotlin => kotlin_role(&site),
            Lang::C | Lang::Cpp => c_family_role(&site),
            Lang::Python => python_role(&site),
        }
    }

    /// The node holding a container's members (impl body, class body,
    /// namespace body).
    pub fn body<'t>(self, node: Node<'t>) -> Option<Node<'t>> {
        let def = match node.kind() {
            "decorated_definition" => node.child_by_field_name("definition")?,
            "export_statement" => node.child_by_field_name("declaration")?,
            // `class Inner { … };` inside a class or namespace.
            "declaration" | "field_declaration" => node.child_by_field_name("type")?,
            "template_declaration" => {
                let mut cursor = node.walk();
                node.named_children(&mut cursor).last()?
            }
            _ => node,
        };
        // A JavaScript binding's members live in the value it binds: an
        // object literal's are its own children, a function's or class's
        // are in its body.
        let bound = match self {
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => js_binding(def),
            _ => None,
        };
        if let Some((_, value)) = bound {
            return if value.kind() == "object" {
                Some(value)
            } else {
                value.child_by_field_name("body")
            };
        }
        def.child_by_field_name("body").or_else(|| {
            // Kotlin's class and object bodies are plain children.
            let mut cursor = def.walk();
            def.named_children(&mut cursor)
                .find(|c| matches!(c.kind(), "class_body" | "enum_class_body"))
        })
    }
}

/// What a role is decided from: the language, the node, the source and
/// the enclosing container's prefix.
struct Site<'t, 's> {
    lang: Lang,
    node: Node<'t>,
    src: &'s [u8],
    prefix: &'s str,
}

impl Site<'_, '_> {
    /// The text of the node's `field` child.
    fn name(&self, field: &str) -> Option<String> {
        self.node
            .child_by_field_name(field)
            .and_then(|n| n.utf8_text(self.src).ok())
            .map(str::to_string)
    }

    /// The role of the node's `field` child (what an `export`, a decorator
    /// or a declaration wraps), in the same container.
    fn role_of(&self, field: &str) -> Role {
        self.node
            .child_by_field_name(field)
            .map_or(Role::Glue, |child| {
                self.lang.role(child, self.src, self.prefix)
            })
    }

    /// `prefix.name` as an item.
    fn dotted_item(&self) -> Role {
        self.name("name")
            .map_or(Role::Glue, |n| Role::Item(join_dotted(self.prefix, &n)))
    }

    /// `prefix.name` as a container of `prefix.name.*`.
    fn dotted_container(&self) -> Role {
        self.name("name").map_or(Role::Glue, |n| {
            let symbol = join_dotted(self.prefix, &n);
            Role::Container {
                prefix: symbol.clone(),
                symbol,
            }
        })
    }
}

/// Rust: functions, items, inline modules, traits and impls.
fn rust_role(s: &Site<'_, '_>) -> Role {
    let node = s.node;
    let src = s.src;
    let prefix = s.prefix;
    match node.kind() {
        // A function defining items is a container of them
        // (`Type::method::Visitor`, `f::helper`).
        "function_item" if defines_nested(node, RUST_ITEMS) => {
            s.name("name").map_or(Role::Glue, |n| {
                let path = join_path(prefix, &n);
                let symbol = if prefix.is_empty() {
                    format!("fn {n}")
                } else {
                    path.clone()
                };
                Role::Container {
                    symbol,
                    prefix: path,
                }
            })
        }
        "function_item" | "function_signature_item" => match s.name("name") {
            Some(n) if prefix.is_empty() => Role::Item(format!("fn {n}")),
            Some(n) => Role::Item(format!("{prefix}::{n}")),
            None => Role::Glue,
        },
        // An inline module's items read `module::item`; a trait's
        // methods `Trait::method`.
        "mod_item" | "trait_item" if node.child_by_field_name("body").is_some() => {
            let keyword = if node.kind() == "mod_item" {
                "mod"
            } else {
                "trait"
            };
            s.name("name").map_or(Role::Glue, |n| {
                let path = join_path(prefix, &n);
                Role::Container {
                    symbol: format!("{keyword} {path}"),
                    prefix: path,
                }
            })
        }
        "struct_item" | "enum_item" | "union_item" | "trait_item" | "type_item" | "mod_item"
        | "macro_definition" => {
            let keyword = match node.kind() {
                "struct_item" => "struct",
                "enum_item" => "enum",
                "union_item" => "union",
                "trait_item" => "trait",
                "type_item" => "type",
                "mod_item" => "mod",
                _ => "macro",
            };
            s.name("name").map_or(Role::Glue, |n| {
                Role::Item(format!("{keyword} {}", join_path(prefix, &n)))
            })
        }
        "impl_item" => rust_impl(s),
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
    }
}

/// A Rust `impl` block: a container whose methods read `Type::method`
/// (`module::Type::method` in an inline module), without generic arguments.
fn rust_impl(s: &Site<'_, '_>) -> Role {
    let ty = s.name("type").unwrap_or_else(|| "?".into());
    let symbol = match s.name("trait") {
        Some(t) => format!("impl {t} for {ty}"),
        None => format!("impl {ty}"),
    };
    let base = ty.split('<').next().unwrap_or(&ty).trim();
    Role::Container {
        symbol,
        prefix: join_path(s.prefix, base),
    }
}

/// Go: functions, methods (by receiver) and types.
fn go_role(s: &Site<'_, '_>) -> Role {
    let node = s.node;
    let src = s.src;
    let prefix = s.prefix;
    match node.kind() {
        "function_declaration" => s.dotted_item(),
        "method_declaration" => {
            let receiver = node
                .child_by_field_name("receiver")
                .and_then(|r| r.named_child(0))
                .and_then(|p| p.child_by_field_name("type"))
                .and_then(|t| t.utf8_text(src).ok())
                .unwrap_or("?")
                .to_string();
            let receiver = if receiver.starts_with('*') {
                format!("({receiver})")
            } else {
                receiver
            };
            s.name("name").map_or(Role::Glue, |n| {
                Role::Item(join_dotted(prefix, &format!("{receiver}.{n}")))
            })
        }
        // `type ( A …; B … )` declares each of its specs.
        "type_declaration" if has_child(node, "(") => Role::Transparent,
        "type_spec" | "type_alias" => s.dotted_item(),
        "type_declaration" => node
            .named_child(0)
            .and_then(|spec| spec.child_by_field_name("name"))
            .and_then(|n| n.utf8_text(src).ok())
            .map_or(Role::Glue, |n| Role::Item(join_dotted(prefix, n))),
        "comment" => Role::Leading,
        _ => Role::Glue,
    }
}

/// JavaScript and TypeScript: declarations, exported or not, and classes.
fn javascript_role(s: &Site<'_, '_>) -> Role {
    let node = s.node;
    match node.kind() {
        "export_statement" => s.role_of("declaration"),
        "function_declaration" | "generator_function_declaration" | "method_definition"
            if js_defines_nested(s) =>
        {
            s.dotted_container()
        }
        "function_declaration"
        | "generator_function_declaration"
        | "function_signature"
        | "interface_declaration"
        | "type_alias_declaration"
        | "enum_declaration"
        | "method_definition"
        | "abstract_method_signature"
        | "method_signature" => s.dotted_item(),
        "class_declaration" | "abstract_class_declaration" => s.dotted_container(),
        // `const f = () => …`, `const C = class …`, `const api = { m() {} }`
        // and `{ key: function () {} }` define what they bind.
        "lexical_declaration" | "variable_declaration" | "pair" => js_binding_role(s),
        "comment" => Role::Leading,
        _ => Role::Glue,
    }
}

/// The name and value of a JavaScript binding: the first declarator of a
/// `const`/`let`/`var`, or an object literal's `key: value` pair.
fn js_binding(node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    match node.kind() {
        "lexical_declaration" | "variable_declaration" => {
            let mut cursor = node.walk();
            let declarator = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "variable_declarator")?;
            let name = declarator.child_by_field_name("name")?;
            (name.kind() == "identifier")
                .then_some((name, declarator.child_by_field_name("value")?))
        }
        "pair" => Some((
            node.child_by_field_name("key")?,
            node.child_by_field_name("value")?,
        )),
        _ => None,
    }
}

/// Functions and classes bound to a name are items (containers when they
/// define more); an object literal with methods is a container of them.
fn js_binding_role(s: &Site<'_, '_>) -> Role {
    let Some((name, value)) = js_binding(s.node) else {
        return Role::Glue;
    };
    let Ok(name) = name.utf8_text(s.src) else {
        return Role::Glue;
    };
    let symbol = join_dotted(s.prefix, name.trim_matches(|c| c == '"' || c == '\''));
    let container = || Role::Container {
        prefix: symbol.clone(),
        symbol: symbol.clone(),
    };
    let value_site = Site { node: value, ..*s };
    match value.kind() {
        "function_expression" | "arrow_function" | "generator_function" => {
            if js_defines_nested(&value_site) {
                container()
            } else {
                Role::Item(symbol)
            }
        }
        "class" => container(),
        "object" if js_has_members(&value_site) => container(),
        _ => Role::Glue,
    }
}

/// Whether a JavaScript object literal defines a method or a function.
fn js_has_members(s: &Site<'_, '_>) -> bool {
    let mut cursor = s.node.walk();
    s.node.named_children(&mut cursor).any(|member| {
        let site = Site { node: member, ..*s };
        !matches!(javascript_role(&site), Role::Glue | Role::Leading)
    })
}

/// Whether a JavaScript function's body directly defines a function,
/// class or object of methods.
fn js_defines_nested(s: &Site<'_, '_>) -> bool {
    let Some(body) = s.node.child_by_field_name("body") else {
        return false;
    };
    let site = Site { node: body, ..*s };
    body.kind() == "statement_block" && js_has_members(&site)
}

/// Java: methods, constructors and types.
fn java_role(s: &Site<'_, '_>) -> Role {
    match s.node.kind() {
        "method_declaration" | "constructor_declaration" => s.dotted_item(),
        "class_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration" => s.dotted_container(),
        "line_comment" | "block_comment" => Role::Leading,
        _ => Role::Glue,
    }
}

/// Kotlin: functions, classes and objects.
fn kotlin_role(s: &Site<'_, '_>) -> Role {
    match s.node.kind() {
        "function_declaration" => s.dotted_item(),
        "class_declaration" | "object_declaration" => s.dotted_container(),
        // `companion object { … }` is named `Companion` unless named.
        "companion_object" => {
            let name = s.name("name").unwrap_or_else(|| "Companion".into());
            let symbol = join_dotted(s.prefix, &name);
            Role::Container {
                prefix: symbol.clone(),
                symbol,
            }
        }
        // `typealias Name = …`: the name is the identifier before `=`.
        "type_alias" => first_child_text(s.node, "identifier", s.src)
            .map_or(Role::Glue, |n| Role::Item(join_dotted(s.prefix, n))),
        "line_comment" | "block_comment" => Role::Leading,
        _ => Role::Glue,
    }
}

/// C and C++: function definitions, namespaces, classes and tagged types.
fn c_family_role(s: &Site<'_, '_>) -> Role {
    let node = s.node;
    let src = s.src;
    let prefix = s.prefix;
    match node.kind() {
        "function_definition" => match function_name(node, src) {
            Some(n) if prefix.is_empty() => Role::Item(n),
            Some(n) => Role::Item(format!("{prefix}::{n}")),
            None => Role::Glue,
        },
        "template_declaration" => {
            let mut cursor = node.walk();
            let inner = node.named_children(&mut cursor).last();
            inner.map_or(Role::Glue, |inner| s.lang.role(inner, src, prefix))
        }
        "namespace_definition" | "class_specifier" | "struct_specifier" if s.lang == Lang::Cpp => {
            // A specialisation (`Impl<T, Matcher<U>>`) is named by its template.
            let name = node.child_by_field_name("name").map(|n| {
                n.child_by_field_name("name")
                    .filter(|_| n.kind() == "template_type")
                    .unwrap_or(n)
            });
            match name.and_then(|n| n.utf8_text(src).ok()).map(str::to_string) {
                Some(n) => {
                    let inner = if prefix.is_empty() {
                        n
                    } else {
                        format!("{prefix}::{n}")
                    };
                    Role::Container {
                        symbol: inner.clone(),
                        prefix: inner,
                    }
                }
                None => Role::Glue,
            }
        }
        "struct_specifier" | "enum_specifier" | "union_specifier"
            if node.child_by_field_name("body").is_some() =>
        {
            let keyword = node.kind().trim_end_matches("_specifier");
            s.name("name").map_or(Role::Glue, |n| {
                Role::Item(c_family_symbol(keyword, prefix, &n))
            })
        }
        // `struct s { … };` is a declaration wrapping its specifier (a
        // field declaration inside a class).
        "declaration" | "field_declaration" if node.child_by_field_name("declarator").is_none() => {
            s.role_of("type")
        }
        "type_definition" => declared_name(node, src).map_or(Role::Glue, |n| {
            Role::Item(c_family_symbol("typedef", prefix, &n))
        }),
        // `using Name = …;` at namespace level.
        "alias_declaration" => s.name("name").map_or(Role::Glue, |n| {
            Role::Item(c_family_symbol("typedef", prefix, &n))
        }),
        // Conditional compilation and `extern "C" { … }` hold items of the
        // enclosing scope (every branch of an `#if` is collected).
        "preproc_if"
        | "preproc_ifdef"
        | "preproc_else"
        | "preproc_elif"
        | "preproc_elifdef"
        | "linkage_specification" => Role::Transparent,
        "declaration_list"
            if node
                .parent()
                .is_some_and(|p| p.kind() == "linkage_specification") =>
        {
            Role::Transparent
        }
        "comment" => Role::Leading,
        _ => Role::Glue,
    }
}

/// A C/C++ type's symbol: `keyword name` at file scope (`struct point`,
/// `typedef BYTE`), `scope::name` inside a namespace or class.
fn c_family_symbol(keyword: &str, prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        format!("{keyword} {name}")
    } else {
        format!("{prefix}::{name}")
    }
}

/// Python: functions, classes, and definitions under `if`/`try`/`with`.
fn python_role(s: &Site<'_, '_>) -> Role {
    let node = s.node;
    match node.kind() {
        "decorated_definition" => s.role_of("definition"),
        // A function defining functions or classes is a container
        // of them (`pkg.mod.outer.inner`).
        "function_definition" if defines_nested(node, PYTHON_DEFINITIONS) => s.dotted_container(),
        "function_definition" => s.dotted_item(),
        "class_definition" => s.dotted_container(),
        "if_statement" | "try_statement" | "with_statement" | "elif_clause" | "else_clause"
        | "except_clause" | "finally_clause" | "block" => Role::Transparent,
        "comment" => Role::Leading,
        _ => Role::Glue,
    }
}

/// Rust items a function body may define.
const RUST_ITEMS: &[&str] = &[
    "function_item",
    "struct_item",
    "enum_item",
    "union_item",
    "trait_item",
    "impl_item",
    "mod_item",
    "macro_definition",
];

/// Python definitions a function body may hold.
const PYTHON_DEFINITIONS: &[&str] = &[
    "function_definition",
    "class_definition",
    "decorated_definition",
];

/// Whether a function's body directly defines one of `kinds`.
fn defines_nested(node: Node<'_>, kinds: &[&str]) -> bool {
    let Some(body) = node.child_by_field_name("body") else {
        return false;
    };
    let mut cursor = body.walk();
    body.named_children(&mut cursor)
        .any(|c| kinds.contains(&c.kind()))
}

/// `prefix::name` (Rust paths), or `name` at the top.
fn join_path(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}::{name}")
    }
}

fn join_dotted(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Whether `node` has a direct child (named or not) of `kind`.
fn has_child(node: Node<'_>, kind: &str) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|c| c.kind() == kind)
}

/// Text of the first direct child of `root` of `kind`.
fn first_child_text<'s>(root: Node<'_>, kind: &str, src: &'s [u8]) -> Option<&'s str> {
    let mut cursor = root.walk();
    let found = root.named_children(&mut cursor).find(|c| c.kind() == kind);
    found.and_then(|n| n.utf8_text(src).ok())
}

/// The name a C `typedef` declares: the identifier at the bottom of its
/// first declarator (`typedef int (*handler)(int);` declares `handler`; a
/// parenthesised declarator holds its name one level down).
fn declared_name(node: Node<'_>, src: &[u8]) -> Option<String> {
    let mut decl = node.child_by_field_name("declarator")?;
    while let Some(inner) = inner_declarator(decl) {
        decl = inner;
    }
    matches!(
        decl.kind(),
        "type_identifier" | "identifier" | "primitive_type"
    )
    .then(|| decl.utf8_text(src).ok().map(str::to_string))
    .flatten()
}

/// The declared name of a C/C++ function definition (`name`,
/// `Class::method`, `operator+`, `operator bool`), through pointer and
/// reference declarators.
fn function_name(node: Node<'_>, src: &[u8]) -> Option<String> {
    let mut decl = node.child_by_field_name("declarator")?;
    loop {
        match decl.kind() {
            "operator_cast" => {
                let target = decl.child_by_field_name("type")?.utf8_text(src).ok()?;
                return Some(format!("operator {target}"));
            }
            "function_declarator" => {
                let inner = decl.child_by_field_name("declarator")?;
                return Some(without_template_arguments(inner, src));
            }
            _ => decl = inner_declarator(decl)?,
        }
    }
}

/// The text of a (qualified) name with the argument lists of its template
/// scopes left out: `FloatingPoint<float>::Max` is `FloatingPoint::Max`.
fn without_template_arguments(name: Node<'_>, src: &[u8]) -> String {
    fn strip(node: Node<'_>, cut: &mut Vec<(usize, usize)>) {
        if node.kind() == "template_argument_list"
            && node.parent().is_some_and(|p| p.kind() == "template_type")
        {
            cut.push((node.start_byte(), node.end_byte()));
            return;
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            strip(child, cut);
        }
    }
    let mut cut = Vec::new();
    strip(name, &mut cut);
    let mut text = Vec::new();
    let mut at = name.start_byte();
    for (start, end) in cut {
        text.extend_from_slice(&src[at..start]);
        at = end;
    }
    text.extend_from_slice(&src[at..name.end_byte()]);
    String::from_utf8_lossy(&text).into_owned()
}

/// The declarator one level down: the `declarator` field of a pointer or
/// function declarator, the only named child of a reference (`&f()`) or
/// parenthesised (`(*f)`) one, which have no such field.
fn inner_declarator(decl: Node<'_>) -> Option<Node<'_>> {
    decl.child_by_field_name("declarator").or_else(|| {
        matches!(
            decl.kind(),
            "reference_declarator" | "parenthesized_declarator"
        )
        .then(|| decl.named_child(0))
        .flatten()
    })
}
