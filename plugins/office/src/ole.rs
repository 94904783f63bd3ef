//! OLE compound files (the container of legacy Word and PowerPoint files,
//! and of password-protected Office Open XML files): what one holds, its
//! streams read within [`MAX_OLE_STREAM`], and the document properties of
//! its `\u{5}SummaryInformation` stream (title, author, subject, keywords,
//! comments, dates).

use std::borrow::Cow;
use std::io::{Cursor, Read};

use kebab_plugin_sdk::PluginError;

use crate::bytes::Bytes;
use crate::codepage;
use crate::limits::MAX_OLE_STREAM;
use crate::meta::{Field, Properties};

/// An open compound file (over the file's bytes, or a padded copy).
pub type Compound<'a> = cfb::CompoundFile<Cursor<Cow<'a, [u8]>>>;

/// What a compound file holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Content {
    /// An encrypted Office Open XML package (`EncryptionInfo`,
    /// `EncryptedPackage`).
    EncryptedPackage,
    Word,
    PowerPoint,
    /// An Excel workbook (`Workbook`, `Book`).
    Excel,
    Other,
}

/// Open `bytes` as a compound file. A file that ends before the last
/// sector its allocation table describes (some writers stop early) is
/// opened padded with empty sectors, when that stays within twice its
/// size plus a megabyte.
pub fn open(bytes: &[u8]) -> Result<Compound<'_>, PluginError> {
    let malformed = |e: std::io::Error| {
        PluginError::Malformed(format!("not a readable OLE compound file: {e}"))
    };
    match cfb::CompoundFile::open(Cursor::new(Cow::Borrowed(bytes))) {
        Ok(file) => Ok(file),
        Err(first) => match padded_to_fat(bytes) {
            Some(padded) => cfb::CompoundFile::open(Cursor::new(Cow::Owned(padded)))
                .map_err(|_| malformed(first)),
            None => Err(malformed(first)),
        },
    }
}

/// `bytes` padded with zeros to the sectors its allocation table covers,
/// if that is more than it has and at most twice its size plus 1 MiB.
fn padded_to_fat(bytes: &[u8]) -> Option<Vec<u8>> {
    let sector = match bytes.u16_at(30)? {
        9 => 512usize,
        12 => 4096,
        _ => return None,
    };
    let fat_sectors = bytes.u32_at(44)? as usize;
    let needed = fat_sectors
        .checked_mul(sector / 4)?
        .checked_add(1)?
        .checked_mul(sector)?;
    let limit = bytes.len().saturating_mul(2).saturating_add(1 << 20);
    (needed > bytes.len() && needed <= limit).then(|| {
        let mut padded = bytes.to_vec();
        padded.resize(needed, 0);
        padded
    })
}

/// What `file` holds, by its root streams.
pub fn content(file: &Compound<'_>) -> Content {
    let has = |name: &str| file.is_stream(format!("/{name}"));
    if has("EncryptionInfo") || has("EncryptedPackage") {
        Content::EncryptedPackage
    } else if has("WordDocument") {
        Content::Word
    } else if has("PowerPoint Document") || has("PP40") {
        Content::PowerPoint
    } else if has("Workbook") || has("Book") {
        Content::Excel
    } else {
        Content::Other
    }
}

/// The root stream `name`, or `None` when there is none; a stream past
/// [`MAX_OLE_STREAM`] is an error naming the bound.
pub fn stream(file: &mut Compound<'_>, name: &str) -> Result<Option<Vec<u8>>, PluginError> {
    let path = format!("/{name}");
    if !file.is_stream(&path) {
        return Ok(None);
    }
    let mut stream = file
        .open_stream(&path)
        .map_err(|e| PluginError::Malformed(format!("cannot open the {name} stream: {e}")))?;
    let mut out = Vec::new();
    (&mut stream)
        .take(MAX_OLE_STREAM + 1)
        .read_to_end(&mut out)
        .map_err(|e| PluginError::Malformed(format!("cannot read the {name} stream: {e}")))?;
    if out.len() as u64 > MAX_OLE_STREAM {
        return Err(PluginError::Malformed(format!(
            "the {name} stream is larger than {} MiB: not read",
            MAX_OLE_STREAM >> 20
        )));
    }
    Ok(Some(out))
}

/// The summary properties of `file` (empty when it has none or they
/// cannot be read: they are a nicety, never a reason to fail).
pub fn summary(file: &mut Compound<'_>) -> Properties {
    let mut props = Properties::default();
    if let Ok(Some(bytes)) = stream(file, "\u{5}SummaryInformation") {
        read_summary(&bytes, &mut props);
    }
    props
}

/// Summary property ids and the properties they hold.
const SUMMARY_FIELDS: [(u32, Field); 8] = [
    (2, Field::Title),
    (3, Field::Subject),
    (4, Field::Author),
    (5, Field::Keywords),
    (6, Field::Description),
    (8, Field::LastModifiedBy),
    (12, Field::Created),
    (13, Field::Modified),
];

/// Read a property set stream's first set into `props`.
fn read_summary(bytes: &[u8], props: &mut Properties) -> Option<()> {
    let set = usize::try_from(bytes.u32_at(44)?).ok()?;
    let count = bytes.u32_at(set + 4)?.min(1000) as usize;
    let entries: Vec<(u32, usize)> = (0..count)
        .filter_map(|i| {
            let at = set + 8 + i * 8;
            Some((bytes.u32_at(at)?, set + bytes.u32_at(at + 4)? as usize))
        })
        .collect();
    let code_page = entries
        .iter()
        .find(|(id, _)| *id == 1)
        .and_then(|(_, at)| bytes.u16_at(at + 4))
        .map_or(1252, u32::from);
    for (id, at) in entries {
        let Some((_, field)) = SUMMARY_FIELDS.iter().find(|(f, _)| *f == id) else {
            continue;
        };
        if let Some(value) = property_value(bytes, at, code_page) {
            props.set(*field, &value);
        }
    }
    Some(())
}

/// A string or date property's value at `at`.
fn property_value(bytes: &[u8], at: usize, code_page: u32) -> Option<String> {
    const VT_LPSTR: u32 = 0x1E;
    const VT_LPWSTR: u32 = 0x1F;
    const VT_FILETIME: u32 = 0x40;
    match bytes.u32_at(at)? {
        VT_LPSTR => {
            let len = bytes.u32_at(at + 4)? as usize;
            let raw = bytes.get(at + 8..(at + 8).checked_add(len)?)?;
            let text = codepage::decode(raw, codepage::encoding(code_page));
            Some(text.trim_end_matches('\0').to_string())
        }
        VT_LPWSTR => {
            let len = bytes.u32_at(at + 4)? as usize;
            let raw = bytes.get(at + 8..(at + 8).checked_add(len.checked_mul(2)?)?)?;
            let units: Vec<u16> = raw
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            Some(
                String::from_utf16_lossy(&units)
                    .trim_end_matches('\0')
                    .to_string(),
            )
        }
        VT_FILETIME => {
            let low = u64::from(bytes.u32_at(at + 4)?);
            let high = u64::from(bytes.u32_at(at + 8)?);
            filetime((high << 32) | low)
        }
        _ => None,
    }
}

/// A Windows FILETIME (100 ns ticks since 1601) as an ISO 8601 UTC time;
/// `None` for times before 1970 (unset dates hold durations or zero).
fn filetime(ticks: u64) -> Option<String> {
    const UNIX_EPOCH_SECONDS: u64 = 11_644_473_600;
    let seconds = (ticks / 10_000_000).checked_sub(UNIX_EPOCH_SECONDS)?;
    let days = (seconds / 86_400) as i64;
    let rest = seconds % 86_400;
    let (y, m, d) = civil_date(days);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    ))
}

/// The proleptic Gregorian date `days` after 1970-01-01.
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filetimes_become_dates() {
        assert_eq!(
            filetime(133_485_408_000_000_000).as_deref(),
            Some("2024-01-01T00:00:00Z")
        );
        assert_eq!(filetime(0), None);
    }

    #[test]
    fn a_garbage_summary_reads_nothing() {
        let mut props = Properties::default();
        assert!(read_summary(&[0xff; 64], &mut props).is_none());
        assert_eq!(props.get(Field::Title), None);
    }
}
