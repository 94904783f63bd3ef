//! The File Information Block at the start of a legacy Word document's
//! `WordDocument` stream: the format check (Word 97 or later, not
//! encrypted), which table stream holds the document's tables, each
//! story's length in characters, and where the other structures lie.

use kebab_plugin_sdk::PluginError;

use crate::bytes::Bytes;

/// `wIdent` of a Word 97+ file.
const WORD97_IDENT: u16 = 0xA5EC;
/// The oldest `nFib` of the Word 97 format.
const WORD97_NFIB: u16 = 0x00C0;
/// FIB flags.
const F_ENCRYPTED: u16 = 0x0100;
const F_WHICH_TABLE: u16 = 0x0200;
const F_OBFUSCATED: u16 = 0x8000;

/// The parts of the File Information Block this reader needs.
pub struct Fib {
    flags: u16,
    /// Where `fibRgLw` (story lengths) starts.
    rg_lw: usize,
    /// Where `fibRgFcLcb` (offset/length pairs) starts, and how many
    /// pairs it has.
    rg_fc_lcb: usize,
    pairs: usize,
}

impl Fib {
    /// Read and check the FIB at the start of the `WordDocument` stream.
    pub fn read(word: &[u8]) -> Result<Fib, PluginError> {
        let ident = word.u16_at(0).ok_or_else(|| {
            PluginError::Malformed("legacy Word .doc with an empty WordDocument stream".into())
        })?;
        let nfib = word.u16_at(2).unwrap_or(0);
        if ident != WORD97_IDENT || nfib < WORD97_NFIB {
            return Err(PluginError::Unsupported(
                "a Word 6/95 (or older) .doc: open it in Word or LibreOffice and save as .docx"
                    .into(),
            ));
        }
        let flags = word.u16_at(0x0A).unwrap_or(0);
        if flags & (F_ENCRYPTED | F_OBFUSCATED) != 0 {
            return Err(PluginError::Unsupported(
                "encrypted (password-protected) Word .doc file: remove the password and ingest again"
                    .into(),
            ));
        }
        let truncated = || PluginError::Malformed("legacy Word .doc with a truncated FIB".into());
        let csw = usize::from(word.u16_at(32).ok_or_else(truncated)?);
        let lw_count_at = 34 + csw * 2;
        let cslw = usize::from(word.u16_at(lw_count_at).ok_or_else(truncated)?);
        let rg_lw = lw_count_at + 2;
        let pairs_at = rg_lw + cslw * 4;
        let pairs = usize::from(word.u16_at(pairs_at).ok_or_else(truncated)?);
        Ok(Fib {
            flags,
            rg_lw,
            rg_fc_lcb: pairs_at + 2,
            pairs,
        })
    }

    /// The name of the stream that holds the document's tables.
    pub fn table_stream(&self) -> &'static str {
        if self.flags & F_WHICH_TABLE != 0 {
            "1Table"
        } else {
            "0Table"
        }
    }

    /// The length in characters of story `index` of `fibRgLw`.
    pub fn story_length(&self, word: &[u8], index: usize) -> usize {
        word.u32_at(self.rg_lw + index * 4).unwrap_or(0) as usize
    }

    /// The offset and length of pair `index` of `fibRgFcLcb`.
    pub fn pair(&self, word: &[u8], index: usize) -> (usize, usize) {
        if index >= self.pairs {
            return (0, 0);
        }
        let at = self.rg_fc_lcb + index * 8;
        let value = |at| word.u32_at(at).unwrap_or(0) as usize;
        (value(at), value(at + 4))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIB of `nfib` with `flags` and empty tables.
    fn fib(ident: u16, nfib: u16, flags: u16) -> Vec<u8> {
        let mut bytes = vec![0u8; 40];
        bytes[0..2].copy_from_slice(&ident.to_le_bytes());
        bytes[2..4].copy_from_slice(&nfib.to_le_bytes());
        bytes[10..12].copy_from_slice(&flags.to_le_bytes());
        bytes
    }

    #[test]
    fn encrypted_obfuscated_and_old_files_are_refused() {
        for flags in [F_ENCRYPTED, F_OBFUSCATED] {
            let err = Fib::read(&fib(WORD97_IDENT, 0x00C1, flags)).err();
            assert!(matches!(err, Some(PluginError::Unsupported(m)) if m.contains("encrypted")));
        }
        let err = Fib::read(&fib(0xA5DC, 0x0065, 0)).err();
        assert!(matches!(err, Some(PluginError::Unsupported(m)) if m.contains("Word 6/95")));
        let fib = Fib::read(&fib(WORD97_IDENT, 0x00C1, F_WHICH_TABLE)).unwrap();
        assert_eq!(fib.table_stream(), "1Table");
        assert_eq!(fib.pair(&[], 33), (0, 0));
    }
}
