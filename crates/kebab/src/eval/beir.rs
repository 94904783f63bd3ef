//! BEIR datasets: `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl`
//! (`_id`, `text`) and `qrels/test.tsv` (`query-id corpus-id score`, with
//! a header). The corpus is written out as one markdown file per document
//! so it goes through the same plugins and indexes as a user's notes.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use super::EvalError;

/// A loaded dataset.
#[derive(Debug, Clone, Default)]
pub struct Beir {
    /// `(id, title, text)`.
    pub corpus: Vec<(String, String, String)>,
    /// `(id, text)`.
    pub queries: Vec<(String, String)>,
    /// query id → document id → graded relevance.
    pub qrels: HashMap<String, HashMap<String, f64>>,
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "_id")]
    id: String,
    #[serde(default)]
    title: String,
    text: String,
}

fn read_lines(path: &Path) -> Result<Vec<String>, EvalError> {
    let file = std::fs::File::open(path).map_err(|e| EvalError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    std::io::BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| EvalError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })
}

fn jsonl(path: &Path) -> Result<Vec<Line>, EvalError> {
    read_lines(path)?
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|e| EvalError::Invalid {
                path: path.display().to_string(),
                message: format!("line {}: {e}", n + 1),
            })
        })
        .collect()
}

/// Read a BEIR dataset directory.
pub fn load(dir: &Path) -> Result<Beir, EvalError> {
    let corpus = jsonl(&dir.join("corpus.jsonl"))?
        .into_iter()
        .map(|l| (l.id, l.title, l.text))
        .collect();
    let queries = jsonl(&dir.join("queries.jsonl"))?
        .into_iter()
        .map(|l| (l.id, l.text))
        .collect();
    let qrels_path = dir.join("qrels").join("test.tsv");
    let mut qrels: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for (n, line) in read_lines(&qrels_path)?.iter().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() < 3 || (n == 0 && fields[2].trim().parse::<f64>().is_err()) {
            continue; // header or blank
        }
        let score: f64 = fields[2].trim().parse().map_err(|_| EvalError::Invalid {
            path: qrels_path.display().to_string(),
            message: format!("line {}: score {:?} is not a number", n + 1, fields[2]),
        })?;
        qrels
            .entry(fields[0].to_string())
            .or_default()
            .insert(fields[1].to_string(), score);
    }
    Ok(Beir {
        corpus,
        queries,
        qrels,
    })
}

/// A file name for a document id: safe characters kept, anything else
/// replaced, and a short hash added when something was replaced so that
/// distinct ids never collide.
pub fn file_stem(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe == id && !id.is_empty() {
        safe
    } else {
        format!("{safe}-{}", &blake3::hash(id.as_bytes()).to_hex()[..8])
    }
}

/// Write the corpus as `<stem>.md` files under `dir` (unchanged files are
/// left alone so re-runs skip them). Returns stem → document id.
pub fn write_corpus(beir: &Beir, dir: &Path) -> Result<HashMap<String, String>, EvalError> {
    std::fs::create_dir_all(dir).map_err(|e| EvalError::Read {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let mut stems = HashMap::new();
    for (id, title, text) in &beir.corpus {
        let stem = file_stem(id);
        let body = if title.trim().is_empty() {
            format!("{text}\n")
        } else {
            format!("# {title}\n\n{text}\n")
        };
        let path = dir.join(format!("{stem}.md"));
        if std::fs::read_to_string(&path).ok().as_deref() != Some(body.as_str()) {
            std::fs::write(&path, body).map_err(|e| EvalError::Read {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        }
        stems.insert(stem, id.clone());
    }
    Ok(stems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_a_dataset_and_writes_its_corpus() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("corpus.jsonl"),
            "{\"_id\":\"d/1\",\"title\":\"T\",\"text\":\"alpha\"}\n{\"_id\":\"d2\",\"text\":\"beta\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("queries.jsonl"),
            "{\"_id\":\"q1\",\"text\":\"a?\"}\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("qrels")).unwrap();
        std::fs::write(
            dir.path().join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\nq1\td/1\t2\nq1\td2\t0\n",
        )
        .unwrap();
        let b = load(dir.path()).unwrap();
        assert_eq!(b.corpus.len(), 2);
        assert_eq!(b.qrels["q1"]["d/1"], 2.0);
        let out = dir.path().join("docs");
        let stems = write_corpus(&b, &out).unwrap();
        let stem = file_stem("d/1");
        assert_ne!(stem, file_stem("d_1"), "replaced characters never collide");
        assert_eq!(stems[&stem], "d/1");
        assert_eq!(
            std::fs::read_to_string(out.join(format!("{stem}.md"))).unwrap(),
            "# T\n\nalpha\n"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("d2.md")).unwrap(),
            "beta\n"
        );
    }

    #[test]
    fn a_bad_score_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("corpus.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("queries.jsonl"), "").unwrap();
        std::fs::create_dir(dir.path().join("qrels")).unwrap();
        std::fs::write(
            dir.path().join("qrels/test.tsv"),
            "q\td\tscore\nq1\td1\thigh\n",
        )
        .unwrap();
        let err = load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }
}
