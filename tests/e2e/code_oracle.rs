//! The code plugin against an independent oracle, Universal Ctags: on a
//! generated tree of 230 Rust and Python files (top-level functions), and
//! on real trees — crates and C sources from the local cargo registry,
//! Python standard-library packages, JavaScript and TypeScript packages
//! from npm — for functions, types and methods including nested modules
//! and definitions, at least 95 % agreement per language.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Kb, copy_tree};

fn rust_file(i: usize) -> String {
    let mut s = format!("//! Generated module {i}.\nuse std::fmt::Debug;\n\n");
    s.push_str(&format!(
        "/// Adds things.\n#[inline]\npub fn add_{i}(a: i64, b: i64) -> i64 {{\n    a + b\n}}\n\n"
    ));
    s.push_str(&format!(
        "pub async fn fetch_{i}<T: Debug>(x: T) -> String {{\n    format!(\"{{x:?}}\")\n}}\n\n"
    ));
    s.push_str(&format!("const fn width_{i}() -> usize {{ {i} }}\n\n"));
    if i.is_multiple_of(3) {
        s.push_str(&format!(
            "pub unsafe extern \"C\" fn ffi_{i}(p: *const u8) -> u8 {{\n    unsafe {{ *p }}\n}}\n\n"
        ));
    }
    s.push_str(&format!(
        "pub struct Thing{i} {{\n    value: i64,\n}}\n\nimpl Thing{i} {{\n    pub fn new(value: i64) -> Self {{\n        Self {{ value }}\n    }}\n\n    fn double(&self) -> i64 {{\n        let helper = |v: i64| v * 2;\n        helper(self.value)\n    }}\n}}\n\n"
    ));
    s.push_str(&format!(
        "pub trait Shape{i} {{\n    fn area(&self) -> f64;\n    fn describe(&self) -> String {{\n        format!(\"{{}}\", self.area())\n    }}\n}}\n\n"
    ));
    s.push_str(&format!("mod inner_{i} {{\n    pub fn hidden_{i}() {{}}\n}}\n\nmacro_rules! twice_{i} {{\n    ($e:expr) => {{ $e * 2 }};\n}}\n\n"));
    s.push_str(&format!(
        "#[cfg(test)]\nfn check_{i}() {{\n    assert_eq!(add_{i}(1, 2), 3);\n}}\n"
    ));
    s
}

fn python_file(i: usize) -> String {
    let mut s = format!(
        "\"\"\"Generated module {i}.\"\"\"\nimport functools\nimport asyncio\n\nLIMIT_{i} = {i}\n\n\n"
    );
    s.push_str(&format!("def parse_{i}(text: str) -> list[str]:\n    \"\"\"Split.\"\"\"\n    def inner(x):\n        return x.strip()\n    return [inner(t) for t in text.split(',')]\n\n\n"));
    s.push_str(&format!(
        "@functools.lru_cache(maxsize=None)\ndef cached_{i}(n):\n    return n * n\n\n\n"
    ));
    s.push_str(&format!(
        "async def poll_{i}(delay=0.1):\n    await asyncio.sleep(delay)\n\n\n"
    ));
    s.push_str(&format!(
        "class Service{i}:\n    \"\"\"A service.\"\"\"\n\n    retries = 3\n\n    def start(self):\n        return True\n\n    @staticmethod\n    def version():\n        return '{i}'\n\n\n"
    ));
    if i.is_multiple_of(4) {
        s.push_str(&format!("square_{i} = lambda v: v * v\n\n\n"));
    }
    s.push_str(&format!("def main_{i}():\n    print(parse_{i}('a, b'))\n\n\nif __name__ == '__main__':\n    main_{i}()\n"));
    s
}

/// (path, name) of top-level functions according to Universal Ctags.
fn ctags_functions(root: &std::path::Path) -> BTreeSet<(String, String)> {
    let out = Command::new("ctags")
        .args([
            "-R",
            "--output-format=json",
            "--fields=+nKZ",
            "--languages=Rust,Python",
            "-f",
            "-",
        ])
        .arg(".")
        .current_dir(root)
        .output()
        .expect("universal-ctags (apt package universal-ctags) must be installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|t| t["kind"] == "function" && t.get("scope").is_none())
        .map(|t| {
            let path = t["path"]
                .as_str()
                .unwrap()
                .trim_start_matches("./")
                .to_string();
            (path, t["name"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn top_level_functions_agree_with_universal_ctags() {
    let kb = Kb::new();
    let root = kb.dir.path().join("repo");
    for i in 0..130 {
        let dir = root.join(format!("crates/c{}/src", i % 13));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("m{i}.rs")), rust_file(i)).unwrap();
    }
    for i in 0..100 {
        let dir = root.join(format!("pkg/sub{}", i % 10));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("mod{i}.py")), python_file(i)).unwrap();
    }
    let oracle = ctags_functions(&root);
    assert!(oracle.len() > 900, "oracle found {}", oracle.len());

    let report = kb.ingest(&root);
    assert_eq!(
        (report["new"].as_u64(), report["errors"].as_u64()),
        (Some(230), Some(0)),
        "{report:#}"
    );
    assert_eq!(
        report["fallbacks"], 0,
        "every file parsed by the AST chunkers"
    );

    // kebab's top-level functions: `fn name` (Rust) and `module.name` (Python).
    let store = kebab::store::Store::open(&kb.data_dir().join("kebab.sqlite")).unwrap();
    let mut found = BTreeSet::new();
    for doc in store.list_docs(None).unwrap() {
        for (span, _) in store.doc_blocks(&doc.doc_id).unwrap() {
            let Some(kebab::spans::SourceSpan::Code {
                symbol: Some(symbol),
                ..
            }) = span
            else {
                continue;
            };
            let name = if let Some(f) = symbol.strip_prefix("fn ") {
                Some(f.to_string())
            } else if doc.workspace_path.ends_with(".py") {
                let module = doc.workspace_path.trim_end_matches(".py").replace('/', ".");
                symbol
                    .strip_prefix(&format!("{module}."))
                    .filter(|rest| !rest.contains('.'))
                    .map(String::from)
            } else {
                None
            };
            if let Some(name) = name {
                found.insert((doc.workspace_path.clone(), name));
            }
        }
    }
    // Python classes are containers, not functions: keep only names ctags calls functions.
    let agreed = oracle.intersection(&found).count();
    let recall = agreed as f64 / oracle.len() as f64;
    let missing: Vec<_> = oracle.difference(&found).take(10).collect();
    assert!(
        recall >= 0.95,
        "recall {recall:.3}; missing e.g. {missing:?}"
    );
    let extra: Vec<_> = found
        .difference(&oracle)
        .filter(|(p, _)| p.ends_with(".rs"))
        .take(10)
        .collect();
    assert!(extra.is_empty(), "functions ctags does not know: {extra:?}");
}

/// How one language's symbols are compared with Universal Ctags.
struct Oracle {
    /// The language as ctags and the messages name it.
    language: &'static str,
    /// The folder of the compared trees holding the language's sources.
    dir: &'static str,
    /// File extensions of the language in that folder.
    extensions: &'static [&'static str],
    /// ctags kinds that are functions, types or methods.
    kinds: &'static [&'static str],
    /// How ctags joins a scope and a name.
    separator: &'static str,
    /// Fewest ctags symbols the compared trees must hold for the figure to
    /// mean something.
    at_least: usize,
}

const ORACLES: &[Oracle] = &[
    Oracle {
        language: "Rust",
        dir: "rust",
        extensions: &[".rs"],
        kinds: &[
            "function",
            "method",
            "struct",
            "enum",
            "interface",
            "typedef",
            "module",
            "macro",
            "union",
        ],
        separator: "::",
        at_least: 200,
    },
    Oracle {
        language: "Python",
        dir: "py",
        extensions: &[".py"],
        kinds: &["class", "function", "member"],
        separator: ".",
        at_least: 200,
    },
    Oracle {
        language: "C",
        dir: "c",
        extensions: &[".c", ".h"],
        kinds: &["function", "struct", "union", "enum", "typedef"],
        separator: "::",
        at_least: 200,
    },
    Oracle {
        language: "JavaScript",
        dir: "js",
        extensions: &[".js", ".mjs", ".cjs"],
        kinds: &[
            "function",
            "class",
            "method",
            "generator",
            "getter",
            "setter",
        ],
        separator: ".",
        at_least: 200,
    },
    Oracle {
        language: "TypeScript",
        dir: "ts",
        extensions: &[".ts"],
        kinds: &[
            "function",
            "class",
            "method",
            "interface",
            "enum",
            "alias",
            "namespace",
            "generator",
        ],
        separator: ".",
        at_least: 150,
    },
    Oracle {
        language: "Go",
        dir: "go",
        extensions: &[".go"],
        kinds: &["func", "struct", "interface", "type", "talias"],
        separator: ".",
        at_least: 200,
    },
    Oracle {
        language: "Java",
        dir: "java",
        extensions: &[".java"],
        kinds: &["class", "enum", "interface", "method", "annotation"],
        separator: ".",
        at_least: 200,
    },
    Oracle {
        language: "Kotlin",
        dir: "kotlin",
        extensions: &[".kt"],
        kinds: &["class", "interface", "method", "object", "typealias"],
        separator: ".",
        at_least: 200,
    },
    Oracle {
        language: "C++",
        dir: "cpp",
        extensions: &[".cc", ".cpp", ".h"],
        kinds: &[
            "function",
            "class",
            "struct",
            "namespace",
            "enum",
            "union",
            "typedef",
            "alias",
        ],
        separator: "::",
        at_least: 200,
    },
];

/// The oracle of a path of the compared trees: its folder and extension.
fn oracle_of(path: &str) -> Option<&'static Oracle> {
    ORACLES.iter().find(|o| {
        path.strip_prefix(o.dir)
            .is_some_and(|rest| rest.starts_with('/'))
            && o.extensions.iter().any(|e| path.ends_with(e))
    })
}

/// The name both sides agree to compare: operators without the space
/// ctags puts after `operator` (`operator =`); Kotlin by its last
/// component (see [`ctags_symbols`]).
fn comparable(oracle: &Oracle, qualified: &str) -> String {
    let name = qualified.replace("operator ", "operator");
    match oracle.language {
        "Kotlin" => name.rsplit('.').next().unwrap_or(&name).to_string(),
        _ => name,
    }
}

/// Every tag Universal Ctags writes for the compared languages under
/// `root` (one run: symbols and Java/Kotlin packages alike).
fn ctags_tags(root: &Path) -> Vec<serde_json::Value> {
    let languages: Vec<_> = ORACLES.iter().map(|o| o.language).collect();
    let out = Command::new("ctags")
        .args(["-R", "--output-format=json", "--fields=+nKZ"])
        .arg(format!("--languages={}", languages.join(",")))
        .args(["-f", "-", "."])
        .current_dir(root)
        .output()
        .expect("universal-ctags (apt package universal-ctags) must be installed");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Functions, types and methods Universal Ctags finds under `root`, nested
/// ones included, as `(path, qualified name)`: `scope::name` for Rust and
/// C++ (`tests::deeper::Probe::poke`), `scope.name` for the others
/// (`A.n.local`, `bufio.Reader.Read`). Left out:
/// - names ctags invents for anonymous structs, namespaces, functions and
///   lambdas (`__anon…`, `AnonymousFunction…`, `<lambda>`) and what it
///   files inside a Kotlin lambda (Universal Ctags 5.9 tags a lambda's
///   parameters as methods there), which no other tool can name;
/// - JavaScript object literals ctags files as classes (`const cfg = {…}`
///   is not a type; a `class` is);
/// - C++ type aliases declared inside a class or function, which stay in
///   that class's or function's chunk (namespace-level ones are compared);
/// - files with a generated-code marker, which ingest skips by design.
///
/// Kotlin is compared by file and name without the scope: Universal Ctags
/// 5.9's Kotlin parser loses class scopes after a primary constructor or
/// generic parameter list (the methods of `class View<T : Props>(…)` come
/// out at package level) and files extension functions by package.
fn ctags_symbols(root: &Path, tags: &[serde_json::Value]) -> BTreeSet<(String, String)> {
    // Ingest's own rule, read once per file.
    let mut generated = std::collections::HashMap::new();
    let mut is_generated = |path: &str| {
        *generated.entry(path.to_string()).or_insert_with(|| {
            kebab::ingest::has_generated_marker(&std::fs::read(root.join(path)).unwrap_or_default())
        })
    };
    tags.iter()
        .filter_map(|t| {
            let path = t["path"].as_str()?.trim_start_matches("./").to_string();
            let oracle = oracle_of(&path)?;
            let kind = t["kind"].as_str()?;
            let name = t["name"].as_str()?;
            let scope = t["scope"].as_str();
            let invented = |n: &str| {
                n.contains("__anon") || n.contains("AnonymousFunction") || n.contains("<lambda>")
            };
            let object_literal = oracle.language == "JavaScript"
                && kind == "class"
                && !t["pattern"].as_str().is_some_and(|p| {
                    p.split(|c: char| !c.is_alphanumeric())
                        .any(|w| w == "class")
                });
            let member_alias = oracle.language == "C++"
                && kind == "typedef"
                && matches!(
                    t["scopeKind"].as_str(),
                    Some("class" | "struct" | "union" | "function")
                );
            if !oracle.kinds.contains(&kind)
                || invented(name)
                || scope.is_some_and(invented)
                || object_literal
                || member_alias
                || is_generated(&path)
            {
                return None;
            }
            let qualified = match scope {
                Some(scope) => format!("{scope}{}{name}", oracle.separator),
                None => name.to_string(),
            };
            Some((path, comparable(oracle, &qualified)))
        })
        .collect()
}

/// The package each Java and Kotlin file declares, as ctags reads it:
/// kebab qualifies their symbols with it, ctags does not.
fn ctags_packages(tags: &[serde_json::Value]) -> std::collections::BTreeMap<String, String> {
    tags.iter()
        .filter(|t| t["kind"] == "package")
        .filter_map(|t| {
            let path = t["path"].as_str()?.trim_start_matches("./").to_string();
            Some((path, t["name"].as_str()?.to_string()))
        })
        .collect()
}

/// kebab's symbols in the index, qualified the way ctags writes them: the
/// Rust/C item keyword and the Python/JavaScript module path removed
/// (`impl …` blocks are not symbols ctags lists as such).
fn kebab_symbols(
    kb: &Kb,
    packages: &std::collections::BTreeMap<String, String>,
) -> BTreeSet<(String, String)> {
    const KEYWORDS: &[&str] = &[
        "fn ", "struct ", "enum ", "union ", "trait ", "type ", "mod ", "macro ", "typedef ",
    ];
    let store = kebab::store::Store::open(&kb.data_dir().join("kebab.sqlite")).unwrap();
    let mut found = BTreeSet::new();
    for doc in store.list_docs(None).unwrap() {
        let path = doc.workspace_path.clone();
        let Some(oracle) = oracle_of(&path) else {
            continue;
        };
        let stem = path.rsplit_once('.').map_or(path.as_str(), |(s, _)| s);
        let module = match oracle.language {
            "Python" => format!("{}.", stem.trim_end_matches("/__init__").replace('/', ".")),
            _ => format!("{stem}."),
        };
        for (span, _) in store.doc_blocks(&doc.doc_id).unwrap() {
            let Some(kebab::spans::SourceSpan::Code {
                symbol: Some(symbol),
                ..
            }) = span
            else {
                continue;
            };
            let name = match oracle.language {
                "Rust" | "C" | "C++" => KEYWORDS
                    .iter()
                    .find_map(|k| symbol.strip_prefix(k))
                    .or_else(|| (!symbol.starts_with("impl ")).then_some(symbol.as_str()))
                    .map(String::from),
                // Go methods read `pkg.(*T).M` (Go's own spelling), ctags
                // writes `pkg.T.M`.
                "Go" => Some(symbol.replace("(*", "").replace(')', "")),
                "Java" | "Kotlin" => Some(
                    packages
                        .get(&path)
                        .and_then(|p| symbol.strip_prefix(&format!("{p}.")))
                        .unwrap_or(&symbol)
                        .to_string(),
                ),
                _ => symbol.strip_prefix(&module).map(String::from),
            };
            if let Some(name) = name {
                found.insert((path.clone(), comparable(oracle, &name)));
            }
        }
    }
    found
}

/// Where the local cargo registry keeps the source of crate `name` (the
/// newest version present; the build has fetched it).
fn registry_crate(name: &str) -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .unwrap()
        .flatten()
        .flat_map(|index| std::fs::read_dir(index.path()).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(name))
                .is_some_and(|rest| {
                    rest.starts_with('-') && rest[1..].starts_with(|c: char| c.is_ascii_digit())
                })
        })
        .collect();
    found.sort();
    found
        .pop()
        .unwrap_or_else(|| panic!("crate {name} not in the cargo registry"))
}

/// The standard library sources of the `python3` on PATH.
fn python_stdlib() -> PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            "import json, os; print(os.path.dirname(os.path.dirname(json.__file__)))",
        ])
        .output()
        .expect("python3");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Agreement with ctags per language on real trees: crates from the cargo
/// registry (Rust: inline `mod tests`, trait methods, impls in modules; C:
/// the tree-sitter runtime, lz4 and zstd with their conditional
/// compilation and `extern "C"` blocks), Python standard library packages
/// (nested classes and functions, definitions under `try`/`if`),
/// JavaScript and TypeScript packages from npm (classes, object literals
/// of methods, nested functions, interfaces and type aliases), Go's
/// standard library and GoogleTest's C++ (Debian packages: nested classes,
/// templates and specialisations, export and annotation macros), Java and
/// Kotlin Android sources from npm (nested classes, companion objects,
/// type aliases). The misses are printed.
#[test]
fn real_source_trees_agree_with_universal_ctags() {
    let kb = Kb::new();
    let root = kb.dir.path().join("real");
    for name in ["globset", "semver", "walkdir"] {
        copy_tree(
            &registry_crate(name).join("src"),
            &root.join("rust").join(name),
        );
    }
    for (name, dirs) in [
        ("tree-sitter", &["src"][..]),
        ("lz4-sys", &["liblz4/lib"][..]),
        (
            "zstd-sys",
            &[
                "zstd/lib/common",
                "zstd/lib/compress",
                "zstd/lib/decompress",
            ][..],
        ),
    ] {
        let krate = registry_crate(name);
        for dir in dirs {
            copy_tree(&krate.join(dir), &root.join("c").join(name).join(dir));
        }
    }
    let stdlib = python_stdlib();
    for package in ["json", "http", "email", "logging", "urllib", "concurrent"] {
        copy_tree(&stdlib.join(package), &root.join("py").join(package));
    }
    let npm = npm_packages();
    for package in [
        "@bytecodealliance/jco/src",
        "@bytecodealliance/preview2-shim/lib",
        "commander/lib",
    ] {
        copy_tree(&npm.join(package), &root.join("js").join(package));
    }
    // TypeScript sources npm ships beside the compiled JavaScript.
    for entry in std::fs::read_dir(npm.join("@jridgewell")).expect("@jridgewell packages") {
        let package = entry.expect("entry").path();
        if package.join("src").is_dir() {
            let name = package.file_name().expect("name");
            copy_tree(&package.join("src"), &root.join("ts").join(name));
        }
    }
    // Go: grouped type declarations, methods on pointer receivers, tests,
    // and two generated files (`sort/zsort*.go`, skipped by design).
    let go = go_sources();
    for package in [
        "bufio",
        "container",
        "encoding/json",
        "go/ast",
        "net/url",
        "sort",
        "strings",
        "text/template",
    ] {
        copy_tree(&go.join(package), &root.join("go").join(package));
    }
    let trees = oracle_trees();
    copy_tree(
        &trees.join("cordova-android/framework/src"),
        &root.join("java/cordova"),
    );
    copy_tree(
        &trees.join("expo-modules-core/android/src"),
        &root.join("kotlin/expo"),
    );
    let googletest = Path::new("/usr/src/googletest");
    assert!(
        googletest.join("googletest/src/gtest.cc").is_file(),
        "GoogleTest sources missing: run scripts/setup.sh (Debian package googletest)"
    );
    for part in ["googletest", "googlemock"] {
        copy_tree(&googletest.join(part), &root.join("cpp").join(part));
    }
    let report = kb.ingest(&root);
    assert_eq!(report["errors"], 0, "{report:#}");
    let tags = ctags_tags(&root);
    let oracle = ctags_symbols(&root, &tags);
    let found = kebab_symbols(&kb, &ctags_packages(&tags));
    for language in ORACLES {
        let expected: BTreeSet<_> = oracle
            .iter()
            .filter(|(p, _)| oracle_of(p).is_some_and(|o| o.language == language.language))
            .collect();
        let agreed = expected.iter().filter(|s| found.contains(**s)).count();
        let agreement = agreed as f64 / expected.len().max(1) as f64;
        let missing: Vec<_> = expected.iter().filter(|s| !found.contains(**s)).collect();
        let name = language.language;
        println!(
            "{name}: {agreed}/{} ctags symbols found by kebab ({:.1} %); missing: {missing:?}",
            expected.len(),
            agreement * 100.0
        );
        assert!(
            expected.len() > language.at_least,
            "{name}: only {} symbols",
            expected.len()
        );
        assert!(
            agreement >= 0.95,
            "{name}: agreement {agreement:.3} below 0.95; missing: {missing:?}"
        );
    }
}

/// The newest Go standard library source tree (Debian golang-src).
fn go_sources() -> PathBuf {
    let mut roots: Vec<PathBuf> = ["/usr/share", "/usr/lib"]
        .iter()
        .flat_map(|base| std::fs::read_dir(base).into_iter().flatten().flatten())
        .map(|e| e.path().join("src"))
        .filter(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("go-"))
                && p.join("encoding/json/decode.go").is_file()
        })
        .collect();
    roots.sort();
    roots
        .pop()
        .expect("Go standard library sources missing: run scripts/setup.sh (Debian golang-src)")
}

/// The npm packages `tests/oracle-trees` pins (installed by
/// scripts/test.sh): Cordova's Android framework (Java) and Expo's
/// Android module core (Kotlin).
fn oracle_trees() -> PathBuf {
    node_modules(
        "tests/oracle-trees",
        &[
            "expo-modules-core/android/src",
            "cordova-android/framework/src",
        ],
        "it installs tests/oracle-trees",
    )
}

/// The npm packages the JavaScript example plugin's build installed
/// (`sdk/examples/ipynb-js/node_modules`, pinned by its lock file; built
/// by scripts/test.sh).
fn npm_packages() -> PathBuf {
    node_modules(
        "sdk/examples/ipynb-js",
        &["@bytecodealliance/jco/src"],
        "it builds the JavaScript example",
    )
}

/// `<project>/node_modules` of a folder of the repository, which must hold
/// the `packages` folders scripts/test.sh installed (`why` says how).
fn node_modules(project: &str, packages: &[&str], why: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(project)
        .join("node_modules");
    assert!(
        packages.iter().all(|p| dir.join(p).is_dir()),
        "{} missing: run scripts/test.sh ({why})",
        dir.display()
    );
    dir
}
