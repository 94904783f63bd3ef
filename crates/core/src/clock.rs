//! The one wall clock kebab writes into its records (answers, runs,
//! install and pull records): UTC, RFC 3339, or seconds since the epoch.

/// Current UTC time, RFC 3339.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .expect("UTC timestamps format")
}

/// Current UTC time, seconds since the Unix epoch.
pub fn now_unix_secs() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}
