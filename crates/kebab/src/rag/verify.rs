//! The verification gate (`[rag.verify]`, design §3.8 step 8.5): before a
//! grounded answer is accepted, an entailment model checks it against its
//! evidence. Every sentence of the answer (its `[#n]` markers left out) is
//! a hypothesis; its premises are the packed entries it cites, or, for a
//! sentence citing none, every entry the answer cites. A sentence's score
//! is the best entailment probability among its premises, the answer's
//! the lowest of its sentences': one unsupported sentence fails the whole
//! answer. Fail-closed: a model that does not load or run refuses the
//! answer too (`nli_model_unavailable`).

use kebab_core::wire::Verification;
use kebab_search::nli::{NliError, NliModel};

use super::prompt::Packed;
use super::{claim_text, markers, sentences};

/// Sentences of an answer the gate checks; an answer with more is not
/// accepted (one unchecked sentence could carry what no evidence says).
const MAX_SENTENCES: usize = 64;

/// Why an answer the model could be run on is still not accepted, beside
/// its score.
pub(super) type Verdict = (Verification, Option<String>);

/// The verdict on `answer` against its `packed` evidence at `threshold`:
/// fail-closed on anything unscored — no sentence to check, more than
/// [`MAX_SENTENCES`], or a score that is not a number (the reason in the
/// note).
pub(super) fn verify(
    model: &NliModel,
    answer: &str,
    packed: &[Packed],
    threshold: f32,
) -> Result<Verdict, NliError> {
    let verdict = |nli_score: f32, note: Option<String>| {
        let v = Verification {
            nli_score,
            nli_threshold: threshold,
            nli_passed: note.is_none() && nli_score >= threshold,
        };
        (v, note)
    };
    let texts: Vec<&str> = packed.iter().map(|p| p.retrieved.text.as_str()).collect();
    let Some(pairs) = pairs(answer, texts.len()) else {
        return Ok(verdict(
            0.0,
            Some(format!(
                "verification: the answer has more than {MAX_SENTENCES} sentences, more than the gate checks"
            )),
        ));
    };
    if pairs.is_empty() {
        return Ok(verdict(
            0.0,
            Some("verification: the answer has no sentence to check".into()),
        ));
    }
    let scores = model.entailment(
        &pairs
            .iter()
            .map(|(entry, h, _)| (texts[*entry], h.as_str()))
            .collect::<Vec<_>>(),
    )?;
    if scores.iter().any(|s| !s.is_finite()) {
        return Ok(verdict(
            0.0,
            Some("verification: the model returned a score that is not a number".into()),
        ));
    }
    // Best premise per sentence, then the weakest sentence.
    let mut best: Vec<f32> = Vec::new();
    for ((_, _, sentence), score) in pairs.iter().zip(scores) {
        match best.get_mut(*sentence) {
            Some(b) => *b = b.max(score),
            None => best.push(score),
        }
    }
    Ok(verdict(best.into_iter().fold(1.0f32, f32::min), None))
}

/// The (premise entry index, hypothesis, sentence number) pairs to score
/// for an answer over `entries` packed entries, grouped by sentence in
/// order; `None` when the answer has more than [`MAX_SENTENCES`].
fn pairs(answer: &str, entries: usize) -> Option<Vec<(usize, String, usize)>> {
    let cited = |text: &str| {
        let mut out: Vec<usize> = Vec::new();
        for m in markers(text).into_iter().flatten() {
            let Some(i) = (m as usize).checked_sub(1) else {
                continue;
            };
            if i < entries && !out.contains(&i) {
                out.push(i);
            }
        }
        out
    };
    let mut anywhere = cited(answer);
    if anywhere.is_empty() {
        anywhere = (0..entries).collect();
    }
    let mut out = Vec::new();
    let sentences: Vec<(&str, String)> = sentences(answer)
        .map(|s| (s, claim_text(s)))
        .filter(|(_, text)| text.chars().any(char::is_alphanumeric))
        .take(MAX_SENTENCES + 1)
        .collect();
    if sentences.len() > MAX_SENTENCES {
        return None;
    }
    for (n, (raw, hypothesis)) in sentences.into_iter().enumerate() {
        let mut premises = cited(raw);
        if premises.is_empty() {
            premises = anywhere.clone();
        }
        for entry in premises {
            out.push((entry, hypothesis.clone(), n));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sentence_is_checked_against_what_it_cites() {
        let got = pairs(
            "Raft elects a leader [#2]. It uses terms [#1][#3].\nSo it is safe. [#9]",
            3,
        )
        .unwrap();
        let view: Vec<(usize, &str, usize)> =
            got.iter().map(|(e, h, n)| (*e, h.as_str(), *n)).collect();
        assert_eq!(
            view,
            [
                (1, "Raft elects a leader", 0),
                (0, "It uses terms", 1),
                (2, "It uses terms", 1),
                // Cites nothing valid: every entry the answer cites.
                (1, "So it is safe", 2),
                (0, "So it is safe", 2),
                (2, "So it is safe", 2),
            ]
        );
        // An answer citing nothing valid is checked against every entry.
        let loose: Vec<usize> = pairs("It holds [#7].", 2)
            .unwrap()
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(loose, [0, 1]);
    }

    #[test]
    fn markers_alone_and_overlong_answers_are_not_scored() {
        assert_eq!(pairs("[#1]", 2), Some(Vec::new()));
        let long = "A fact [#1]. ".repeat(MAX_SENTENCES);
        assert_eq!(pairs(&long, 1).map(|p| p.len()), Some(MAX_SENTENCES));
        assert_eq!(pairs(&format!("{long}One more [#1]."), 1), None);
    }
}
