//! Where every outgoing HTTP client is built: reqwest is compiled without a
//! default TLS provider, so ring's is installed (once) before the first
//! client exists.

use std::time::Duration;

use reqwest::blocking::{Client, ClientBuilder};

/// A client builder with TLS ready, for callers that set their own limits.
pub fn builder() -> ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
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
