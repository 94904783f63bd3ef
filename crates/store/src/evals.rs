//! `kebab eval` history: one `eval_runs` row per run, one
//! `eval_query_results` row per query and mode.

use crate::db::params;
use serde_json::Value;

use crate::{Store, StoreError};
use kebab_core::clock::now_rfc3339;

impl Store {
    /// Store an evaluation run and its per-query results.
    pub fn record_eval_run(
        &mut self,
        run_id: &str,
        suite: &str,
        config: &Value,
        aggregate: &Value,
        results: &[(String, Value)],
    ) -> Result<(), StoreError> {
        let tx = self.write_tx()?;
        tx.execute(
            "INSERT INTO eval_runs (run_id, suite, config_snapshot_json, aggregate_json, commit_hash, created_at)
             VALUES (?1, ?2, ?3, ?4, NULL, ?5)",
            params![run_id, suite, config.to_string(), aggregate.to_string(), now_rfc3339()],
        )?;
        for (query_id, result) in results {
            tx.execute(
                "INSERT INTO eval_query_results (run_id, query_id, result_json) VALUES (?1, ?2, ?3)",
                params![run_id, query_id, result.to_string()],
            )?;
        }
        tx.commit()?;
        Ok(())
    }
}
