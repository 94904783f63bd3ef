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

/// `secs` since the Unix epoch as UTC RFC 3339 (the epoch itself for a
/// time out of range).
pub fn unix_to_rfc3339(secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
        .format(&time::format_description::well_known::Rfc3339)
        .expect("UTC timestamps format")
}

#[cfg(test)]
mod tests {
    #[test]
    fn unix_seconds_format_as_rfc3339() {
        assert_eq!(super::unix_to_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            super::unix_to_rfc3339(1_700_000_000),
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(super::unix_to_rfc3339(i64::MAX), "1970-01-01T00:00:00Z");
    }
}
