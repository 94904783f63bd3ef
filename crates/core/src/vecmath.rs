//! Scaling a vector to unit length: what the embedder does to every
//! vector it returns, and what tests of the vector store do to theirs.

/// `v` scaled to unit length (zero vectors stay zero).
pub fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_vectors_have_unit_length() {
        let v = normalise(vec![3.0, 4.0]);
        assert_eq!(v, vec![0.6, 0.8]);
        let length: f32 = v.iter().map(|x| x * x).sum();
        assert!((length - 1.0).abs() < 1e-6);
        assert_eq!(normalise(vec![0.0, 0.0]), vec![0.0, 0.0]);
    }
}
