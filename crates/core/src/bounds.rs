//! Bounds on the sizes that come from outside kebab (call arguments, CLI
//! flags, config settings): the one error a size over its documented bound
//! is refused with, so no value a caller chooses can overflow what is
//! computed from it or ask for memory nothing will use. The bounds
//! themselves live with the layer that owns each value (`search::MAX_K`,
//! `vector::MAX_EF`, the config sections' checks); this module only says
//! how a violation reads.

/// Longest timeout a setting takes, in seconds (a day): no deadline
/// computed from one can overflow the clock. Every section with a timeout
/// (`[plugins]`, `[models.llm]`, `[models.embedding]`) is held to it.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// A size over its bound: `field` was `value`, at most `max` is served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} = {value} is over its bound of {max}")]
pub struct OutOfBounds {
    /// The argument, flag or setting (`k`, `[search] default_k`).
    pub field: &'static str,
    /// What was given.
    pub value: u128,
    /// The largest value served.
    pub max: u128,
}

/// `Ok` when `value <= max`, else [`OutOfBounds`] naming `field` and `max`.
pub fn at_most<V, M>(field: &'static str, value: V, max: M) -> Result<(), OutOfBounds>
where
    V: TryInto<u128>,
    M: TryInto<u128>,
{
    // Every integer kebab reads fits u128; a value that did not would be
    // over any bound.
    let value = value.try_into().unwrap_or(u128::MAX);
    let max = max.try_into().unwrap_or(u128::MAX);
    if value > max {
        return Err(OutOfBounds { field, value, max });
    }
    Ok(())
}

/// A number outside its documented range, or not a finite number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field} = {value} is outside its range {min} to {max}")]
pub struct OutOfRange {
    /// The setting (`score_gate`).
    pub field: &'static str,
    /// What was given (NaN and infinities included).
    pub value: f64,
    pub min: f64,
    pub max: f64,
}

/// `Ok` when `value` is a finite number in `min..=max`, else [`OutOfRange`]
/// naming `field` and the range.
pub fn within(field: &'static str, value: f64, min: f64, max: f64) -> Result<(), OutOfRange> {
    if value.is_finite() && (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(OutOfRange {
            field,
            value,
            min,
            max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_over_its_bound_names_the_field_and_the_bound() {
        assert_eq!(at_most("k", 1000usize, 1000usize), Ok(()));
        let e = at_most("k", usize::MAX, 1000usize).unwrap_err();
        assert_eq!((e.field, e.max), ("k", 1000));
        assert_eq!(
            e.to_string(),
            format!("k = {} is over its bound of 1000", usize::MAX)
        );
    }

    #[test]
    fn a_number_must_be_finite_and_in_its_range() {
        assert!(within("score_gate", 0.3, 0.0, 1.0).is_ok());
        for bad in [-1.0, 2.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = within("score_gate", bad, 0.0, 1.0).unwrap_err();
            assert_eq!(e.field, "score_gate");
            assert!(e.to_string().starts_with("score_gate = "), "{e}");
        }
    }
}
