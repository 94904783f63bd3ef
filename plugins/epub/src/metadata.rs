//! The book's Dublin Core metadata from the package document: title,
//! creators, language, date, publisher, identifier and subjects, turned into
//! the document's title, language and metadata pairs.

/// The most values one metadata field keeps.
const MAX_VALUES: usize = 100;

/// The Dublin Core elements read, by local name.
pub const ELEMENTS: &[&str] = &[
    "title",
    "creator",
    "language",
    "date",
    "publisher",
    "identifier",
    "subject",
];

/// One metadata value with what qualifies it.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The element's `id` (an identifier's, for the package's
    /// `unique-identifier`).
    pub id: Option<String>,
    /// An EPUB 2 date's `opf:event` (`publication`, `modification`).
    pub event: Option<String>,
    /// The text.
    pub text: String,
}

/// Values of the Dublin Core elements, in document order.
#[derive(Debug, Default)]
pub struct Metadata {
    titles: Vec<Value>,
    creators: Vec<Value>,
    languages: Vec<Value>,
    dates: Vec<Value>,
    publishers: Vec<Value>,
    identifiers: Vec<Value>,
    subjects: Vec<Value>,
    /// Ids of titles an EPUB 3 `title-type` refinement calls `main`.
    main_title_ids: Vec<String>,
}

impl Metadata {
    /// Record `value` of the element with local name `element` (one of
    /// [`ELEMENTS`]; others are ignored, as are empty values).
    pub fn add(&mut self, element: &str, value: Value) {
        let field = match element.to_ascii_lowercase().as_str() {
            "title" => &mut self.titles,
            "creator" => &mut self.creators,
            "language" => &mut self.languages,
            "date" => &mut self.dates,
            "publisher" => &mut self.publishers,
            "identifier" => &mut self.identifiers,
            "subject" => &mut self.subjects,
            _ => return,
        };
        if !value.text.is_empty() && field.len() < MAX_VALUES {
            field.push(value);
        }
    }

    /// Record that the title with id `id` is the main one (EPUB 3
    /// `<meta refines="#id" property="title-type">main</meta>`).
    pub fn mark_main_title(&mut self, id: &str) {
        if self.main_title_ids.len() < MAX_VALUES {
            self.main_title_ids.push(id.to_string());
        }
    }

    /// The book's title: the `dc:title` refined as the main one, else the
    /// first.
    pub fn title(&self) -> Option<&str> {
        self.titles
            .iter()
            .find(|v| {
                v.id.as_ref()
                    .is_some_and(|id| self.main_title_ids.contains(id))
            })
            .or(self.titles.first())
            .map(|v| v.text.as_str())
    }

    /// The book's language as a BCP 47 tag (`en-US`, `ko`); `_` written
    /// for `-` is corrected.
    pub fn language(&self) -> Option<String> {
        self.languages
            .first()
            .map(|v| v.text.replace('_', "-"))
            .filter(|tag| !tag.contains(' '))
    }

    /// The metadata pairs of the document: `title`, `author` (all creators;
    /// a JSON list when several), `language`, `publisher`, `date` (the
    /// publication date when dates are qualified), `identifier` (the one
    /// the package names unique), `subject` (a JSON list when several).
    pub fn pairs(&self, unique_id: Option<&str>) -> Vec<(String, String)> {
        let date = self
            .dates
            .iter()
            .find(|v| v.event.as_deref() == Some("publication"))
            .or(self.dates.first());
        let identifier = self
            .identifiers
            .iter()
            .find(|v| unique_id.is_some() && v.id.as_deref() == unique_id)
            .or(self.identifiers.first());
        let mut out = Vec::new();
        let mut single = |key: &str, value: Option<String>| {
            if let Some(value) = value {
                out.push((key.to_string(), value));
            }
        };
        single("title", self.title().map(str::to_string));
        single("author", one_or_list(&self.creators));
        single("language", self.language());
        single("publisher", self.publishers.first().map(|v| v.text.clone()));
        single("date", date.map(|v| v.text.clone()));
        single("identifier", identifier.map(|v| v.text.clone()));
        single("subject", one_or_list(&self.subjects));
        out
    }
}

/// One value as itself, several as a JSON list, none as `None`.
fn one_or_list(values: &[Value]) -> Option<String> {
    match values {
        [] => None,
        [one] => Some(one.text.clone()),
        many => {
            let texts: Vec<&str> = many.iter().map(|v| v.text.as_str()).collect();
            serde_json::to_string(&texts).ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, id: Option<&str>, event: Option<&str>) -> Value {
        Value {
            id: id.map(str::to_string),
            event: event.map(str::to_string),
            text: text.to_string(),
        }
    }

    #[test]
    fn pairs_pick_the_unique_identifier_and_publication_date() {
        let mut m = Metadata::default();
        m.add("identifier", value("isbn", Some("isbn-id"), None));
        m.add("identifier", value("urn:uuid:1", Some("uid"), None));
        m.add("date", value("2020-01-01", None, Some("modification")));
        m.add("date", value("1999-05-05", None, Some("publication")));
        m.add("creator", value("A", None, None));
        m.add("creator", value("B \"b\"", None, None));
        m.add("language", value("en_US", None, None));
        m.add("subject", value("Fiction", None, None));
        m.add("title", value("", None, None));
        m.add("contributor", value("ignored", None, None));
        assert_eq!(m.title(), None);
        m.add("title", value("Series: Book", None, None));
        m.add("title", value("Book", Some("t2"), None));
        assert_eq!(m.title(), Some("Series: Book"));
        m.mark_main_title("t2");
        assert_eq!(m.title(), Some("Book"));
        let pairs = m.pairs(Some("uid"));
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("identifier"), Some("urn:uuid:1"));
        assert_eq!(get("date"), Some("1999-05-05"));
        assert_eq!(get("author"), Some(r#"["A","B \"b\""]"#));
        assert_eq!(get("language"), Some("en-US"));
        assert_eq!(get("subject"), Some("Fiction"));
        assert_eq!(get("title"), Some("Book"));
    }
}
