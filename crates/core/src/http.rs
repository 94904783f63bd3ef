//! Where every outgoing HTTP client is built: reqwest is compiled without a
//! default TLS provider, so ring's is installed (once) before the first
//! client exists. Also the one bounded downloader (`kebab plugin install
//! <URL>`, `kebab models pull`): a body streams to a temporary file and
//! stops at a cap, and a `Content-Length` over the cap is refused before
//! the body is read.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::blocking::{Client, ClientBuilder, Response};

/// A client builder with TLS ready, for callers that set their own limits.
pub fn builder() -> ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
}

/// An async client builder with TLS ready (`kebab mcp` forwarding to a
/// `kebab serve`).
pub fn async_builder() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

/// A client for a request/response API (a model server): connecting may
/// take up to 10 s (less when `timeout_secs` is smaller), the whole
/// exchange `timeout_secs`.
pub fn api_client(timeout_secs: u64) -> reqwest::Result<Client> {
    let timeout_secs = timeout_secs.max(1);
    builder()
        .connect_timeout(Duration::from_secs(timeout_secs.min(10)))
        .timeout(Duration::from_secs(timeout_secs))
        .build()
}

/// The most a download may bring, and the setting that raises it (named in
/// the error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownloadCap {
    /// Bytes.
    pub bytes: u64,
    /// The config key holding the cap, e.g. `[plugins] max_download_mb`.
    pub setting: &'static str,
}

impl DownloadCap {
    /// A cap of `mb` MiB set by `setting`.
    pub fn mib(mb: u64, setting: &'static str) -> DownloadCap {
        DownloadCap {
            bytes: mb.saturating_mul(1 << 20),
            setting,
        }
    }
}

/// Why a download failed. A partial download never stays on disk.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// No answer, or the connection broke (or stalled) mid-body.
    #[error("cannot reach {url}: {message}")]
    Http { url: String, message: String },
    /// An answer that is not a success.
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    /// `Content-Length` over the cap: refused before reading the body.
    #[error(
        "{url} announces {announced} bytes, over the download cap of {} bytes ({}); nothing was downloaded",
        .cap.bytes, .cap.setting
    )]
    Announced {
        url: String,
        announced: u64,
        cap: DownloadCap,
    },
    /// The body ran past the cap: stopped there.
    #[error(
        "{url} sent more than the download cap of {} bytes ({}); the download was stopped and deleted",
        .cap.bytes, .cap.setting
    )]
    OverCap { url: String, cap: DownloadCap },
    /// The temporary file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl DownloadError {
    /// The `error.v1` code.
    pub fn code(&self) -> &'static str {
        match self {
            DownloadError::Announced { .. } | DownloadError::OverCap { .. } => "too_large",
            _ => "io_error",
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            DownloadError::Announced { cap, .. } | DownloadError::OverCap { cap, .. } => format!(
                "check the URL; if the file really is that large, raise {}",
                cap.setting
            ),
            DownloadError::Io { .. } => {
                "pass --data-dir DIR (or set KEBAB_DATA_DIR) to a writable place".into()
            }
            _ => "check the network and the URL, then try again".into(),
        }
    }
}

/// Refuse a response that is not a success, or whose announced length is
/// over `cap` (before its body is read).
pub fn check_response(
    response: &Response,
    url: &str,
    cap: DownloadCap,
) -> Result<(), DownloadError> {
    if !response.status().is_success() {
        return Err(DownloadError::Status {
            url: url.into(),
            status: response.status().as_u16(),
        });
    }
    match response.content_length() {
        Some(announced) if announced > cap.bytes => Err(DownloadError::Announced {
            url: url.into(),
            announced,
            cap,
        }),
        _ => Ok(()),
    }
}

/// Stream the body of `response` (from `url`) into a new temporary file in
/// `dir`, at most `cap` bytes: the response is checked first
/// ([`check_response`]), a body that runs past the cap is stopped one
/// read past it. `each(chunk, done)` sees every chunk as it arrives
/// (hashing, progress); Ctrl-C stops it. The file is deleted when the
/// returned handle is dropped unless the caller persists it, and at once
/// on any failure.
pub fn download(
    mut response: Response,
    url: &str,
    dir: &Path,
    cap: DownloadCap,
    mut each: impl FnMut(&[u8], u64),
) -> Result<tempfile::NamedTempFile, DownloadError> {
    check_response(&response, url, cap)?;
    let io = |source| DownloadError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut file = tempfile::Builder::new()
        .prefix(".download-")
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(io)?;
    let mut done = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if crate::interrupt::requested() {
            return Err(DownloadError::Http {
                url: url.into(),
                message: "interrupted".into(),
            });
        }
        let n = response.read(&mut buf).map_err(|e| DownloadError::Http {
            url: url.into(),
            message: e.to_string(),
        })?;
        if n == 0 {
            break;
        }
        done += n as u64;
        if done > cap.bytes {
            return Err(DownloadError::OverCap {
                url: url.into(),
                cap,
            });
        }
        each(&buf[..n], done);
        file.write_all(&buf[..n]).map_err(io)?;
    }
    file.flush().map_err(io)?;
    Ok(file)
}
