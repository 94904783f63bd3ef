//! `META-INF/encryption.xml`: which members are encrypted, and how. Fonts
//! obfuscated by the IDPF or Adobe algorithm still make a DRM-free book;
//! a content document (a manifest item whose text is read) encrypted by
//! any other algorithm — Adobe ADEPT, Apple FairPlay and Readium LCP
//! encrypt the chapters — means the text cannot be read, and the book is
//! refused with a message that says so.

use std::collections::HashMap;

use kebab_plugin_sdk::{LogLevel, PluginError, log};
use quick_xml::events::Event;

use crate::members::Members;
use crate::package::{Item, Package};
use crate::{paths, xml};

/// The encryption document's fixed name.
const ENCRYPTION: &str = "META-INF/encryption.xml";

/// Font obfuscation algorithms: they hide fonts, not text.
const FONT_OBFUSCATION: &[&str] = &[
    "http://www.idpf.org/2008/embedding",
    "http://ns.adobe.com/pdf/enc#RC",
];

/// The most encrypted members read from the encryption document.
const MAX_ENTRIES: usize = 100_000;

/// An error when one of the book's content documents is encrypted (DRM);
/// `Ok` for a book without an encryption document, or whose encryption
/// hides no content document.
pub fn refuse_drm(members: &mut Members<'_>, package: &Package) -> Result<(), PluginError> {
    let Some(text) = members.text(ENCRYPTION)? else {
        return Ok(());
    };
    let encrypted = match encrypted_members(&text) {
        Ok(encrypted) => encrypted,
        Err(e) => {
            log(
                LogLevel::Warn,
                &format!("{ENCRYPTION} is not XML ({e}): reading the book as unencrypted"),
            );
            return Ok(());
        }
    };
    match encrypted_content(&encrypted, package) {
        Some((item, algorithm)) => Err(PluginError::Unsupported(format!(
            "DRM-protected (encrypted) EPUB: {} is encrypted ({algorithm}); \
             only DRM-free books can be indexed",
            item.path
        ))),
        None => Ok(()),
    }
}

/// The first content document of the manifest that is among the
/// `encrypted` members, with its algorithm.
fn encrypted_content<'a>(
    encrypted: &'a HashMap<String, String>,
    package: &'a Package,
) -> Option<(&'a Item, &'a String)> {
    package
        .manifest_order
        .iter()
        .filter_map(|id| package.manifest.get(id))
        .filter(|item| item.is_text())
        .find_map(|item| encrypted.get(&item.path.to_lowercase()).map(|a| (item, a)))
}

/// The members (lower case) encrypted by anything but font obfuscation,
/// with their algorithm.
fn encrypted_members(text: &str) -> Result<HashMap<String, String>, quick_xml::Error> {
    let mut reader = xml::reader(text);
    let mut out = HashMap::new();
    let mut algorithm: Option<String> = None;
    let mut member: Option<String> = None;
    loop {
        match reader.read_event()? {
            Event::Start(e) | Event::Empty(e) if xml::is(&e, "EncryptedData") => {
                algorithm = None;
                member = None;
            }
            Event::Start(e) | Event::Empty(e) if xml::is(&e, "EncryptionMethod") => {
                algorithm = xml::attr(&e, "Algorithm");
            }
            Event::Start(e) | Event::Empty(e) if xml::is(&e, "CipherReference") => {
                member = xml::attr(&e, "URI").and_then(|uri| paths::resolve("", &uri));
            }
            Event::End(e) if xml::local(e.name()).eq_ignore_ascii_case("EncryptedData") => {
                let algorithm = algorithm
                    .take()
                    .unwrap_or_else(|| "no algorithm named".into());
                if let Some(member) = member.take()
                    && !FONT_OBFUSCATION.contains(&algorithm.trim())
                    && out.len() < MAX_ENTRIES
                {
                    out.insert(member.to_lowercase(), algorithm);
                }
            }
            Event::Eof => return Ok(out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(uri: &str, algorithm: &str) -> String {
        format!(
            r#"<enc:EncryptedData><enc:EncryptionMethod Algorithm="{algorithm}"/>
               <enc:CipherData><enc:CipherReference URI="{uri}"/></enc:CipherData>
               </enc:EncryptedData>"#
        )
    }

    #[test]
    fn obfuscated_fonts_are_not_listed_but_encrypted_members_are() {
        let aes = "http://www.w3.org/2001/04/xmlenc#aes128-cbc";
        let doc = format!(
            r#"<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
               xmlns:enc="http://www.w3.org/2001/04/xmlenc#">{}{}{}</encryption>"#,
            entry("OEBPS/fonts/a.otf", FONT_OBFUSCATION[0]),
            entry("OEBPS/fonts/b.ttf", FONT_OBFUSCATION[1]),
            entry("OEBPS/Text/Ch%201.xhtml", aes),
        );
        let listed = encrypted_members(&doc).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed["oebps/text/ch 1.xhtml"], aes);
    }

    #[test]
    fn only_encrypted_content_documents_make_drm() {
        let mut package = Package::default();
        for (id, path, media_type) in [
            ("img", "OEBPS/a.png", "image/png"),
            ("c1", "OEBPS/Text/ch 1.xhtml", "application/xhtml+xml"),
        ] {
            let item = Item {
                path: path.into(),
                media_type: media_type.into(),
                properties: String::new(),
            };
            package.manifest.insert(id.into(), item);
            package.manifest_order.push(id.into());
        }
        let aes = "aes".to_string();
        let images = HashMap::from([("oebps/a.png".to_string(), aes.clone())]);
        assert_eq!(encrypted_content(&images, &package), None);
        let chapters = HashMap::from([("oebps/text/ch 1.xhtml".to_string(), aes.clone())]);
        let (item, algorithm) = encrypted_content(&chapters, &package).unwrap();
        assert_eq!(
            (item.path.as_str(), algorithm),
            ("OEBPS/Text/ch 1.xhtml", &aes)
        );
    }
}
