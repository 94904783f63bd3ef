//! Office Open XML packages (Word and PowerPoint files are ZIP archives
//! of XML parts): parts read within the SDK archive's bounds, the
//! relationships that tie them together (resolved to part names, so that
//! a document is read by what it references, not by guessed file names),
//! and the core properties (`docProps/core.xml`).

use std::collections::HashSet;

use kebab_plugin_sdk::PluginError;
use kebab_plugin_sdk::archive::Archive;

use crate::meta::{Field, Properties};
use crate::xml::{self, Node, XmlCursor, attr, local};

/// One relationship of a part.
#[derive(Debug, Clone, PartialEq)]
pub struct Rel {
    /// Its id (`rId3`), as parts reference it.
    pub id: String,
    /// The last segment of its type URI (`officeDocument`, `slide`,
    /// `notesSlide`, `header`): transitional and strict packages agree on
    /// it.
    pub kind: String,
    /// The part it points to, as a member name (`word/styles.xml`).
    pub target: String,
}

/// An open package.
pub struct Package<'a> {
    archive: Archive<'a>,
    /// The members' names: a name not in the archive is answered here,
    /// without the archive's scan of every member for it.
    names: HashSet<String>,
}

impl<'a> Package<'a> {
    /// Wrap an open archive.
    pub fn new(archive: Archive<'a>) -> Package<'a> {
        let names = archive.names().into_iter().collect();
        Package { archive, names }
    }

    /// Whether the package has a part named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The part `name` as text (UTF-8 or UTF-16), `None` when absent.
    pub fn part(&mut self, name: &str) -> Result<Option<String>, PluginError> {
        if !self.contains(name) {
            return Ok(None);
        }
        Ok(self.archive.read(name)?.map(|bytes| xml::decode(&bytes)))
    }

    /// The relationships of `part` (`""` for the package's own), external
    /// ones left out.
    pub fn rels(&mut self, part: &str) -> Result<Vec<Rel>, PluginError> {
        let (dir, file) = match part.rsplit_once('/') {
            Some((dir, file)) => (format!("{dir}/"), file),
            None => (String::new(), part),
        };
        let rels_name = format!("{dir}_rels/{file}.rels");
        let Some(xml) = self.part(&rels_name)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut cursor = XmlCursor::new(&xml, &rels_name);
        while let Some(node) = cursor.next_node()? {
            let Node::Open(e) = node else { continue };
            if local(&e) != "Relationship"
                || attr(&e, "TargetMode").is_some_and(|m| m.eq_ignore_ascii_case("External"))
            {
                continue;
            }
            let (Some(id), Some(kind), Some(target)) =
                (attr(&e, "Id"), attr(&e, "Type"), attr(&e, "Target"))
            else {
                continue;
            };
            out.push(Rel {
                id,
                kind: kind.rsplit('/').next().unwrap_or("").to_string(),
                target: resolve(&dir, &target),
            });
        }
        Ok(out)
    }

    /// The target of the first relationship of `part` of `kind`.
    pub fn rel_target(&mut self, part: &str, kind: &str) -> Result<Option<String>, PluginError> {
        Ok(self
            .rels(part)?
            .into_iter()
            .find(|r| r.kind == kind)
            .map(|r| r.target))
    }

    /// The package's core properties (title, creator, dates, …).
    pub fn core_properties(&mut self) -> Result<Properties, PluginError> {
        let name = self
            .rel_target("", "core-properties")?
            .unwrap_or_else(|| "docProps/core.xml".to_string());
        let mut props = Properties::default();
        if let Some(xml) = self.part(&name)? {
            props.read_xml(
                &xml,
                &name,
                &[
                    ("title", Field::Title),
                    ("creator", Field::Author),
                    ("lastModifiedBy", Field::LastModifiedBy),
                    ("created", Field::Created),
                    ("modified", Field::Modified),
                    ("subject", Field::Subject),
                    ("keywords", Field::Keywords),
                    ("description", Field::Description),
                    ("language", Field::Language),
                ],
                None,
            )?;
        }
        Ok(props)
    }
}

/// The member name `target` points to from a part in `dir` (`word/`):
/// absolute targets start at the package root; `.` and `..` are resolved.
pub fn resolve(dir: &str, target: &str) -> String {
    let joined = match target.strip_prefix('/') {
        Some(absolute) => absolute.to_string(),
        None => format!("{dir}{target}"),
    };
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    segments.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_against_the_source_part() {
        assert_eq!(resolve("word/", "styles.xml"), "word/styles.xml");
        assert_eq!(
            resolve("ppt/slides/", "../notesSlides/n1.xml"),
            "ppt/notesSlides/n1.xml"
        );
        assert_eq!(resolve("", "/word/document.xml"), "word/document.xml");
        assert_eq!(resolve("", "../../x.xml"), "x.xml");
    }
}
