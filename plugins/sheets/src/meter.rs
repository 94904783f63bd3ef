//! A reader over a ZIP package's bytes that bounds how much XML the readers
//! inflate and scan, whoever drives it.
//!
//! calamine inflates a worksheet itself and walks past empty cells without
//! returning, so the cell budget cannot stop a sheet of a million rows of
//! formatted blanks. Time goes with the bytes inflated, and a member's
//! inflated bytes are its packed bytes times its ratio (declared size over
//! packed size, both from the central directory). So every byte read from
//! the package is charged at the ratio of the member it lies in, and once
//! [`MAX_INFLATED_BYTES`] are charged further reads fail: the reader in
//! progress stops with an error, and [`Meter::spent`] tells the caller
//! that this was the bound, not damage.

use std::cell::Cell;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::rc::Rc;

/// Most bytes of XML inflated from one package: some 1.5 s of scanning
/// natively (a sheet of formatted blanks), 3-4 s in WebAssembly.
pub const MAX_INFLATED_BYTES: u64 = 160 << 20;

/// The packed data of one member and how many times it inflates.
#[derive(Debug, Clone, Copy)]
pub struct Packed {
    /// Offset of the member's first packed byte.
    pub start: u64,
    /// Offset just past its last packed byte.
    pub end: u64,
    /// Declared size over packed size, rounded up (at least 1).
    pub ratio: u64,
}

/// What was charged to one package.
#[derive(Debug, Clone, Default)]
pub struct Meter {
    charged: Rc<Cell<u64>>,
}

impl Meter {
    /// Whether the package's bound was reached.
    pub fn spent(&self) -> bool {
        self.charged.get() > MAX_INFLATED_BYTES
    }
}

/// The package's bytes, read under a [`Meter`].
pub struct Metered<'a> {
    bytes: Cursor<&'a [u8]>,
    members: Rc<[Packed]>,
    meter: Meter,
}

impl<'a> Metered<'a> {
    /// A reader over `bytes` whose `members` (sorted by start) are charged
    /// at their ratios, to `meter`.
    pub fn new(bytes: &'a [u8], members: Rc<[Packed]>, meter: &Meter) -> Metered<'a> {
        Metered {
            bytes: Cursor::new(bytes),
            members,
            meter: meter.clone(),
        }
    }

    /// The inflation ratio of the member holding byte `at` (1 outside any).
    fn ratio_at(&self, at: u64) -> u64 {
        let i = self.members.partition_point(|m| m.start <= at);
        match i.checked_sub(1).and_then(|i| self.members.get(i)) {
            Some(m) if at < m.end => m.ratio,
            _ => 1,
        }
    }
}

impl Read for Metered<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.meter.spent() {
            return Err(io::Error::other(format!(
                "the bound of {} MiB of XML read per file was reached",
                MAX_INFLATED_BYTES >> 20
            )));
        }
        let at = self.bytes.position();
        let n = self.bytes.read(buf)?;
        let cost = (n as u64).saturating_mul(self.ratio_at(at));
        let charged = &self.meter.charged;
        charged.set(charged.get().saturating_add(cost));
        Ok(n)
    }
}

impl Seek for Metered<'_> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.bytes.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_charged_at_their_members_ratio_until_the_bound() {
        let bytes = vec![0u8; 1 << 20];
        let members: Rc<[Packed]> = Rc::from(vec![
            Packed {
                start: 1000,
                end: 2000,
                ratio: 300,
            },
            Packed {
                start: 2000,
                end: 1 << 20,
                ratio: 1000,
            },
        ]);
        let meter = Meter::default();
        let mut r = Metered::new(&bytes, members, &meter);
        let mut buf = vec![0u8; 1000];
        r.read_exact(&mut buf).unwrap();
        assert_eq!(meter.charged.get(), 1000);
        r.read_exact(&mut buf).unwrap();
        assert_eq!(meter.charged.get(), 1000 + 300_000);
        let mut rest = Vec::new();
        let err = r.read_to_end(&mut rest).unwrap_err();
        assert!(err.to_string().contains("160 MiB"));
        assert!(meter.spent());
    }
}
