//! What a photo's EXIF says that is worth keeping: when it was taken, the
//! camera, a description (the document's title), the orientation a viewer
//! applies, and — only when the user turns it on — where it was taken.
//!
//! Read with `kamadak-exif` from JPEG, PNG, WebP and TIFF containers; a
//! file without EXIF, or with broken EXIF, simply has none of these. The
//! library copies a whole TIFF file to read it, so TIFF files over
//! [`MAX_TIFF_BYTES`] (multi-page scans, rarely with camera EXIF) are not
//! read for EXIF.

use std::io::Cursor;

use exif::{Exif, Field, In, Reader, Tag, Value};
use image::metadata::Orientation;

/// The EXIF facts of one image.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Facts {
    /// `DateTimeOriginal` as ISO 8601 (`2023-07-14T09:30:00+09:00`; no
    /// offset when the file gives none).
    pub taken: Option<String>,
    /// `Make` and `Model` (the make once when the model repeats it).
    pub camera: Option<String>,
    /// `ImageDescription`.
    pub description: Option<String>,
    /// The orientation tag (1–8), as the turn a viewer applies.
    pub orientation: Option<Orientation>,
    /// Latitude and longitude in degrees (south and west negative).
    pub gps: Option<(f64, f64)>,
}

/// The largest TIFF file read for EXIF.
pub const MAX_TIFF_BYTES: usize = 64 << 20;

/// The EXIF facts of `bytes` (empty when it has no readable EXIF).
pub fn read(bytes: &[u8]) -> Facts {
    let tiff = bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*");
    if tiff && bytes.len() > MAX_TIFF_BYTES {
        return Facts::default();
    }
    let Ok(exif) = Reader::new().read_from_container(&mut Cursor::new(bytes)) else {
        return Facts::default();
    };
    Facts {
        taken: taken(&exif),
        camera: camera(&exif),
        description: ascii(&exif, Tag::ImageDescription),
        orientation: field(&exif, Tag::Orientation)
            .and_then(|f| f.value.get_uint(0))
            .and_then(|v| u8::try_from(v).ok())
            .and_then(Orientation::from_exif),
        gps: gps(&exif),
    }
}

fn field(exif: &Exif, tag: Tag) -> Option<&Field> {
    exif.get_field(tag, In::PRIMARY)
}

/// The first string of an ASCII field, trimmed, when not blank.
fn ascii(exif: &Exif, tag: Tag) -> Option<String> {
    let Value::Ascii(strings) = &field(exif, tag)?.value else {
        return None;
    };
    let text = String::from_utf8_lossy(strings.first()?);
    let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    (!text.is_empty()).then(|| text.to_string())
}

fn taken(exif: &Exif) -> Option<String> {
    let Value::Ascii(strings) = &field(exif, Tag::DateTimeOriginal)?.value else {
        return None;
    };
    let mut when = exif::DateTime::from_ascii(strings.first()?).ok()?;
    if let Some(Value::Ascii(offset)) = field(exif, Tag::OffsetTimeOriginal).map(|f| &f.value)
        && let Some(offset) = offset.first()
    {
        let _ = when.parse_offset(offset);
    }
    if !(1..=12).contains(&when.month) || !(1..=31).contains(&when.day) || when.hour > 23 {
        return None;
    }
    let mut iso = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        when.year, when.month, when.day, when.hour, when.minute, when.second
    );
    if let Some(minutes) = when.offset {
        let sign = if minutes < 0 { '-' } else { '+' };
        let minutes = minutes.unsigned_abs();
        iso.push_str(&format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60));
    }
    Some(iso)
}

fn camera(exif: &Exif) -> Option<String> {
    let make = ascii(exif, Tag::Make);
    let model = ascii(exif, Tag::Model);
    match (make, model) {
        (Some(make), Some(model)) if model.to_lowercase().starts_with(&make.to_lowercase()) => {
            Some(model)
        }
        (Some(make), Some(model)) => Some(format!("{make} {model}")),
        (make, model) => make.or(model),
    }
}

/// Degrees from an EXIF GPS coordinate (degrees, minutes, seconds) and its
/// reference (`N`/`S`, `E`/`W`).
fn coordinate(exif: &Exif, value: Tag, reference: Tag) -> Option<f64> {
    let Value::Rational(parts) = &field(exif, value)?.value else {
        return None;
    };
    let degrees = parts
        .iter()
        .take(3)
        .zip([1.0, 60.0, 3600.0])
        .map(|(part, unit)| part.to_f64() / unit)
        .sum::<f64>();
    let negative = matches!(ascii(exif, reference).as_deref(), Some("S" | "W"));
    let signed = if negative { -degrees } else { degrees };
    signed.is_finite().then_some(signed)
}

fn gps(exif: &Exif) -> Option<(f64, f64)> {
    let latitude = coordinate(exif, Tag::GPSLatitude, Tag::GPSLatitudeRef)?;
    let longitude = coordinate(exif, Tag::GPSLongitude, Tag::GPSLongitudeRef)?;
    ((-90.0..=90.0).contains(&latitude) && (-180.0..=180.0).contains(&longitude))
        .then_some((latitude, longitude))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_exif_is_no_facts() {
        assert_eq!(read(b"not an image"), Facts::default());
        assert_eq!(read(&[0xff, 0xd8, 0xff, 0xe1, 0x00]), Facts::default());
    }
}
