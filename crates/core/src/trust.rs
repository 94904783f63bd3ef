//! How far a document is trusted and what kind of source it is (design
//! §3.6 `TrustLevel` / `SourceType`, §2.5 `doc_summary.v1`), as a
//! document's frontmatter declares them (`trust_level: secondary`,
//! `source_type: paper`), and which levels a `trust_min` filter admits.

/// How far a document is trusted, lowest first: `generated` (written by a
/// machine or a model), `secondary` (someone else's account), `primary`
/// (the source itself; the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum TrustLevel {
    Generated,
    Secondary,
    #[default]
    Primary,
}

impl TrustLevel {
    /// Every level, lowest first.
    pub const ALL: [TrustLevel; 3] = [
        TrustLevel::Generated,
        TrustLevel::Secondary,
        TrustLevel::Primary,
    ];

    /// The level's name in the index and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustLevel::Generated => "generated",
            TrustLevel::Secondary => "secondary",
            TrustLevel::Primary => "primary",
        }
    }

    /// The level `text` names (case and surrounding blanks ignored).
    pub fn parse(text: &str) -> Option<TrustLevel> {
        let text = text.trim();
        TrustLevel::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(text))
    }

    /// The names of the levels a `trust_min` of `self` admits: itself and
    /// every level above it.
    pub fn at_least(self) -> Vec<&'static str> {
        TrustLevel::ALL
            .into_iter()
            .filter(|l| *l >= self)
            .map(TrustLevel::as_str)
            .collect()
    }
}

/// The source types a document's frontmatter may declare (design §3.6).
/// A document without one has its plugin's name (`markdown`, `pdf`,
/// `code`, …).
pub const SOURCE_TYPES: [&str; 5] = ["markdown", "note", "paper", "reference", "inbox"];

/// The source type `text` names (case and surrounding blanks ignored).
pub fn source_type(text: &str) -> Option<&'static str> {
    let text = text.trim();
    SOURCE_TYPES
        .into_iter()
        .find(|t| t.eq_ignore_ascii_case(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_order() {
        assert_eq!(
            TrustLevel::parse(" Secondary "),
            Some(TrustLevel::Secondary)
        );
        assert_eq!(TrustLevel::parse("trusted"), None);
        assert_eq!(TrustLevel::default(), TrustLevel::Primary);
        assert_eq!(TrustLevel::Primary.at_least(), vec!["primary"]);
        assert_eq!(
            TrustLevel::Secondary.at_least(),
            vec!["secondary", "primary"]
        );
        assert_eq!(TrustLevel::Generated.at_least().len(), 3);
    }

    #[test]
    fn source_types_are_the_designs() {
        assert_eq!(source_type("Paper"), Some("paper"));
        assert_eq!(source_type("blog"), None);
    }
}
