//! `kebab models pull`: download a catalog model's files from the Hugging
//! Face hub (or a mirror) over HTTPS, verifying each file's checksum.
//!
//! The hub names every file's content in its `X-Linked-Etag` (LFS files:
//! SHA-256) or `ETag` (small files: the git blob SHA-1) header; the download
//! is hashed while streaming and rejected when it differs. Each file is
//! bounded by `[models] max_download_mb` (the shared downloader in
//! `http.rs`: an announced length over it is refused before the body, a
//! body past it stopped). Files land in a staging directory first, so an
//! interrupted pull never leaves a half-written model where the loader
//! looks.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha1::Digest as _;

use super::catalog::ModelCard;
use kebab_core::http::{DownloadCap, DownloadError};

/// The hub used when no mirror is configured.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Problems downloading a model.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// The download failed or ran past the cap.
    #[error(transparent)]
    Download(#[from] DownloadError),
    #[error("checksum mismatch for {file}: expected {expected}, got {actual}")]
    Checksum {
        file: String,
        expected: String,
        actual: String,
    },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a downloaded file was checked.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PulledFile {
    pub name: String,
    pub bytes: u64,
    pub sha256: String,
    /// `sha256` or `git-sha1` when the server named the content, else
    /// `none` (recorded, not verified).
    pub verified_by: &'static str,
}

/// What the server says the content is.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    Sha256(String),
    GitSha1(String),
    Unknown,
}

fn expected_from(headers: &reqwest::header::HeaderMap) -> Expected {
    for name in ["x-linked-etag", "etag"] {
        if let Some(v) = headers.get(name).and_then(|v| v.to_str().ok()) {
            let tag = v
                .trim_start_matches("W/")
                .trim_matches('"')
                .to_ascii_lowercase();
            if tag.len() == 64 && tag.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Expected::Sha256(tag);
            }
            if tag.len() == 40 && tag.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Expected::GitSha1(tag);
            }
        }
    }
    Expected::Unknown
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl PullError {
    /// The `error.v1` code.
    pub fn code(&self) -> &'static str {
        match self {
            PullError::Download(e) => e.code(),
            _ => "io_error",
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            PullError::Download(e @ (DownloadError::Announced { .. } | DownloadError::OverCap { .. })) => {
                e.hint()
            }
            _ => "check the network or pass --endpoint with a mirror; files already in place are kept"
                .into(),
        }
    }
}

/// Download every file of `card` from `endpoint` into `dest` (replacing
/// what is there), each at most `cap`. `progress(file, done, total)` is
/// called as bytes arrive.
pub fn pull(
    card: &ModelCard,
    endpoint: &str,
    dest: &Path,
    cap: DownloadCap,
    mut progress: impl FnMut(&str, u64, Option<u64>),
) -> Result<Vec<PulledFile>, PullError> {
    let client = kebab_core::http::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(None)
        .connect_timeout(std::time::Duration::from_secs(20))
        .build()
        .map_err(|e| DownloadError::Http {
            url: endpoint.into(),
            message: e.to_string(),
        })?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| PullError::Io {
            path: path.clone(),
            source,
        }
    };
    let staging = dest.with_extension("partial");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(io(&staging))?;
    let mut pulled = Vec::new();
    for (remote, local) in card.files {
        let url = format!(
            "{}/{}/resolve/main/{}",
            endpoint.trim_end_matches('/'),
            card.hub_repo,
            remote
        );
        let target = staging.join(local);
        pulled.push(fetch(&client, &url, &target, local, cap, &mut progress)?);
    }
    let manifest = serde_json::json!({
        "name": card.name,
        "hub_repo": card.hub_repo,
        "endpoint": endpoint,
        "files": pulled,
        "pulled_at": kebab_core::clock::now_rfc3339(),
    });
    let manifest_path = staging.join("kebab-model.json");
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&manifest).expect("manifest serialises"),
    )
    .map_err(io(&manifest_path))?;
    let _ = std::fs::remove_dir_all(dest);
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::rename(&staging, dest).map_err(io(dest))?;
    Ok(pulled)
}

/// Follow up to ten redirects from `url` (reading the content's identity
/// from the first response that names it): the final response, its URL,
/// and what the content should hash to.
fn follow(
    client: &reqwest::blocking::Client,
    url: &str,
) -> Result<(reqwest::blocking::Response, reqwest::Url, Expected), DownloadError> {
    let http = |url: &str, e: &dyn std::fmt::Display| DownloadError::Http {
        url: url.into(),
        message: e.to_string(),
    };
    let mut current = reqwest::Url::parse(url).map_err(|e| http(url, &e))?;
    let mut expected = Expected::Unknown;
    for _ in 0..10 {
        let r = client
            .get(current.clone())
            .send()
            .map_err(|e| http(current.as_str(), &e))?;
        if expected == Expected::Unknown {
            expected = expected_from(r.headers());
        }
        if !r.status().is_redirection() {
            return Ok((r, current, expected));
        }
        let location = r
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| http(current.as_str(), &"redirect without a location"))?;
        current = current.join(location).map_err(|e| http(location, &e))?;
    }
    Err(http(url, &"too many redirects"))
}

/// How the downloaded content (`sha256`, and the file at `path` when the
/// server named a git blob hash) was checked against what the server said
/// it is.
fn verify(
    expected: &Expected,
    name: &str,
    sha256: &str,
    path: &Path,
) -> Result<&'static str, PullError> {
    let mismatch = |expected: &str, actual: String| PullError::Checksum {
        file: name.into(),
        expected: expected.into(),
        actual,
    };
    Ok(match expected {
        Expected::Sha256(want) if want != sha256 => {
            return Err(mismatch(want, sha256.to_string()));
        }
        Expected::Sha256(_) => "sha256",
        Expected::GitSha1(want) => {
            let actual = git_sha1(path).map_err(|source| PullError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            if *want != actual {
                return Err(mismatch(want, actual));
            }
            "git-sha1"
        }
        Expected::Unknown => "none",
    })
}

/// The git blob hash of the file at `path`, read in pieces.
fn git_sha1(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", file.metadata()?.len()).as_bytes());
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hex(&h.finalize()));
        }
        h.update(&buf[..n]);
    }
}

/// GET `url` (following redirects, keeping the first response's checksum
/// headers) into `target`, at most `cap` bytes.
fn fetch(
    client: &reqwest::blocking::Client,
    url: &str,
    target: &Path,
    name: &str,
    cap: DownloadCap,
    progress: &mut impl FnMut(&str, u64, Option<u64>),
) -> Result<PulledFile, PullError> {
    let (response, current, expected) = follow(client, url)?;
    let total = response.content_length();
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut sha256 = sha2::Sha256::new();
    let mut bytes = 0u64;
    let file = kebab_core::http::download(response, current.as_str(), dir, cap, |chunk, done| {
        sha256.update(chunk);
        bytes = done;
        progress(name, done, total);
    })?;
    let sha256 = hex(&sha256.finalize());
    let verified_by = verify(&expected, name, &sha256, file.path())?;
    file.persist(target).map_err(|e| PullError::Io {
        path: target.to_path_buf(),
        source: e.error,
    })?;
    Ok(PulledFile {
        name: name.into(),
        bytes,
        sha256,
        verified_by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A loopback HTTP/1.1 server: `/<repo>/resolve/main/<path>` redirects
    /// LFS files to `/cdn/<path>` with the hub's headers, serves the rest.
    fn serve(files: Vec<(&'static str, Vec<u8>, String)>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                reader.read_line(&mut request).unwrap();
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap() > 2 {
                    line.clear();
                }
                let path = request.split(' ').nth(1).unwrap_or("").to_string();
                let reply = files.iter().find_map(|(name, body, tag)| {
                    if path.ends_with(&format!("/resolve/main/{name}")) {
                        Some(if name.ends_with(".onnx") {
                            format!(
                                "HTTP/1.1 302 Found\r\nconnection: close\r\nlocation: /cdn/{name}\r\nx-linked-etag: \"{tag}\"\r\ncontent-length: 0\r\n\r\n"
                            )
                            .into_bytes()
                        } else {
                            let mut r = format!(
                                "HTTP/1.1 200 OK\r\nconnection: close\r\netag: \"{tag}\"\r\ncontent-length: {}\r\n\r\n",
                                body.len()
                            )
                            .into_bytes();
                            r.extend_from_slice(body);
                            r
                        })
                    } else if path == format!("/cdn/{name}") {
                        let mut r = format!("HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: {}\r\n\r\n", body.len())
                            .into_bytes();
                        r.extend_from_slice(body);
                        Some(r)
                    } else {
                        None
                    }
                });
                let reply = reply.unwrap_or_else(|| {
                    b"HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
                        .to_vec()
                });
                let _ = stream.write_all(&reply);
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        });
        format!("http://{addr}")
    }

    fn sha256_hex(b: &[u8]) -> String {
        hex(&sha2::Sha256::digest(b))
    }

    fn git_sha1_hex(b: &[u8]) -> String {
        let mut h = sha1::Sha1::new();
        h.update(format!("blob {}\0", b.len()).as_bytes());
        h.update(b);
        hex(&h.finalize())
    }

    const CAP: DownloadCap = DownloadCap {
        bytes: 1 << 30,
        setting: "[models] max_download_mb",
    };

    const CARD: ModelCard = ModelCard {
        name: "tiny",
        hub_repo: "org/tiny",
        files: &[
            ("onnx/model.onnx", "model.onnx"),
            ("tokenizer.json", "tokenizer.json"),
        ],
        dimensions: 4,
        max_length: 8,
        query_prefix: "",
        passage_prefix: "",
        languages: "",
        min_score: 0.0,
    };

    #[test]
    fn downloads_follow_redirects_and_verify_both_checksum_kinds() {
        let model = vec![7u8; 200_000];
        let tok = br#"{"version":"1.0"}"#.to_vec();
        let endpoint = serve(vec![
            ("onnx/model.onnx", model.clone(), sha256_hex(&model)),
            ("tokenizer.json", tok.clone(), git_sha1_hex(&tok)),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("models/tiny");
        let mut calls = 0;
        let files = pull(&CARD, &endpoint, &dest, CAP, |_, done, total| {
            calls += 1;
            assert!(total.is_none_or(|t| done <= t));
        })
        .unwrap();
        assert_eq!(std::fs::read(dest.join("model.onnx")).unwrap(), model);
        assert_eq!(std::fs::read(dest.join("tokenizer.json")).unwrap(), tok);
        assert_eq!(
            files.iter().map(|f| f.verified_by).collect::<Vec<_>>(),
            vec!["sha256", "git-sha1"]
        );
        assert!(calls >= 2);
        assert!(dest.join("kebab-model.json").is_file());
        assert!(!dir.path().join("models/tiny.partial").exists());
    }

    #[test]
    fn a_corrupt_download_is_rejected_and_leaves_nothing_behind() {
        let model = vec![1u8; 1000];
        let endpoint = serve(vec![
            ("onnx/model.onnx", model, sha256_hex(b"something else")),
            ("tokenizer.json", b"{}".to_vec(), git_sha1_hex(b"{}")),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("tiny");
        let err = pull(&CARD, &endpoint, &dest, CAP, |_, _, _| {}).unwrap_err();
        assert!(matches!(err, PullError::Checksum { .. }), "{err}");
        assert!(!dest.exists());
    }

    #[test]
    fn a_missing_file_is_an_http_status_error() {
        let endpoint = serve(vec![]);
        let dir = tempfile::tempdir().unwrap();
        let err = pull(&CARD, &endpoint, &dir.path().join("t"), CAP, |_, _, _| {}).unwrap_err();
        assert!(
            matches!(
                err,
                PullError::Download(DownloadError::Status { status: 404, .. })
            ),
            "{err}"
        );
    }
}
