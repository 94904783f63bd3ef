//! Which characters of a legacy Word document are not shown: runs whose
//! character properties (`CHPX`, in the formatted disk pages the
//! `PlcBteChpx` lists) mark them hidden (`sprmCFVanish`) or deleted in a
//! tracked change (`sprmCFRMarkDel`). Positions are byte offsets in the
//! `WordDocument` stream.

use crate::bytes::Bytes;

/// `sprmCFRMarkDel` and `sprmCFVanish`.
const SPRM_DELETED: u16 = 0x0800;
const SPRM_HIDDEN: u16 = 0x083C;
/// Size of a formatted disk page.
const PAGE: usize = 512;
/// Most pages read.
const MAX_PAGES: usize = 1 << 16;

/// Byte ranges of text that is not shown, sorted.
#[derive(Debug, Default)]
pub struct Unseen {
    ranges: Vec<(usize, usize)>,
}

impl Unseen {
    /// The unseen runs of the document, from the `PlcBteChpx` at
    /// `(offset, length)` of the table stream (none when it cannot be
    /// read: hiding is a nicety, never a reason to fail).
    pub fn read(word: &[u8], table: &[u8], (offset, length): (usize, usize)) -> Unseen {
        let Some(plc) = table.get(offset..offset.saturating_add(length)) else {
            return Unseen::default();
        };
        let pages = (plc.len().saturating_sub(4) / 8).min(MAX_PAGES);
        let mut ranges = Vec::new();
        for i in 0..pages {
            let Some(pn) = plc.u32_at((pages + 1) * 4 + i * 4) else {
                break;
            };
            let start = (pn & 0x003F_FFFF) as usize * PAGE;
            if let Some(page) = word.get(start..start + PAGE) {
                page_ranges(page, &mut ranges);
            }
        }
        Unseen::from_ranges(ranges)
    }

    /// Unseen byte ranges `start..end`.
    pub fn from_ranges(mut ranges: Vec<(usize, usize)>) -> Unseen {
        ranges.sort_unstable();
        Unseen { ranges }
    }

    /// Whether the character at byte `fc` is not shown.
    pub fn contains(&self, fc: usize) -> bool {
        let i = self.ranges.partition_point(|(start, _)| *start <= fc);
        i > 0 && self.ranges[i - 1].1 > fc
    }
}

/// The unseen runs of one character formatting page.
fn page_ranges(page: &[u8], out: &mut Vec<(usize, usize)>) {
    let runs = usize::from(page[PAGE - 1]);
    for run in 0..runs {
        let (Some(start), Some(end)) = (page.u32_at(run * 4), page.u32_at(run * 4 + 4)) else {
            break;
        };
        let Some(&word_offset) = page.get((runs + 1) * 4 + run) else {
            break;
        };
        let at = usize::from(word_offset) * 2;
        if at == 0 {
            continue;
        }
        let size = usize::from(page.get(at).copied().unwrap_or(0));
        let grpprl = page.get(at + 1..(at + 1 + size).min(PAGE)).unwrap_or(&[]);
        if hides(grpprl) {
            out.push((start as usize, end as usize));
        }
    }
}

/// Whether a property list turns hiding or deletion on.
fn hides(grpprl: &[u8]) -> bool {
    let mut at = 0usize;
    while let Some(sprm) = grpprl.u16_at(at) {
        let operand = at + 2;
        let size = match sprm >> 13 {
            0 | 1 => 1,
            2 | 4 | 5 => 2,
            3 => 4,
            7 => 3,
            _ => usize::from(grpprl.get(operand).copied().unwrap_or(0)) + 1,
        };
        if matches!(sprm, SPRM_DELETED | SPRM_HIDDEN)
            && matches!(grpprl.get(operand), Some(0x01 | 0x81))
        {
            return true;
        }
        at = operand + size;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_answer_membership() {
        let unseen = Unseen::from_ranges(vec![(10, 20), (0, 2)]);
        assert!(unseen.contains(0));
        assert!(!unseen.contains(2));
        assert!(unseen.contains(19));
        assert!(!unseen.contains(20));
    }

    #[test]
    fn property_lists() {
        assert!(hides(&[0x3C, 0x08, 0x01]));
        assert!(hides(&[0x35, 0x08, 0x01, 0x00, 0x08, 0x81]));
        assert!(!hides(&[0x3C, 0x08, 0x00]));
        assert!(!hides(&[0x00]));
    }

    #[test]
    fn a_page_marks_its_hidden_runs() {
        let mut page = vec![0u8; PAGE];
        for (i, fc) in [100u32, 110, 120].iter().enumerate() {
            page[i * 4..i * 4 + 4].copy_from_slice(&fc.to_le_bytes());
        }
        page[12] = 0;
        page[13] = 100;
        page[200..204].copy_from_slice(&[3, 0x3C, 0x08, 0x01]);
        page[PAGE - 1] = 2;
        let mut ranges = Vec::new();
        page_ranges(&page, &mut ranges);
        assert_eq!(ranges, vec![(110, 120)]);
    }
}
