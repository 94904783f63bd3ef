//! How the lexical and vector channels of a hybrid search become one score.
//!
//! - **RRF** (normalised reciprocal rank fusion): only ranks count,
//!   Σ 1 / (k + rank) divided by its ceiling 2 / (k + 1).
//! - **Blend**: a convex combination of the channels' *scores*, each
//!   normalised per query over that channel's candidates (min–max to 0–1,
//!   or z-scores), `weight` on the lexical side. A candidate one channel
//!   did not return gets that channel's floor (0 for min–max, the lowest
//!   z-score for z). Unlike RRF it keeps how far ahead a top hit is. A
//!   channel whose scores do not spread (a single hit: a term only one
//!   chunk holds) borrows the other channel's best-to-floor span, so a lone
//!   exact match is not normalised to nothing.
//! - **Small pools.** Below [`SMALL_POOL`] candidates a channel's mean and
//!   spread say nothing (two scores always z-normalise to exactly ±1 and
//!   min–max to 1 and 0, so two channels that disagree fuse every
//!   candidate to the same value): such a channel is normalised against
//!   its own scale instead: each score as a share of its best (BM25 and
//!   cosine both have their natural zero) placed on the other channel's
//!   best-to-floor span (as a channel that does not spread is), a
//!   candidate it did not return at the floor. Fused scores in one cell
//!   of the [`SCORE_EPSILON`] grid are equal, and equal scores are ordered by the better single-channel rank,
//!   then the chunk id ([`crate::search::rank`]), never by chance.
//!
//! Which one is the default, and with what weight, is decided by
//! measurement on a held-out split (BENCHMARKS.md, "Fusion").

use std::collections::HashMap;

/// Fewest candidates a channel needs for its scores to be normalised over
/// the pool (z-scores, min–max); below it they are a share of the
/// channel's best score. With two, z-scores and min–max carry no
/// magnitude at all; with three, one outlier still decides the spread.
pub const SMALL_POOL: usize = 4;

/// The grid hits' scores are compared on: scores in one cell are a tie,
/// since what floating-point rounding leaves (a z-score of ±1 computed
/// from floats, a cosine whose last bits vary between runs) must not order
/// results.
pub const SCORE_EPSILON: f64 = 1e-9;

/// A fusion method and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Normalised RRF with constant `k`.
    Rrf { k: u32 },
    /// `weight · lexical + (1 − weight) · vector` of normalised scores.
    Blend { weight: f64, norm: Norm },
}

/// Per-query score normalisation for [`Fusion::Blend`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    /// `(s − min) / (max − min)` over the channel's candidates.
    MinMax,
    /// `(s − mean) / std` over the channel's candidates.
    ZScore,
}

/// A fusion spec that does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "unknown fusion `{0}`: use rrf, rrf:K, blend, blend:W or blend-z:W (W, the lexical weight, in 0–1)"
)]
pub struct UnknownFusion(pub String);

impl Fusion {
    /// Parse `rrf`, `rrf:60`, `blend`, `blend:0.3`, `blend-z:0.5`;
    /// parameters left out come from `default`'s when it is the same kind,
    /// else from the built-in defaults (k 60, weight 0.5).
    pub fn parse(spec: &str, default: Fusion) -> Result<Fusion, UnknownFusion> {
        let bad = || UnknownFusion(spec.to_string());
        let (name, param) = match spec.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (spec, None),
        };
        let default_weight = match default {
            Fusion::Blend { weight, .. } => weight,
            Fusion::Rrf { .. } => 0.5,
        };
        let weight = |p: Option<&str>| -> Result<f64, UnknownFusion> {
            match p {
                None => Ok(default_weight),
                Some(p) => p
                    .parse::<f64>()
                    .ok()
                    .filter(|w| (0.0..=1.0).contains(w))
                    .ok_or_else(bad),
            }
        };
        match name {
            "rrf" => Ok(Fusion::Rrf {
                k: match param {
                    None => match default {
                        Fusion::Rrf { k } => k,
                        Fusion::Blend { .. } => 60,
                    },
                    Some(p) => p.parse().map_err(|_| bad())?,
                },
            }),
            "blend" => Ok(Fusion::Blend {
                weight: weight(param)?,
                norm: Norm::MinMax,
            }),
            "blend-z" => Ok(Fusion::Blend {
                weight: weight(param)?,
                norm: Norm::ZScore,
            }),
            _ => Err(bad()),
        }
    }

    /// The name of the fused score (`search_hit.v1.score_kind`).
    pub fn score_kind(self) -> &'static str {
        match self {
            Fusion::Rrf { .. } => "rrf",
            Fusion::Blend {
                norm: Norm::MinMax, ..
            } => "blend",
            Fusion::Blend {
                norm: Norm::ZScore, ..
            } => "blend_z",
        }
    }

    /// The spec [`Fusion::parse`] reads back (`rrf:60`, `blend:0.30`).
    pub fn label(self) -> String {
        match self {
            Fusion::Rrf { k } => format!("rrf:{k}"),
            Fusion::Blend { weight, norm } => format!(
                "{}:{weight:.2}",
                if norm == Norm::MinMax {
                    "blend"
                } else {
                    "blend-z"
                }
            ),
        }
    }
}

/// One candidate's place in each channel: `(rank, score)` when the channel
/// returned it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChannelHits {
    pub lexical: Option<(u32, f64)>,
    pub vector: Option<(u32, f64)>,
}

/// Fused scores of `candidates` (higher is better).
pub fn fuse(fusion: Fusion, candidates: &HashMap<String, ChannelHits>) -> HashMap<String, f64> {
    match fusion {
        Fusion::Rrf { k } => candidates
            .iter()
            .map(|(id, c)| {
                let ranks = [c.lexical.map(|l| l.0), c.vector.map(|v| v.0)];
                (id.clone(), rrf_score(&ranks, k))
            })
            .collect(),
        Fusion::Blend { weight, norm } => {
            let lexical = Normaliser::over(candidates.values().filter_map(|c| c.lexical), norm);
            let vector = Normaliser::over(candidates.values().filter_map(|c| c.vector), norm);
            // A channel whose scores do not spread (one hit, or all equal)
            // has no scale of its own: its hits count as far ahead of its
            // misses as the other channel's best is ahead of that channel's
            // floor. A lone exact match (a term in one chunk only) then
            // weighs as much as the top hit of the other channel instead
            // of nothing.
            let lexical_span = lexical.span().or(vector.span()).unwrap_or((1.0, 0.0));
            let vector_span = vector.span().or(lexical.span()).unwrap_or((1.0, 0.0));
            candidates
                .iter()
                .map(|(id, c)| {
                    let l = lexical.apply(c.lexical.map(|h| h.1), lexical_span);
                    let v = vector.apply(c.vector.map(|h| h.1), vector_span);
                    (id.clone(), weight * l + (1.0 - weight) * v)
                })
                .collect()
        }
    }
}

/// Normalised RRF: Σ over channels of 1 / (k + rank), divided by its
/// ceiling 2 / (k + 1), so a chunk ranked first by both channels scores 1.0
/// and one ranked first by a single channel 0.5.
pub fn rrf_score(ranks: &[Option<u32>], k: u32) -> f64 {
    let k = k as f64;
    let raw: f64 = ranks.iter().flatten().map(|&r| 1.0 / (k + r as f64)).sum();
    raw / (2.0 / (k + 1.0))
}

/// One channel's normalisation for one query.
struct Normaliser {
    norm: Norm,
    /// Fewer than [`SMALL_POOL`] scores: each is a share of `high`.
    small: bool,
    low: f64,
    high: f64,
    /// max − min for min–max, the standard deviation for z.
    spread: f64,
    /// The mean (z) — unused for min–max.
    centre: f64,
}

impl Normaliser {
    fn over(hits: impl Iterator<Item = (u32, f64)>, norm: Norm) -> Normaliser {
        // Sorted, so the sums below (and the fused scores) do not depend on
        // the order candidates come out of a hash map: the same query gives
        // bit-identical scores in every process.
        let mut scores: Vec<f64> = hits.map(|h| h.1).collect();
        scores.sort_by(f64::total_cmp);
        let n = scores.len().max(1) as f64;
        let low = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let high = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = scores.iter().sum::<f64>() / n;
        let var = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
        Normaliser {
            norm,
            small: scores.len() < SMALL_POOL,
            low,
            high,
            spread: match norm {
                Norm::MinMax => high - low,
                Norm::ZScore => var.sqrt(),
            },
            centre: mean,
        }
    }

    /// `(best, floor)`: the normalised score of the channel's best hit and
    /// the one a candidate the channel did not return gets; `None` when the
    /// scores do not spread.
    fn span(&self) -> Option<(f64, f64)> {
        if self.small {
            return None;
        }
        (self.spread > 0.0).then(|| match self.norm {
            Norm::MinMax => (1.0, 0.0),
            Norm::ZScore => (
                (self.high - self.centre) / self.spread,
                (self.low - self.centre) / self.spread,
            ),
        })
    }

    /// The normalised score; a missing score gets the channel's floor. When
    /// the scores do not spread, `(hit, miss)` gives the two values; in a
    /// small pool a score's share of the best places it between them.
    fn apply(&self, score: Option<f64>, (hit, miss): (f64, f64)) -> f64 {
        if self.small {
            return score.map_or(miss, |s| {
                let share = if self.high > 0.0 {
                    (s / self.high).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                miss + share * (hit - miss)
            });
        }
        if self.spread <= 0.0 {
            return if score.is_some() { hit } else { miss };
        }
        match (score, self.norm) {
            (None, Norm::MinMax) => 0.0,
            (None, Norm::ZScore) => (self.low - self.centre) / self.spread,
            (Some(s), Norm::MinMax) => (s - self.low) / self.spread,
            (Some(s), Norm::ZScore) => (s - self.centre) / self.spread,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(id, lexical (rank, score), vector (rank, score))`.
    type Row<'a> = (&'a str, Option<(u32, f64)>, Option<(u32, f64)>);

    fn hits(rows: &[Row<'_>]) -> HashMap<String, ChannelHits> {
        rows.iter()
            .map(|(id, l, v)| {
                (
                    id.to_string(),
                    ChannelHits {
                        lexical: *l,
                        vector: *v,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn two_candidates_that_the_channels_rank_apart_keep_their_magnitudes() {
        // Lexical prefers a (10 vs 6), vector prefers b (0.8 vs 0.5): over
        // the pool, z-scores would be exactly ±1 and min–max 1/0, fusing
        // both to one value; as shares of each channel's best, a leads.
        let two = hits(&[
            ("a", Some((1, 10.0)), Some((2, 0.5))),
            ("b", Some((2, 6.0)), Some((1, 0.8))),
        ]);
        for norm in [Norm::ZScore, Norm::MinMax] {
            let fused = fuse(Fusion::Blend { weight: 0.5, norm }, &two);
            assert!((fused["a"] - 0.8125).abs() < 1e-12, "{norm:?} {fused:?}");
            assert!((fused["b"] - 0.8).abs() < 1e-12, "{norm:?} {fused:?}");
        }
        // Mirror images tie exactly (search orders ties by rank, then id).
        let mirrored = hits(&[
            ("a", Some((1, 10.0)), Some((2, 0.4))),
            ("b", Some((2, 4.0)), Some((1, 1.0))),
        ]);
        let fused = fuse(
            Fusion::Blend {
                weight: 0.5,
                norm: Norm::ZScore,
            },
            &mirrored,
        );
        assert_eq!(fused["a"], fused["b"]);
        assert!(fused["a"] > 0.5);
    }

    #[test]
    fn three_candidates_are_shares_of_the_best_and_a_miss_is_the_floor() {
        let three = hits(&[
            ("a", Some((1, 8.0)), None),
            ("b", Some((2, 4.0)), Some((1, 0.9))),
            ("c", Some((3, 2.0)), Some((2, 0.3))),
        ]);
        let fused = fuse(
            Fusion::Blend {
                weight: 0.5,
                norm: Norm::ZScore,
            },
            &three,
        );
        // Lexical shares 1, 1/2, 1/4; vector: a miss (0), 1, 1/3.
        assert!((fused["a"] - 0.5).abs() < 1e-12, "{fused:?}");
        assert!((fused["b"] - 0.75).abs() < 1e-12, "{fused:?}");
        assert!(
            (fused["c"] - (0.125 + 1.0 / 6.0)).abs() < 1e-12,
            "{fused:?}"
        );
    }

    #[test]
    fn a_small_pool_sits_on_the_other_channels_span() {
        // Two lexical hits beside a vector pool that z-normalises: the
        // lexical shares (1 and 0.5) are placed between the vector
        // channel's best and floor z-scores, a lexical miss at the floor.
        let mut rows: Vec<Row<'_>> = vec![
            ("a", Some((1, 10.0)), Some((5, 0.2))),
            ("b", Some((2, 5.0)), Some((4, 0.3))),
        ];
        let names = ["c", "d", "e"];
        for (i, name) in names.iter().enumerate() {
            rows.push((name, None, Some((3 - i as u32, 0.4 + 0.1 * i as f64))));
        }
        let fused = fuse(
            Fusion::Blend {
                weight: 0.5,
                norm: Norm::ZScore,
            },
            &hits(&rows),
        );
        let vector: Vec<f64> = vec![0.2, 0.3, 0.4, 0.5, 0.6];
        let mean = vector.iter().sum::<f64>() / 5.0;
        let sd = (vector.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 5.0).sqrt();
        let z = |v: f64| (v - mean) / sd;
        let (best, floor) = (z(0.6), z(0.2));
        assert!(
            (fused["a"] - 0.5 * (best + z(0.2))).abs() < 1e-9,
            "{fused:?}"
        );
        assert!((fused["b"] - 0.5 * (floor + 0.5 * (best - floor) + z(0.3))).abs() < 1e-9);
        assert!(
            (fused["e"] - 0.5 * (floor + best)).abs() < 1e-9,
            "{fused:?}"
        );
    }

    #[test]
    fn blended_scores_do_not_depend_on_candidate_order() {
        // Scores of very different magnitudes, so a different summation
        // order would change the last bits.
        let entries: Vec<(String, f64, f64)> = (0..200u32)
            .map(|i| {
                let x = f64::from(i);
                (
                    format!("c{i}"),
                    (x * 1.37).powi(3) + 1e-9 * x,
                    1.0 / (x + 0.3),
                )
            })
            .collect();
        let fused = |order: &mut dyn Iterator<Item = &(String, f64, f64)>| {
            let c: HashMap<String, ChannelHits> = order
                .enumerate()
                .map(|(i, (id, l, v))| {
                    let rank = i as u32 + 1;
                    let hit = ChannelHits {
                        lexical: Some((rank, *l)),
                        vector: Some((rank, *v)),
                    };
                    (id.clone(), hit)
                })
                .collect();
            let weight = 0.5;
            let f = fuse(
                Fusion::Blend {
                    weight,
                    norm: Norm::ZScore,
                },
                &c,
            );
            let mut bits: Vec<(String, u64)> =
                f.into_iter().map(|(id, s)| (id, s.to_bits())).collect();
            bits.sort();
            bits
        };
        let first = fused(&mut entries.iter());
        for _ in 0..10 {
            assert_eq!(fused(&mut entries.iter().rev()), first);
            assert_eq!(fused(&mut entries.iter()), first);
        }
    }

    #[test]
    fn rrf_matches_the_formula_and_its_ceiling() {
        assert_eq!(rrf_score(&[Some(1), Some(1)], 60), 1.0);
        assert!((rrf_score(&[Some(1), None], 60) - 0.5).abs() < 1e-12);
        let expected = (1.0 / 63.0 + 1.0 / 70.0) / (2.0 / 61.0);
        assert!((rrf_score(&[Some(3), Some(10)], 60) - expected).abs() < 1e-12);
        assert_eq!(rrf_score(&[None, None], 60), 0.0);
    }

    #[test]
    fn min_max_blend_is_a_convex_combination_of_normalised_scores() {
        // Four candidates a channel: pools large enough to normalise over.
        let c = hits(&[
            ("a", Some((1, 12.0)), Some((2, 0.5))),
            ("b", Some((4, 4.0)), Some((1, 0.7))),
            ("c", None, Some((3, 0.3))),
            ("d", Some((2, 10.0)), Some((4, 0.3))),
            ("e", Some((3, 8.0)), None),
        ]);
        let f = fuse(
            Fusion::Blend {
                weight: 0.25,
                norm: Norm::MinMax,
            },
            &c,
        );
        // lexical: a 1, b 0, c missing 0; vector: a 0.5, b 1, c 0.
        assert!((f["a"] - (0.25 * 1.0 + 0.75 * 0.5)).abs() < 1e-12);
        assert!((f["b"] - 0.75).abs() < 1e-12);
        assert!(f["c"].abs() < 1e-12);
    }

    #[test]
    fn z_blend_gives_missing_scores_the_channel_floor() {
        // Four candidates a channel: pools large enough to normalise over.
        let c = hits(&[
            ("a", Some((1, 3.0)), Some((2, 0.2))),
            ("b", Some((3, 1.0)), Some((1, 0.9))),
            ("c", None, Some((4, 0.1))),
            ("d", Some((2, 3.0)), Some((3, 0.2))),
            ("e", Some((4, 1.0)), None),
        ]);
        let f = fuse(
            Fusion::Blend {
                weight: 0.5,
                norm: Norm::ZScore,
            },
            &c,
        );
        // lexical mean 2, std 1: a +1, b −1, c the floor −1.
        let v = [0.2, 0.9, 0.1, 0.2];
        let mean = v.iter().sum::<f64>() / 4.0;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 4.0).sqrt();
        let z = |x: f64| (x - mean) / sd;
        assert!((f["a"] - 0.5 * (1.0 + z(0.2))).abs() < 1e-12, "{f:?}");
        assert!((f["b"] - 0.5 * (-1.0 + z(0.9))).abs() < 1e-12, "{f:?}");
        assert!((f["c"] - 0.5 * (-1.0 + z(0.1))).abs() < 1e-12, "{f:?}");
    }

    #[test]
    fn a_lone_hit_in_one_channel_weighs_as_much_as_the_other_channels_best() {
        // One chunk holds the query's rare term; the vector channel ranks
        // two paraphrases above it.
        let c = hits(&[
            ("exact", Some((1, 6.2)), Some((3, 0.59))),
            ("near1", None, Some((1, 0.63))),
            ("near2", None, Some((2, 0.61))),
            ("far", None, Some((4, 0.40))),
        ]);
        for norm in [Norm::ZScore, Norm::MinMax] {
            let f = fuse(Fusion::Blend { weight: 0.5, norm }, &c);
            let best = c.keys().max_by(|a, b| f[*a].total_cmp(&f[*b])).unwrap();
            assert_eq!(best, "exact", "{norm:?}: {f:?}");
        }
        // Neither channel spreads: min–max's 1 for a hit, 0 for a miss.
        let lone = hits(&[("a", Some((1, 2.0)), None), ("b", None, Some((1, 0.5)))]);
        let f = fuse(
            Fusion::Blend {
                weight: 0.25,
                norm: Norm::ZScore,
            },
            &lone,
        );
        assert!((f["a"] - 0.25).abs() < 1e-12 && (f["b"] - 0.75).abs() < 1e-12);
    }

    #[test]
    fn specs_parse_and_round_trip() {
        let rrf = Fusion::Rrf { k: 60 };
        assert_eq!(Fusion::parse("rrf", rrf), Ok(rrf));
        assert_eq!(Fusion::parse("rrf:10", rrf), Ok(Fusion::Rrf { k: 10 }));
        let b = Fusion::parse("blend:0.3", rrf).unwrap();
        assert_eq!(
            b,
            Fusion::Blend {
                weight: 0.3,
                norm: Norm::MinMax
            }
        );
        assert_eq!(Fusion::parse(&b.label(), rrf), Ok(b));
        assert_eq!(Fusion::parse("blend-z", b).unwrap().score_kind(), "blend_z");
        for bad in ["blend:1.5", "mix", "rrf:x", "blend:-0.1"] {
            assert!(Fusion::parse(bad, rrf).is_err(), "{bad}");
        }
    }
}
