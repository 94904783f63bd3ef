//! How a cell's value reads as text: what a person sees in the sheet, not
//! how the file stores it. Numbers lose a needless `.0` and keep 15
//! significant digits (Excel's precision), dates read as dates
//! (`2024-03-01`, `2024-03-15 14:30:00`), booleans as `TRUE`/`FALSE`,
//! errors as Excel writes them (`#DIV/0!`).

use calamine::{CellErrorType, Data, DataRef, ExcelDateTime};

/// A cell value of any reader, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// Text as typed.
    Text(&'a str),
    /// A whole number.
    Int(i64),
    /// A number.
    Float(f64),
    /// `TRUE` or `FALSE`.
    Bool(bool),
    /// An Excel serial date, time or duration.
    Serial(ExcelDateTime),
    /// An ISO 8601 date or date-time (`2024-03-01T14:30:00`).
    IsoDate(&'a str),
    /// An ISO 8601 duration (`PT14H30M00S`).
    IsoDuration(&'a str),
    /// An error value.
    Error(&'a CellErrorType),
}

/// A cell's text and whether it is text rather than a number, date or
/// boolean (what tells a header row from a data row).
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The text a person sees in the cell.
    pub text: String,
    /// Whether the value is text (not a number, date, boolean or error).
    pub is_text: bool,
}

impl Value<'_> {
    /// The value as the sheet shows it.
    pub fn shown(&self) -> Shown {
        let (text, is_text) = match self {
            Value::Text(s) => ((*s).to_string(), true),
            Value::Int(i) => (i.to_string(), false),
            Value::Float(f) => (number(*f), false),
            Value::Bool(b) => ((if *b { "TRUE" } else { "FALSE" }).to_string(), false),
            Value::Serial(dt) => (serial(dt), false),
            Value::IsoDate(s) => (iso_date(s), false),
            Value::IsoDuration(s) => (iso_duration(s), false),
            Value::Error(e) => (e.to_string(), false),
        };
        Shown { text, is_text }
    }
}

/// The value of a cell calamine read into a range (`.xls`), or `None` for
/// an empty cell.
pub fn of_data(data: &Data) -> Option<Value<'_>> {
    Some(match data {
        Data::Empty => return None,
        Data::String(s) => Value::Text(s),
        Data::Int(i) => Value::Int(*i),
        Data::Float(f) => Value::Float(*f),
        Data::Bool(b) => Value::Bool(*b),
        Data::DateTime(dt) => Value::Serial(*dt),
        Data::DateTimeIso(s) => Value::IsoDate(s),
        Data::DurationIso(s) => Value::IsoDuration(s),
        Data::Error(e) => Value::Error(e),
    })
}

/// The value of a cell calamine streamed (`.xlsx`, `.xlsb`), or `None` for
/// an empty cell.
pub fn of_data_ref<'a>(data: &'a DataRef<'_>) -> Option<Value<'a>> {
    Some(match data {
        DataRef::Empty => return None,
        DataRef::String(s) => Value::Text(s),
        DataRef::SharedString(s) => Value::Text(s),
        DataRef::Int(i) => Value::Int(*i),
        DataRef::Float(f) => Value::Float(*f),
        DataRef::Bool(b) => Value::Bool(*b),
        DataRef::DateTime(dt) => Value::Serial(*dt),
        DataRef::DateTimeIso(s) => Value::IsoDate(s),
        DataRef::DurationIso(s) => Value::IsoDuration(s),
        DataRef::Error(e) => Value::Error(e),
    })
}

/// Significant digits Excel keeps of a number.
const SIGNIFICANT_DIGITS: usize = 15;

/// A number as Excel's General format shows it: whole numbers without a
/// fraction, others to 15 significant digits with trailing zeros dropped,
/// very large or small ones in scientific notation (`1.5E+20`).
pub fn number(value: f64) -> String {
    if !value.is_finite() {
        return "#NUM!".to_string();
    }
    if value == value.trunc() && value.abs() < 1e15 {
        return format!("{}", value as i64);
    }
    let scientific = format!("{:.*e}", SIGNIFICANT_DIGITS - 1, value);
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return scientific;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let sign = if negative { "-" } else { "" };
    if (-10..15).contains(&exponent) {
        format!("{sign}{}", plain_decimal(digits, exponent))
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{first}{dot}{rest}E{exp_sign}{:02}", exponent.abs())
    }
}

/// Significant `digits` (the first one before the point) times ten to the
/// `exponent`, written out without an exponent.
fn plain_decimal(digits: &str, exponent: i32) -> String {
    let point = exponent + 1;
    if point <= 0 {
        return format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize));
    }
    let point = point as usize;
    if digits.len() <= point {
        return format!("{digits}{}", "0".repeat(point - digits.len()));
    }
    format!("{}.{}", &digits[..point], &digits[point..])
}

/// An Excel serial date-time: the date alone when the time is midnight, the
/// time alone when there is no date part, `HH:MM:SS` past 24 hours for a
/// duration.
fn serial(dt: &ExcelDateTime) -> String {
    if dt.is_duration() {
        return duration(dt.as_f64() * 86_400.0);
    }
    let (year, month, day, hour, minute, second, milli) = dt.to_ymd_hms_milli();
    let date = format!("{year:04}-{month:02}-{day:02}");
    let time = clock(hour, minute, second, milli);
    let value = dt.as_f64();
    match (time, (0.0..1.0).contains(&value)) {
        (None, _) => date,
        (Some(time), true) => time,
        (Some(time), false) => format!("{date} {time}"),
    }
}

/// `HH:MM:SS` (with `.mmm` when there are milliseconds), or `None` at
/// midnight.
fn clock(hour: u8, minute: u8, second: u8, milli: u16) -> Option<String> {
    if (hour, minute, second, milli) == (0, 0, 0, 0) {
        return None;
    }
    let mut out = format!("{hour:02}:{minute:02}:{second:02}");
    if milli > 0 {
        out.push_str(&format!(".{milli:03}"));
    }
    Some(out)
}

/// A length of time in seconds as `HH:MM:SS`, hours past 24 kept.
fn duration(seconds: f64) -> String {
    let total = seconds.abs().round() as u64;
    let sign = if seconds < 0.0 && total > 0 { "-" } else { "" };
    format!(
        "{sign}{:02}:{:02}:{:02}",
        total / 3600,
        total / 60 % 60,
        total % 60
    )
}

/// An ISO 8601 date-time as a date (`2024-03-01`) or date and time
/// (`2024-03-15 14:30:00`), a zero fraction of a second dropped; anything
/// else unchanged.
fn iso_date(text: &str) -> String {
    let Some((date, time)) = text.split_once('T') else {
        return text.to_string();
    };
    let time = time.strip_suffix('Z').unwrap_or(time);
    let time = match time.split_once('.') {
        Some((whole, fraction)) if fraction.bytes().all(|b| b == b'0') => whole,
        _ => time,
    };
    if time.is_empty() || time.trim_start_matches(['0', ':']).is_empty() {
        date.to_string()
    } else {
        format!("{date} {time}")
    }
}

/// An ISO 8601 duration (`PT14H30M00S`, `PT36H`) as `HH:MM:SS`; anything
/// else unchanged.
fn iso_duration(text: &str) -> String {
    let (sign, body) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text),
    };
    let Some(body) = body.strip_prefix('P') else {
        return text.to_string();
    };
    let mut seconds = 0.0;
    let mut figure = String::new();
    let mut in_time = false;
    for c in body.chars() {
        let unit = match (c, in_time) {
            ('T', false) => {
                in_time = true;
                continue;
            }
            ('0'..='9' | '.', _) => {
                figure.push(c);
                continue;
            }
            ('D', false) => 86_400.0,
            ('H', true) => 3_600.0,
            ('M', true) => 60.0,
            ('S', true) => 1.0,
            _ => return text.to_string(),
        };
        let Ok(amount) = figure.parse::<f64>() else {
            return text.to_string();
        };
        seconds += amount * unit;
        figure.clear();
    }
    if !figure.is_empty() {
        return text.to_string();
    }
    duration(sign * seconds)
}

/// Whether a text from a delimited file reads as a number (so a row of them
/// is data, not a header).
pub fn looks_numeric(text: &str) -> bool {
    let t = text.trim().trim_end_matches('%');
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    !t.is_empty()
        && t.bytes().any(|b| b.is_ascii_digit())
        && t.bytes()
            .all(|b| b.is_ascii_digit() || b".,eE+-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use calamine::ExcelDateTimeType;

    #[test]
    fn numbers_read_as_excel_shows_them() {
        assert_eq!(number(1200.0), "1200");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(350.5), "350.5");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(1.0 / 3.0), "0.333333333333333");
        assert_eq!(number(-2.5e-3), "-0.0025");
        assert_eq!(number(123456789012.345), "123456789012.345");
        assert_eq!(number(1.5e20), "1.5E+20");
        assert_eq!(number(1e15), "1E+15");
        assert_eq!(number(2.5e-12), "2.5E-12");
        assert_eq!(number(f64::NAN), "#NUM!");
    }

    #[test]
    fn serial_dates_times_and_durations() {
        let dt = |v, is_1904| ExcelDateTime::new(v, ExcelDateTimeType::DateTime, is_1904);
        assert_eq!(serial(&dt(45352.0, false)), "2024-03-01");
        assert_eq!(
            serial(&dt(45366.604166666664, false)),
            "2024-03-15 14:30:00"
        );
        assert_eq!(serial(&dt(0.5, false)), "12:00:00");
        assert_eq!(serial(&dt(43890.0, true)), "2024-03-01");
        let span = ExcelDateTime::new(1.5104166666666667, ExcelDateTimeType::TimeDelta, false);
        assert_eq!(serial(&span), "36:15:00");
    }

    #[test]
    fn iso_values_read_as_dates_and_clock_times() {
        assert_eq!(iso_date("2024-03-01"), "2024-03-01");
        assert_eq!(iso_date("2024-03-01T00:00:00"), "2024-03-01");
        assert_eq!(iso_date("2024-03-15T14:30:00.000"), "2024-03-15 14:30:00");
        assert_eq!(iso_duration("PT14H30M00S"), "14:30:00");
        assert_eq!(iso_duration("PT36H15M"), "36:15:00");
        assert_eq!(iso_duration("P1DT2H"), "26:00:00");
        assert_eq!(iso_duration("PT1.5S"), "00:00:02");
        assert_eq!(iso_duration("PT9H5M"), "09:05:00");
        assert_eq!(iso_duration("nonsense"), "nonsense");
    }

    #[test]
    fn values_report_whether_they_are_text() {
        let err = CellErrorType::Div0;
        assert_eq!(
            Value::Error(&err).shown(),
            Shown {
                text: "#DIV/0!".into(),
                is_text: false
            }
        );
        assert_eq!(Value::Bool(true).shown().text, "TRUE");
        assert!(Value::Text("Item").shown().is_text);
        assert!(looks_numeric("1,200.50"));
        assert!(looks_numeric("-15%"));
        assert!(!looks_numeric("Q1"));
        assert!(!looks_numeric("-"));
    }
}
