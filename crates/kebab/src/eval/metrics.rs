//! Retrieval metrics: hit@k, MRR, recall@k over documents, precision@k
//! over chunks, and nDCG; percentiles of latencies.
//!
//! Every function takes the ranked result (best first) and the judgements
//! of one query; aggregates are plain means over the queries for which a
//! metric is defined.

use std::collections::{HashMap, HashSet};

/// hit@k: whether any relevant item is in the first `k`.
pub fn hit_at_k(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    f64::from(u8::from(
        ranked.iter().take(k).any(|r| relevant.contains(r)),
    ))
}

/// Reciprocal rank of the first relevant item within the first `k` (0
/// when none).
pub fn reciprocal_rank(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    ranked
        .iter()
        .take(k)
        .position(|r| relevant.contains(r))
        .map_or(0.0, |i| 1.0 / (i as f64 + 1.0))
}

/// recall@k: share of the relevant items found in the first `k`.
pub fn recall_at_k(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    let found: HashSet<&String> = ranked
        .iter()
        .take(k)
        .filter(|r| relevant.contains(*r))
        .collect();
    found.len() as f64 / relevant.len() as f64
}

/// precision@k with a fixed denominator `k` (a short list costs
/// precision, as the metric is defined here).
pub fn precision_at_k(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    ranked
        .iter()
        .take(k)
        .filter(|r| relevant.contains(*r))
        .count() as f64
        / k as f64
}

/// nDCG@k with graded gains (`gains[item]`, missing = 0), the standard
/// `gain / log2(rank + 1)` discount, normalised by the ideal ordering.
pub fn ndcg_at_k(ranked: &[String], gains: &HashMap<String, f64>, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, r)| gains.get(r).copied().unwrap_or(0.0) / (i as f64 + 2.0).log2())
        .sum();
    let mut ideal: Vec<f64> = gains.values().copied().filter(|g| *g > 0.0).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| g / (i as f64 + 2.0).log2())
        .sum();
    if idcg == 0.0 { 0.0 } else { dcg / idcg }
}

/// Items in order of first appearance (chunk hits → their documents).
pub fn first_occurrences(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|i| seen.insert(i.clone()))
        .collect()
}

/// Mean of the values that are defined.
pub fn mean(values: &[Option<f64>]) -> Option<f64> {
    let defined: Vec<f64> = values.iter().flatten().copied().collect();
    (!defined.is_empty()).then(|| defined.iter().sum::<f64>() / defined.len() as f64)
}

/// The `p`-th percentile of `values` by nearest rank (0 when empty).
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 10.0);
        assert_eq!(percentile(&v, 95.0), 19.0);
        assert_eq!(percentile(&v, 100.0), 20.0);
        assert_eq!(percentile(&[7.0], 50.0), 7.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn set(v: &[&str]) -> HashSet<String> {
        s(v).into_iter().collect()
    }

    #[test]
    fn rank_metrics_on_a_hand_worked_example() {
        let ranked = s(&["a", "b", "c", "d"]);
        let rel = set(&["c", "x"]);
        assert_eq!(hit_at_k(&ranked, &rel, 2), 0.0);
        assert_eq!(hit_at_k(&ranked, &rel, 3), 1.0);
        assert!((reciprocal_rank(&ranked, &rel, 10) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(reciprocal_rank(&ranked, &rel, 2), 0.0);
        assert_eq!(recall_at_k(&ranked, &rel, 4), 0.5);
        assert_eq!(precision_at_k(&ranked, &rel, 10), 0.1);
        assert_eq!(precision_at_k(&ranked, &rel, 3), 1.0 / 3.0);
    }

    #[test]
    fn ndcg_matches_the_textbook_formula() {
        let gains: HashMap<String, f64> = [("a".to_string(), 2.0), ("c".to_string(), 1.0)].into();
        // Ranked a, b, c: DCG = 2/log2(2) + 0 + 1/log2(4) = 2.5; ideal a, c:
        // 2 + 1/log2(3).
        let want = 2.5 / (2.0 + 1.0 / 3f64.log2());
        let got = ndcg_at_k(&s(&["a", "b", "c"]), &gains, 10);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        assert_eq!(ndcg_at_k(&s(&["a", "c"]), &gains, 10), 1.0);
        assert_eq!(ndcg_at_k(&s(&["b"]), &gains, 10), 0.0);
        assert_eq!(ndcg_at_k(&s(&["a"]), &HashMap::new(), 10), 0.0);
    }

    #[test]
    fn documents_keep_their_first_rank_and_means_skip_undefined() {
        assert_eq!(
            first_occurrences(s(&["d1", "d2", "d1", "d3"])),
            s(&["d1", "d2", "d3"])
        );
        assert_eq!(mean(&[Some(1.0), None, Some(0.0)]), Some(0.5));
        assert_eq!(mean(&[None]), None);
    }
}
