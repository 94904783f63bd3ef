//! Reading little-endian integers out of binary structures (OLE property
//! sets, Word's FIB and piece table, PowerPoint records) without ever
//! indexing past the data: a read past the end is `None`.

/// Little-endian readers over a byte slice that answer `None` past its
/// end.
pub trait Bytes {
    /// The little-endian `u16` at byte `at`.
    fn u16_at(&self, at: usize) -> Option<u16>;
    /// The little-endian `u32` at byte `at`.
    fn u32_at(&self, at: usize) -> Option<u32>;
}

impl Bytes for [u8] {
    fn u16_at(&self, at: usize) -> Option<u16> {
        let b = self.get(at..at.checked_add(2)?)?;
        Some(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32_at(&self, at: usize) -> Option<u32> {
        let b = self.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_stop_at_the_end() {
        let b: &[u8] = &[1, 0, 0, 0];
        assert_eq!(b.u32_at(0), Some(1));
        assert_eq!(b.u32_at(1), None);
        assert_eq!(b.u16_at(usize::MAX), None);
    }
}
