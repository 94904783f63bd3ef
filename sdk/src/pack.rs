//! Packing a section's pieces into chunks: as many whole pieces as fit a
//! token target (a piece larger than the target is a chunk alone), each
//! chunk after the first starting again with the previous one's trailing
//! prose worth at most the overlap. One rule for every heading-aware
//! chunker (the SDK's `heading_chunker`, the office plugin's).

/// A piece a chunker packs whole.
pub trait Piece: Clone {
    /// Its size in tokens.
    fn tokens(&self) -> u32;
    /// Whether it may be repeated at the start of the next chunk (prose:
    /// not code, not tables, not headings).
    fn repeatable(&self) -> bool;
}

/// Pack `pieces` into chunks of at most `target` tokens, consecutive chunks
/// sharing trailing repeatable pieces worth at most `overlap` tokens
/// (never a whole chunk); `emit` makes each chunk of its pieces.
pub fn pack<P: Piece>(
    pieces: impl IntoIterator<Item = P>,
    target: u32,
    overlap: u32,
    mut emit: impl FnMut(&[P]),
) {
    let mut current: Vec<P> = Vec::new();
    let mut fresh = 0usize;
    let mut tokens = 0u32;
    for piece in pieces {
        if fresh > 0 && tokens.saturating_add(piece.tokens()) > target {
            emit(&current);
            current = overlap_tail(&current, overlap);
            tokens = current.iter().map(Piece::tokens).sum();
            fresh = 0;
        }
        tokens = tokens.saturating_add(piece.tokens());
        current.push(piece);
        fresh += 1;
    }
    if fresh > 0 {
        emit(&current);
    }
}

/// The trailing repeatable pieces of an emitted chunk worth at most
/// `overlap` tokens, never the whole chunk.
fn overlap_tail<P: Piece>(pieces: &[P], overlap: u32) -> Vec<P> {
    let mut taken = 0usize;
    let mut tokens = 0u32;
    for p in pieces.iter().rev() {
        if !p.repeatable() || tokens + p.tokens() > overlap || taken + 1 >= pieces.len() {
            break;
        }
        tokens += p.tokens();
        taken += 1;
    }
    pieces[pieces.len() - taken..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct P(u32, bool);

    impl Piece for P {
        fn tokens(&self) -> u32 {
            self.0
        }
        fn repeatable(&self) -> bool {
            self.1
        }
    }

    fn packed(pieces: Vec<P>, target: u32, overlap: u32) -> Vec<Vec<P>> {
        let mut out = Vec::new();
        pack(pieces, target, overlap, |run| out.push(run.to_vec()));
        out
    }

    #[test]
    fn pieces_fill_chunks_and_prose_overlaps() {
        let runs = packed(
            vec![P(5, true), P(5, true), P(5, false), P(20, true)],
            10,
            5,
        );
        assert_eq!(
            runs,
            vec![
                vec![P(5, true), P(5, true)],
                vec![P(5, true), P(5, false)],
                vec![P(20, true)],
            ]
        );
        // A table (not repeatable) is never carried over; nothing is lost.
        assert_eq!(packed(vec![P(8, false), P(8, true)], 10, 10).len(), 2);
        assert!(packed(vec![], 10, 5).is_empty());
    }
}
