//! `bench-formats-native [--repeat N] FILE...`: for each file, the plugin
//! its extension picks parses and chunks it natively (the same code the
//! wasm component runs, same chunk policy as kebab's default: 500/80
//! tokens). Prints one line per file: blocks, chunks, best and median
//! wall time of parse+chunk over N runs, and of parse alone.

use std::time::Instant;

use kebab_plugin_sdk::{Chunk, ChunkPolicy, Document, Guest, PluginError};

const POLICY: ChunkPolicy = ChunkPolicy {
    target_tokens: 500,
    overlap_tokens: 80,
};

type Run = fn(String, Vec<u8>) -> (Result<Document, PluginError>, f64, Vec<Chunk>);

fn run_with<P: Guest>(path: String, bytes: Vec<u8>) -> (Result<Document, PluginError>, f64, Vec<Chunk>) {
    let t = Instant::now();
    let doc = P::parse(path, bytes);
    let parsed = t.elapsed().as_secs_f64();
    let chunks = match &doc {
        Ok(d) => P::chunk_document(d.clone(), POLICY).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    (doc, parsed, chunks)
}

fn pick(path: &str) -> Option<(&'static str, Run)> {
    let ext = path.rsplit('.').next()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "docx" | "odt" | "fodt" | "rtf" | "doc" | "pptx" | "odp" | "fodp" | "ppt" => {
            ("office", run_with::<kebab_plugin_office::Plugin>)
        }
        "xlsx" | "xls" | "ods" | "fods" | "csv" | "tsv" => {
            ("sheets", run_with::<kebab_plugin_sheets::Plugin>)
        }
        "epub" => ("epub", run_with::<kebab_plugin_epub::Plugin>),
        "eml" | "mbox" | "msg" => ("mail", run_with::<kebab_plugin_mail::Plugin>),
        _ => return None,
    })
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut repeat = 3usize;
    if args.first().map(String::as_str) == Some("--repeat") {
        repeat = args[1].parse().expect("--repeat N");
        args.drain(..2);
    }
    for path in args {
        let Some((plugin, run)) = pick(&path) else {
            println!("{path}: no plugin");
            continue;
        };
        let bytes = std::fs::read(&path).expect("read");
        let mut totals = Vec::new();
        let mut parses = Vec::new();
        let (mut blocks, mut chunks, mut err) = (0, 0, None);
        // The clone of the input is outside the timed region, as the
        // host's copy into the guest is not (the sandbox figure includes it).
        for _ in 0..repeat {
            let input = bytes.clone();
            let t = Instant::now();
            let (doc, parsed, cs) = run(path.clone(), input);
            totals.push(t.elapsed().as_secs_f64());
            parses.push(parsed);
            match doc {
                Ok(d) => {
                    blocks = d.blocks.len();
                    chunks = cs.len();
                }
                Err(e) => err = Some(format!("{e:?}")),
            }
        }
        totals.sort_by(f64::total_cmp);
        parses.sort_by(f64::total_cmp);
        println!(
            "{path}\t{plugin}\t{} bytes\tblocks {blocks}\tchunks {chunks}\tparse+chunk best {:.2} ms median {:.2} ms\tparse best {:.2} ms{}",
            bytes.len(),
            totals[0] * 1e3,
            totals[totals.len() / 2] * 1e3,
            parses[0] * 1e3,
            err.map(|e| format!("\terror {e}")).unwrap_or_default()
        );
    }
}
