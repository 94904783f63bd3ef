//! What an OpenDocument cell shows, from its attributes and the text of its
//! paragraphs: numbers from `office:value` (so `1,200.00` reads `1200`, as
//! in every other format), dates and times from `office:date-value` and
//! `office:time-value`, booleans; percentages, currencies and numbers whose
//! format shows something else than a number (`TRUE`, `12:30`) as the cell
//! displays them (`15%`, `$1,200.00`); errors as displayed (`#DIV/0!`);
//! text as typed; a formula without a stored value as its text.

use crate::value::{Shown, Value, looks_numeric, number};

/// The `office:value-type` of a cell.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    #[default]
    None,
    Float,
    Percentage,
    Currency,
    Date,
    Time,
    Boolean,
    String,
    Other,
}

/// What the attributes of one `table:table-cell` say.
#[derive(Debug, Default)]
pub struct CellAttrs {
    value_type: ValueType,
    value: Option<f64>,
    date: Option<String>,
    time: Option<String>,
    boolean: Option<bool>,
    string: Option<String>,
    formula: Option<String>,
    error: bool,
}

impl CellAttrs {
    /// Take in the attribute whose local name is `local` (full name
    /// `full`) and whose value `value` gives, if it is a cell's.
    pub fn note(&mut self, local: &str, full: &str, value: impl FnOnce() -> String) {
        match local {
            "value-type" if full.starts_with("calcext") => self.error = value() == "error",
            "value-type" => self.value_type = value_type(&value()),
            "value" => self.value = value().trim().parse().ok(),
            "date-value" => self.date = Some(value()),
            "time-value" => self.time = Some(value()),
            "boolean-value" => self.boolean = Some(matches!(value().trim(), "true" | "1")),
            "string-value" => self.string = Some(value()),
            "formula" => self.formula = Some(value()),
            _ => {}
        }
    }

    /// What the cell shows, given the text of its paragraphs; `None` for
    /// an empty cell.
    pub fn shown(&self, text: String) -> Option<Shown> {
        let displayed = !text.trim().is_empty();
        let as_displayed = |text: String| {
            Some(Shown {
                text,
                is_text: false,
            })
        };
        let typed = match self.value_type {
            _ if self.error => return as_displayed(text).filter(|_| displayed),
            ValueType::Float if displayed && !looks_numeric(&text) => return as_displayed(text),
            ValueType::Percentage | ValueType::Currency if displayed => return as_displayed(text),
            ValueType::Percentage => {
                return as_displayed(format!("{}%", number(self.value? * 100.0)));
            }
            ValueType::Float | ValueType::Currency => self.value.map(Value::Float),
            ValueType::Date => self.date.as_deref().map(Value::IsoDate),
            ValueType::Time => self.time.as_deref().map(Value::IsoDuration),
            ValueType::Boolean => self.boolean.map(Value::Bool),
            ValueType::String if !displayed => self.string.as_deref().map(Value::Text),
            _ => None,
        };
        if let Some(value) = typed {
            return Some(value.shown());
        }
        if displayed {
            return Some(Value::Text(&text).shown());
        }
        self.formula.as_deref().map(formula_text)
    }
}

fn value_type(text: &str) -> ValueType {
    match text.trim() {
        "float" => ValueType::Float,
        "percentage" => ValueType::Percentage,
        "currency" => ValueType::Currency,
        "date" => ValueType::Date,
        "time" => ValueType::Time,
        "boolean" => ValueType::Boolean,
        "string" => ValueType::String,
        _ => ValueType::Other,
    }
}

/// A formula as a person types it: `of:=SUM([.B2:.B4])` reads `=SUM(B2:B4)`.
fn formula_text(formula: &str) -> Shown {
    let body = formula
        .split_once(':')
        .filter(|(namespace, _)| !namespace.contains('='))
        .map_or(formula, |(_, f)| f);
    let text = body
        .replace("[.", "")
        .replace(":.", ":")
        .replace(['[', ']'], "");
    Shown {
        text: if text.starts_with('=') {
            text
        } else {
            format!("={text}")
        },
        is_text: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(attrs: &[(&str, &str)], text: &str) -> Option<String> {
        let mut cell = CellAttrs::default();
        for (full, value) in attrs {
            let local = full.rsplit_once(':').map_or(*full, |(_, l)| l);
            cell.note(local, full, || value.to_string());
        }
        cell.shown(text.to_string()).map(|s| s.text)
    }

    #[test]
    fn values_read_by_type() {
        let float = [("office:value-type", "float"), ("office:value", "1200")];
        assert_eq!(cell(&float, "1,200.00").as_deref(), Some("1200"));
        let flagged = [("office:value-type", "float"), ("office:value", "1")];
        assert_eq!(cell(&flagged, "TRUE").as_deref(), Some("TRUE"));
        let date = [
            ("office:value-type", "date"),
            ("office:date-value", "2024-03-01"),
        ];
        assert_eq!(cell(&date, "03/01/24").as_deref(), Some("2024-03-01"));
        let time = [
            ("office:value-type", "time"),
            ("office:time-value", "PT14H30M00S"),
        ];
        assert_eq!(cell(&time, "").as_deref(), Some("14:30:00"));
        let boolean = [
            ("office:value-type", "boolean"),
            ("office:boolean-value", "true"),
        ];
        assert_eq!(cell(&boolean, "").as_deref(), Some("TRUE"));
        let pct = [
            ("office:value-type", "percentage"),
            ("office:value", "0.15"),
        ];
        assert_eq!(cell(&pct, "").as_deref(), Some("15%"));
        assert_eq!(cell(&pct, "15.00%").as_deref(), Some("15.00%"));
        let error = [
            ("office:value-type", "string"),
            ("office:string-value", ""),
            ("calcext:value-type", "error"),
        ];
        assert_eq!(cell(&error, "#DIV/0!").as_deref(), Some("#DIV/0!"));
        let formula = [("table:formula", "of:=SUM([.B2:.B4])")];
        assert_eq!(cell(&formula, "").as_deref(), Some("=SUM(B2:B4)"));
        let string = [
            ("office:value-type", "string"),
            ("office:string-value", "kept"),
        ];
        assert_eq!(cell(&string, "").as_deref(), Some("kept"));
        assert_eq!(cell(&[], ""), None);
    }
}
