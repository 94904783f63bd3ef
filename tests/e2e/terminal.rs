//! Nothing a document, a file name or a model writes reaches the terminal
//! as a control sequence: every human-readable output path of the real
//! binary shows control characters as visible escapes, while `--json`
//! output keeps the text lossless.

use std::process::Output;

use crate::llm_server::{LlmServer, Script, Wire, tokens};
use crate::support::Kb;

/// Sequences a hostile document uses on a terminal: write the clipboard
/// (OSC 52), retitle the window (OSC 0), clear the line after a carriage
/// return, an 8-bit CSI (U+009B), BEL and DEL.
const HOSTILE: &str = "\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]0;owned\u{7}\r\u{1b}[2K\u{9b}31m\u{7f}";

/// A control character a terminal acts on, found in `text` (a carriage
/// return only counts when it is not a pseudo-terminal's `\r\n`).
fn raw_control(text: &str) -> Option<char> {
    let chars: Vec<char> = text.chars().collect();
    chars.iter().enumerate().find_map(|(i, &c)| {
        let crlf = c == '\r' && chars.get(i + 1) == Some(&'\n');
        (c.is_control() && c != '\n' && c != '\t' && !crlf).then_some(c)
    })
}

fn assert_clean(what: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        if let Some(c) = raw_control(&text) {
            panic!("`{what}` {stream} holds a raw {c:?}: {text:?}");
        }
    }
}

#[test]
fn documents_file_names_and_answers_print_no_control_sequences() {
    let server = LlmServer::start(
        Wire::OpenAi,
        Script::Answer(tokens(&format!(
            "The pangolin{HOSTILE} eats ants and termites [#1]."
        ))),
    );
    let kb = Kb::with_config(&server.config(10));
    let corpus = kb.dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let name = "zoo\u{1b}]0;title\u{7}.md";
    let note = corpus.join(name);
    let body = format!(
        "# Pangolin{HOSTILE}\n\nThe pangolin{HOSTILE} eats ants and termites at night.\n\nIt rolls into a ball.\n"
    );
    std::fs::write(&note, &body).unwrap();
    kb.ingest(&corpus);

    let (docs, _) = kb.json(&["list", "docs"]);
    let doc_id = docs[0]["doc_id"].as_str().unwrap().to_string();
    let (hits, _) = kb.search("pangolin ants termites", 1);
    let chunk_id = hits[0]["chunk_id"].as_str().unwrap().to_string();

    // JSON stays lossless: the control characters are there, JSON-escaped.
    let (fetched, code) = kb.json(&["fetch", "doc", &doc_id]);
    assert_eq!(code, 0, "{fetched}");
    assert!(
        fetched["text"].as_str().unwrap().contains(HOSTILE),
        "{fetched}"
    );

    // The file changes after indexing: fetch warns with its (hostile) name.
    std::fs::write(&note, format!("{body}\nmore\n")).unwrap();
    let question = "What does the pangolin eat, ants or termites?";
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("search", vec!["search", "pangolin ants termites"]),
        ("list docs", vec!["list", "docs"]),
        ("fetch doc", vec!["fetch", "doc", &doc_id]),
        ("fetch span", vec!["fetch", "span", &doc_id, "1", "4"]),
        ("fetch chunk", vec!["fetch", "chunk", &chunk_id]),
        ("ask", vec!["ask", question]),
        ("ask --explain", vec!["ask", question, "--explain"]),
    ];
    for (what, args) in &runs {
        let out = kb.run(args);
        assert_clean(what, &out);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("\\e]"),
            "`{what}` shows the escapes visibly: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let warned = kb.run(&["fetch", "doc", &doc_id]);
    assert!(
        String::from_utf8_lossy(&warned.stderr).contains("zoo\\e]0;title\\u{7}.md changed"),
        "{}",
        String::from_utf8_lossy(&warned.stderr)
    );

    // On a terminal the answer streams token by token: still escaped.
    let command = format!(
        "{} ask '{question}'",
        kb.binary.to_str().unwrap().replace('\'', "'\\''")
    );
    let mut script = std::process::Command::new("script");
    for (key, value) in kb.cmd(&[]).get_envs() {
        if let Some(value) = value {
            script.env(key, value);
        }
    }
    let out = script
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run kebab under script(1)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("The pangolin\\e]52;c;"), "streamed: {text:?}");
    assert_clean("ask on a terminal", &out);
}
