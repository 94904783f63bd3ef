//! MAPI properties of one object of an Outlook `.msg` (the message, a
//! recipient, an attachment, an embedded message), as MS-OXMSG stores them
//! in an OLE compound file storage:
//!
//! - variable-size values (strings, binary) in streams named
//!   `__substg1.0_IIIITTTT` (property id, then type, in hex);
//! - fixed-size values (numbers, times) in the `__properties_version1.0`
//!   stream: a header (32 bytes for the message, 24 for an embedded
//!   message, 8 for recipients and attachments), then 16-byte entries (tag,
//!   flags, 8 bytes of value).
//!
//! Every read is bounded: a stream is read only up to the size its caller
//! allows.

use std::collections::HashMap;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use cfb::CompoundFile;

use crate::codepage;
use crate::mail::MailDate;

/// An Outlook message file opened for reading.
pub type Cfb<'a> = CompoundFile<Cursor<&'a [u8]>>;

/// `PT_LONG`: a 32-bit integer.
const PT_LONG: u16 = 0x0003;
/// `PT_SYSTIME`: a FILETIME (100 ns ticks since 1601-01-01 UTC).
const PT_SYSTIME: u16 = 0x0040;
/// `PT_STRING8`: 8-bit text in the message's code page.
const PT_STRING8: u16 = 0x001E;
/// `PT_UNICODE`: UTF-16LE text.
const PT_UNICODE: u16 = 0x001F;
/// `PT_BINARY`: bytes.
const PT_BINARY: u16 = 0x0102;

/// The stream of fixed-size properties.
const PROPERTIES_STREAM: &str = "__properties_version1.0";

/// Bytes of the fixed-size property stream that are read (4 096 entries).
const MAX_PROPERTIES_BYTES: u64 = 64 << 10;

/// Entries of one storage that are looked at.
const MAX_ENTRIES: usize = 20_000;

/// Seconds between 1601-01-01 (FILETIME's epoch) and 1970-01-01.
const FILETIME_TO_UNIX: i64 = 11_644_473_600;

/// The size of the property header of an object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Header {
    /// The top-level message: 32 bytes.
    Message,
    /// A message embedded in an attachment: 24 bytes.
    Embedded,
    /// A recipient or an attachment: 8 bytes.
    Part,
}

impl Header {
    fn len(self) -> usize {
        match self {
            Header::Message => 32,
            Header::Embedded => 24,
            Header::Part => 8,
        }
    }
}

/// A stream holding one property's value.
#[derive(Debug, Clone)]
struct ValueStream {
    kind: u16,
    path: PathBuf,
    len: u64,
}

/// The properties of one object.
#[derive(Debug, Default)]
pub struct Properties {
    storage: PathBuf,
    /// Variable-size values by property id.
    streams: HashMap<u16, Vec<ValueStream>>,
    /// Fixed-size values by property id: type and 8 value bytes.
    fixed: HashMap<u16, (u16, [u8; 8])>,
    /// Names of the storages inside (recipients, attachments, an embedded
    /// message), sorted.
    storages: Vec<String>,
    /// The code pages 8-bit strings may be in, most likely first (see
    /// [`codepage::decode_first`]).
    pub code_pages: Vec<u32>,
}

impl Properties {
    /// The properties of the object in `storage`; empty when it holds none
    /// (or cannot be read).
    pub fn read(file: &mut Cfb<'_>, storage: &Path, header: Header) -> Properties {
        let mut props = Properties {
            storage: storage.to_path_buf(),
            ..Properties::default()
        };
        let Ok(entries) = file.read_storage(storage) else {
            return props;
        };
        let entries: Vec<(String, bool, u64)> = entries
            .take(MAX_ENTRIES)
            .map(|e| (e.name().to_string(), e.is_stream(), e.len()))
            .collect();
        for (name, is_stream, len) in entries {
            if !is_stream {
                props.storages.push(name);
            } else if let Some((id, kind)) = value_stream_tag(&name) {
                props.streams.entry(id).or_default().push(ValueStream {
                    kind,
                    path: storage.join(&name),
                    len,
                });
            }
        }
        props.storages.sort();
        let fixed = read_stream(file, &storage.join(PROPERTIES_STREAM), MAX_PROPERTIES_BYTES);
        for entry in fixed
            .unwrap_or_default()
            .get(header.len()..)
            .unwrap_or_default()
            .chunks_exact(16)
        {
            let tag = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
            let mut value = [0u8; 8];
            value.copy_from_slice(&entry[8..16]);
            props.fixed.insert((tag >> 16) as u16, (tag as u16, value));
        }
        props
    }

    /// Whether the object has no properties at all.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty() && self.fixed.is_empty()
    }

    /// A 32-bit integer property.
    pub fn long(&self, id: u16) -> Option<u32> {
        match self.fixed.get(&id) {
            Some((PT_LONG, v)) => Some(u32::from_le_bytes([v[0], v[1], v[2], v[3]])),
            _ => None,
        }
    }

    /// A time property, when it is a real date.
    pub fn time(&self, id: u16) -> Option<MailDate> {
        let Some((PT_SYSTIME, v)) = self.fixed.get(&id) else {
            return None;
        };
        let ticks = i64::try_from(u64::from_le_bytes(*v)).ok()?;
        if ticks == 0 {
            return None;
        }
        MailDate::from_timestamp(ticks / 10_000_000 - FILETIME_TO_UNIX)
    }

    /// A text property (UTF-16 or 8-bit in the code page), trailing NULs
    /// dropped; `None` when absent, over `limit` bytes or unreadable.
    pub fn string(&self, file: &mut Cfb<'_>, id: u16, limit: u64) -> Option<String> {
        if let Some(stream) = self.stream(id, PT_UNICODE) {
            let bytes = read_stream(file, &stream.path, limit)?;
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|p| u16::from_le_bytes([p[0], p[1]]))
                .collect();
            return Some(
                String::from_utf16_lossy(&units)
                    .trim_end_matches('\0')
                    .to_string(),
            );
        }
        let stream = self.stream(id, PT_STRING8)?;
        let bytes = read_stream(file, &stream.path, limit)?;
        Some(
            codepage::decode_first(&bytes, &self.code_pages)
                .trim_end_matches('\0')
                .to_string(),
        )
    }

    /// A binary property; `None` when absent, over `limit` bytes or
    /// unreadable.
    pub fn binary(&self, file: &mut Cfb<'_>, id: u16, limit: u64) -> Option<Vec<u8>> {
        let stream = self.stream(id, PT_BINARY)?;
        read_stream(file, &stream.path, limit)
    }

    /// The size of a binary property's stream, when it has one.
    pub fn binary_len(&self, id: u16) -> Option<u64> {
        self.stream(id, PT_BINARY).map(|s| s.len)
    }

    fn stream(&self, id: u16, kind: u16) -> Option<&ValueStream> {
        self.streams.get(&id)?.iter().find(|s| s.kind == kind)
    }

    /// The paths of the storages inside whose name starts with `prefix`,
    /// in name order.
    pub fn storages(&self, prefix: &str) -> Vec<PathBuf> {
        self.storages
            .iter()
            .filter(|name| name.starts_with(prefix))
            .map(|name| self.storage.join(name))
            .collect()
    }

    /// The path of the storage `name` inside, when there is one.
    pub fn storage(&self, name: &str) -> Option<PathBuf> {
        self.storages
            .iter()
            .any(|n| n == name)
            .then(|| self.storage.join(name))
    }
}

/// `(id, type)` of a `__substg1.0_IIIITTTT` stream name.
fn value_stream_tag(name: &str) -> Option<(u16, u16)> {
    let hex = name.strip_prefix("__substg1.0_")?;
    if hex.len() != 8 {
        return None;
    }
    let id = u16::from_str_radix(hex.get(..4)?, 16).ok()?;
    let kind = u16::from_str_radix(hex.get(4..)?, 16).ok()?;
    Some((id, kind))
}

/// A whole stream, when it is at most `limit` bytes and readable.
fn read_stream(file: &mut Cfb<'_>, path: &Path, limit: u64) -> Option<Vec<u8>> {
    let stream = file.open_stream(path).ok()?;
    if stream.len() > limit {
        return None;
    }
    let mut bytes = Vec::new();
    stream.take(limit).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_names_give_id_and_type() {
        assert_eq!(
            value_stream_tag("__substg1.0_0037001F"),
            Some((0x0037, 0x001F))
        );
        assert_eq!(
            value_stream_tag("__substg1.0_37010102"),
            Some((0x3701, 0x0102))
        );
        assert_eq!(value_stream_tag("__substg1.0_800B101F-00000000"), None);
        assert_eq!(value_stream_tag("__properties_version1.0"), None);
    }
}
