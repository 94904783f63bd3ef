//! `kebab eval run`, `kebab eval beir` and `kebab eval ann`: render
//! [`kebab::api::eval`] and [`kebab::api::eval_ann`].

use super::prelude::*;
use kebab::api::eval::{BeirReport, EvalReport};
use kebab::api::eval_ann::{AnnReport, AnnSweep, read_queries};
use kebab::sanitize::escape_control;

/// Notes from an evaluation go to stderr, in either output mode.
fn note(message: String) {
    errln!("note: {message}");
}

/// `kebab eval …`.
pub(crate) fn eval_cmd(session: &Session, what: EvalCmd, json: bool) -> Result<u8> {
    match what {
        EvalCmd::Run {
            suite,
            mode,
            k,
            answers,
        } => eval_run(session, &suite, &mode, k, answers, json),
        EvalCmd::Beir {
            dir,
            mode,
            fusion,
            limit,
        } => eval_beir(session, &dir, &mode, &fusion, limit, json),
        EvalCmd::Ann {
            query,
            queries,
            limit,
            k,
            nprobes,
            ef,
            refine,
        } => {
            let mut texts = query;
            if let Some(file) = queries {
                texts.extend(read_queries(&file)?);
            }
            texts.truncate(limit.unwrap_or(usize::MAX));
            let sweep = AnnSweep {
                queries: texts,
                k,
                nprobes,
                ef,
                refine_factor: refine,
            };
            render(json, &session.eval_ann(&sweep)?, print_ann)
        }
    }
}

fn print_ann(r: &AnnReport) {
    let index = if r.indexed {
        "ANN index".to_string()
    } else {
        format!(
            "no ANN index (ingest builds one at {} rows): every search is exact",
            r.ann_min_rows
        )
    };
    outln!(
        "{} vectors, {index}; {} queries, recall@{} against the exact scan",
        r.rows,
        r.queries,
        r.k
    );
    let or_auto = |v: Option<usize>| v.map_or("auto".to_string(), |v| v.to_string());
    outln!("nprobes  ef     refine  recall@k  p50 ms  p95 ms");
    outln!(
        "{:<33} {:>6.1}  {:>6.1}",
        "exact scan",
        r.exact.p50_ms,
        r.exact.p95_ms
    );
    for row in &r.settings {
        outln!(
            "{:<8} {:<6} {:<7} {:.4}    {:>6.1}  {:>6.1}{}",
            or_auto(row.params.nprobes),
            or_auto(row.params.ef),
            row.params.refine_factor,
            row.recall_at_k,
            row.latency.p50_ms,
            row.latency.p95_ms,
            if row.configured { "  (configured)" } else { "" }
        );
    }
}

/// `kebab eval run SUITE`.
fn eval_run(
    session: &Session,
    suite: &std::path::Path,
    requested: &[String],
    k: usize,
    answers: bool,
    json: bool,
) -> Result<u8> {
    if answers {
        kebab::interrupt::install_handler();
    }
    render(
        json,
        &session.eval_run(suite, requested, k, answers, &mut note)?,
        print_eval,
    )
}

fn print_eval(r: &EvalReport) {
    let f = |v: Option<f64>| v.map_or("   -  ".to_string(), |v| format!("{v:.4}"));
    outln!(
        "{}: {} queries, k = {}  (run {})",
        r.suite,
        r.queries,
        r.k,
        r.run_id
    );
    outln!("mode      hit@k   MRR     recall@k_doc  precision@k  nDCG@10");
    for (mode, a) in &r.modes {
        outln!(
            "{mode:<9} {}  {}  {}        {}       {}",
            f(a.hit_at_k),
            f(a.mrr),
            f(a.recall_at_k_doc),
            f(a.precision_at_k_chunk),
            f(a.ndcg_at_10)
        );
    }
    if let Some(a) = &r.answers {
        outln!(
            "answers: {} asked, grounded {}, must_contain {}, forbidden-free {}, passed {}",
            a.queries,
            f(Some(a.grounded_rate)),
            f(a.must_contain_rate),
            f(a.forbidden_free_rate),
            f(Some(a.pass_rate))
        );
        for q in r.per_query_answers.iter().filter(|q| !q.passed) {
            let why = match q.refusal_reason {
                Some(reason) => format!("refused ({reason})"),
                None => format!("missing {:?}, forbidden {:?}", q.missing, q.forbidden_found),
            };
            outln!("  {}: {}", escape_control(&q.id), escape_control(&why));
        }
    }
}

/// `kebab eval beir DIR`.
fn eval_beir(
    session: &Session,
    dir: &std::path::Path,
    requested: &[String],
    fusions: &[String],
    limit: Option<usize>,
    json: bool,
) -> Result<u8> {
    let report = session.eval_beir(dir, requested, fusions, limit, &mut note)?;
    render(json, &report, print_beir)
}

fn print_beir(r: &BeirReport) {
    outln!(
        "{}: {} documents, {} judged queries",
        r.dataset,
        r.documents,
        r.judged_queries
    );
    outln!("mode                   nDCG@10  recall@100  ms/query");
    for row in &r.modes {
        let label = match &row.fusion {
            Some(f) => format!("{} ({f})", row.mode),
            None => row.mode.to_string(),
        };
        outln!(
            "{:<22} {:.4}   {:.4}      {:.1}",
            label,
            row.ndcg_at_10.unwrap_or(0.0),
            row.recall_at_100.unwrap_or(0.0),
            row.ms_per_query
        );
    }
}
