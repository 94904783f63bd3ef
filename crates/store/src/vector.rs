//! The vector index: one LanceDB table per (model, dimensions) under the
//! data directory's `lancedb/` — or, in a team deployment, under a prefix
//! of an S3-compatible bucket shared by every shard and replica
//! ([`VectorPlace`]) — rows `(chunk_id, doc_id, vector)`.
//!
//! SQLite stays the source of truth: `embedding_records` says which chunks
//! have a row here, and [`crate::ingest`] reconciles the two after every
//! run, so deleted or changed documents leave no vectors behind, and rows
//! the table lost (its directory deleted) are added again.
//!
//! Lance panics on some garbled files (a manifest whose footer points
//! outside the file overflows a subtraction): every call into it runs
//! under `catch_unwind`, so a damaged table is a [`VectorError::Damaged`]
//! — lexical search goes on, and a writer rebuilds the table
//! ([`VectorStore::rebuild`]) from SQLite and the embedding cache.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::types::Float32Type;
use arrow_array::{Array, FixedSizeListArray, Float32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::TryStreamExt;
use lancedb::DistanceType;
use lancedb::index::Index;
use lancedb::index::vector::IvfHnswSqIndexBuilder;
use lancedb::query::{ExecutableQuery, QueryBase, Select};

/// Problems with the vector index.
#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("vector index {table}: {message}")]
    Lance { table: String, message: String },
    /// The table's files cannot be read (lance failed or panicked opening
    /// or scanning them): derived data, rebuilt by the next `kebab ingest`.
    #[error("vector index {table} is damaged: {message}")]
    Damaged { table: String, message: String },
    #[error("cannot start the vector index runtime: {0}")]
    Runtime(String),
    /// `[storage] objects` is not an `s3://bucket/prefix` address.
    #[error(
        "`{0}` is not an object-storage address (hint: `s3://bucket/prefix`, with \
         AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION in the \
         environment)"
    )]
    BadObjects(String),
    /// The object store could not be reached or refused a request.
    #[error("object storage {place}: {message}")]
    Objects { place: String, message: String },
    /// The prefix holds another index's vectors: each index needs its own
    /// (an ingest reconciles the table with its own index, and would
    /// remove the other's rows).
    #[error(
        "object storage {place} holds the vectors of another index ({owner}); this index is \
         {index}"
    )]
    ForeignIndex {
        place: String,
        owner: String,
        index: String,
    },
    /// The object store accepted a second create of one key: it ignores
    /// `If-None-Match`, so two writers' commits could overwrite each other.
    #[error(
        "object storage {0} ignores conditional writes (`If-None-Match: *`): two writers \
         could overwrite each other's commits, so kebab will not write there (hint: use a \
         store that supports conditional PUT — AWS S3, MinIO, Ceph RGW, Cloudflare R2)"
    )]
    NoConditionalPut(String),
    #[error("vector has {got} dimensions, table {table} holds {expected}")]
    Dimensions {
        table: String,
        expected: usize,
        got: usize,
    },
}

/// How often a reader of a table on object storage looks for a newer
/// version: the bound on how stale a replica's vectors can be. (A table in
/// a local directory is refreshed when SQLite says an ingest committed.)
pub const SHARED_READ_CONSISTENCY: Duration = Duration::from_secs(1);

/// Where the vector tables live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VectorPlace {
    /// A LanceDB directory on this machine.
    Dir(PathBuf),
    /// A prefix of an S3-compatible bucket (`s3://bucket/prefix`), read
    /// and written by every shard and replica of a team deployment. The
    /// endpoint and credentials come from the standard `AWS_*` variables
    /// (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_REGION`, `AWS_ALLOW_HTTP`), which lance and the check below
    /// both read.
    Objects(String),
}

impl VectorPlace {
    /// The place `[storage] objects` names when set (checked to be an
    /// `s3://bucket[/prefix]` address), else the directory `dir`.
    pub fn new(objects: Option<&str>, dir: PathBuf) -> Result<VectorPlace, VectorError> {
        let Some(uri) = objects else {
            return Ok(VectorPlace::Dir(dir));
        };
        let bucket = uri.strip_prefix("s3://").map(|rest| rest.split('/').next());
        match bucket {
            Some(Some(bucket)) if !bucket.is_empty() => {
                Ok(VectorPlace::Objects(uri.trim_end_matches('/').to_string()))
            }
            _ => Err(VectorError::BadObjects(uri.to_string())),
        }
    }

    /// Whether the tables are shared on object storage.
    pub fn is_shared(&self) -> bool {
        matches!(self, VectorPlace::Objects(_))
    }

    /// The place as LanceDB's `connect` takes it.
    fn uri(&self) -> String {
        match self {
            VectorPlace::Dir(dir) => dir.to_string_lossy().into_owned(),
            VectorPlace::Objects(uri) => uri.clone(),
        }
    }

    /// Make sure the index `index_id` may write here. For object storage:
    /// it is reachable; it honours conditional writes — the same new key
    /// created twice with `If-None-Match: *` must fail the second time, or
    /// two writers' commits could overwrite each other
    /// ([`VectorError::NoConditionalPut`]); and the prefix is this index's
    /// (claimed on first use: [`VectorError::ForeignIndex`] otherwise).
    /// Nothing to check for a local directory.
    pub fn check_writable(&self, index_id: &str) -> Result<(), VectorError> {
        let VectorPlace::Objects(uri) = self else {
            return Ok(());
        };
        block_on(async {
            let (store, prefix) = s3_at(uri)?;
            conditional_put_honoured(uri, &store, &prefix).await?;
            claim(uri, &store, &prefix, index_id).await
        })?
    }
}

/// Run `work` to its end on a runtime of its own (for the calls that need
/// no table handle).
fn block_on<T>(work: impl std::future::Future<Output = T>) -> Result<T, VectorError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| VectorError::Runtime(e.to_string()))?;
    Ok(runtime.block_on(work))
}

/// The failure of a request to the object store at `uri`, said briefly.
fn objects_failed(uri: &str, e: impl std::fmt::Display) -> VectorError {
    VectorError::Objects {
        place: uri.to_string(),
        message: brief(&e.to_string()),
    }
}

/// Lance wraps a store's failure in debug dumps of its errors
/// (`IO { source: Generic { … message: "Connection refused" } … }`): the
/// sentence before the first dump, with the innermost `message` (the
/// operating system's or the server's words) when there is one.
fn brief(message: &str) -> String {
    let head = message.split(" { ").next().unwrap_or(message).trim();
    let innermost = message
        .rsplit_once("message: \"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(reason, _)| reason);
    let mut out = match innermost {
        Some(reason) => format!("{head} ({reason})"),
        None => head.to_string(),
    };
    if out.chars().count() > 400 {
        out = out.chars().take(400).collect::<String>() + "…";
    }
    out
}

/// A client for the bucket of `uri` (settings from the `AWS_*`
/// variables), and the prefix inside it.
fn s3_at(uri: &str) -> Result<(object_store::aws::AmazonS3, String), VectorError> {
    let store = object_store::aws::AmazonS3Builder::from_env()
        .with_url(uri)
        .with_retry(object_store::RetryConfig {
            max_retries: 2,
            retry_timeout: Duration::from_secs(10),
            ..Default::default()
        })
        .build()
        .map_err(|e| objects_failed(uri, e))?;
    let prefix = uri
        .strip_prefix("s3://")
        .and_then(|rest| rest.split_once('/'))
        .map_or("", |(_, prefix)| prefix);
    Ok((store, prefix.to_string()))
}

/// The key under `prefix` that names the index whose vectors it holds.
fn owner_key(prefix: &str) -> object_store::path::Path {
    object_store::path::Path::from(format!("{prefix}/_kebab/index"))
}

/// Create one probe key twice with `If-None-Match: *` under `prefix`, then
/// delete it.
async fn conditional_put_honoured(
    uri: &str,
    store: &object_store::aws::AmazonS3,
    prefix: &str,
) -> Result<(), VectorError> {
    use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, path::Path};
    let failed = |e: object_store::Error| objects_failed(uri, e);
    let probe = Path::from(format!(
        "{prefix}/_kebab/conditional-put-{}",
        kebab_core::clock::now_rfc3339().replace(':', "")
    ));
    let create = || PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    store
        .put_opts(&probe, "1".into(), create())
        .await
        .map_err(failed)?;
    let second = store.put_opts(&probe, "2".into(), create()).await;
    let _ = store.delete(&probe).await;
    match second {
        Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
        Ok(_) => Err(VectorError::NoConditionalPut(uri.to_string())),
        Err(e) => Err(failed(e)),
    }
}

/// Claim `prefix` for the index `index_id` (a conditional create, so two
/// indexes racing for a fresh prefix cannot both win), or check that it is
/// already this index's.
async fn claim(
    uri: &str,
    store: &object_store::aws::AmazonS3,
    prefix: &str,
    index_id: &str,
) -> Result<(), VectorError> {
    use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions};
    let failed = |e: object_store::Error| objects_failed(uri, e);
    let key = owner_key(prefix);
    let create = PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    match store
        .put_opts(&key, index_id.to_string().into(), create)
        .await
    {
        Ok(_) => return Ok(()),
        Err(object_store::Error::AlreadyExists { .. }) => {}
        Err(e) => return Err(failed(e)),
    }
    let owner = store
        .get(&key)
        .await
        .map_err(failed)?
        .bytes()
        .await
        .map_err(failed)?;
    let owner = String::from_utf8_lossy(&owner).trim().to_string();
    match owner == index_id {
        true => Ok(()),
        false => Err(VectorError::ForeignIndex {
            place: uri.to_string(),
            owner,
            index: index_id.to_string(),
        }),
    }
}

/// Drop the table `name` at `uri` (missing is fine).
fn drop_shared_table(uri: &str, name: &str) -> Result<(), String> {
    block_on(async {
        let db = lancedb::connect(uri)
            .execute()
            .await
            .map_err(|e| e.to_string())?;
        match db.drop_table(name, &[]).await {
            Ok(()) | Err(lancedb::Error::TableNotFound { .. }) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    })
    .map_err(|e| e.to_string())?
}

/// Rows per delete predicate.
const DELETE_BATCH: usize = 500;

/// Data fragments a table may gather (every add writes one) before an
/// ingest compacts it.
const COMPACT_FRAGMENTS: usize = 16;

/// Age past which an ingest deletes a table's old versions. Short, because
/// kebab's readers never stay on an old version (see [`VectorStore::prune`])
/// and every version kept holds on to the files compaction replaced.
pub const PRUNE_AFTER: lancedb::table::Duration = lancedb::table::Duration::minutes(1);

/// [`PRUNE_AFTER`] for a table on object storage, read by replicas on other
/// machines that move to a new version only every
/// [`SHARED_READ_CONSISTENCY`]: long enough that no query in flight on any
/// replica still reads a pruned version.
pub const SHARED_PRUNE_AFTER: lancedb::table::Duration = lancedb::table::Duration::minutes(10);

/// Parts the ANN index may have: a query searches every part (at 100k
/// chunks, twelve parts of ~8k rows took a vector query from ~9 to ~22 ms).
pub const MAX_INDEX_PARTS: usize = 4;

/// How many of the index's newest parts ingest merges with the `added` new
/// rows (0: the new rows become a part of their own). `part_rows` holds
/// each part's rows, oldest first. Size-tiered: a part joins the merge
/// while it is at most twice the rows merged so far, so a row is
/// re-indexed about log₂(rows) times over the table's life and a small
/// run never re-indexes the big old parts; at [`MAX_INDEX_PARTS`] the
/// newest part joins whatever its size.
pub fn parts_to_merge(part_rows: &[usize], added: usize) -> usize {
    let mut merged = added;
    let mut n = 0;
    for &rows in part_rows.iter().rev() {
        let forced = n == 0 && part_rows.len() >= MAX_INDEX_PARTS;
        if rows > merged.saturating_mul(2) && !forced {
            break;
        }
        merged += rows;
        n += 1;
    }
    n
}

/// The on-disk layout of a table: what compaction looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layout {
    /// Data fragments (each `add` writes at least one).
    pub fragments: usize,
    /// Rows marked deleted but still on disk.
    pub deleted_rows: usize,
    /// Live rows.
    pub rows: usize,
    /// Parts of the ANN index (0 without one): each ingest that adds rows
    /// adds a delta part, and a query searches every part.
    pub index_parts: usize,
}

impl Layout {
    /// Whether compaction is due: more than [`COMPACT_FRAGMENTS`]
    /// fragments, or a tenth of the rows deleted.
    pub fn needs_compaction(&self) -> bool {
        self.fragments > COMPACT_FRAGMENTS
            || (self.deleted_rows > 0 && self.deleted_rows * 10 >= self.rows.max(1))
    }
}

/// The table name for a model id (`name@version`) and its dimensions.
pub fn table_name(model_id: &str, dimensions: usize) -> String {
    let model: String = model_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("chunk_embeddings_{model}_{dimensions}")
}

/// How a query uses the ANN index (`[search] ann_*`). Ignored while the
/// table has no index: below `ann_min_rows` every search is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct AnnParams {
    /// IVF partitions searched (`None`: Lance's adaptive probing).
    pub nprobes: Option<usize>,
    /// HNSW candidates kept per partition (`None`: 1.5 × the limit);
    /// never fewer than the rows a query asks for × `refine_factor`.
    pub ef: Option<usize>,
    /// Rows re-scored with their full vectors per row asked for (the
    /// index holds 8-bit quantised copies); 0: none, the rows and their
    /// cosines are the index's own (within ~0.001 of the exact cosine).
    pub refine_factor: u32,
}

/// Most IVF partitions one vector query searches (`ann_nprobes`).
pub const MAX_NPROBES: usize = 1 << 16;
/// Most HNSW candidates per searched partition (`ann_ef`).
pub const MAX_EF: usize = 1 << 20;
/// Most rows re-scored per row asked for (`ann_refine_factor`).
pub const MAX_REFINE_FACTOR: u32 = 1_000;

impl AnnParams {
    /// Every parameter within its bound ([`MAX_NPROBES`], [`MAX_EF`],
    /// [`MAX_REFINE_FACTOR`]); each is named as its `[search]` setting.
    pub fn check(&self) -> Result<(), kebab_core::bounds::OutOfBounds> {
        use kebab_core::bounds::at_most;
        at_most("ann_nprobes", self.nprobes.unwrap_or(0), MAX_NPROBES)?;
        at_most("ann_ef", self.ef.unwrap_or(0), MAX_EF)?;
        at_most("ann_refine_factor", self.refine_factor, MAX_REFINE_FACTOR)
    }

    /// These parameters for a query that takes `limit` rows of which only
    /// the best `shown` are ranked for the user (hybrid search's candidate
    /// pool; a query that shows all it takes keeps them as they are): the
    /// index re-scores `refine_factor × shown` rows instead of
    /// `refine_factor × limit` (BENCHMARKS.md "Hybrid's candidate pool
    /// re-scored for the hits shown"). When that is no more than `limit`,
    /// re-scoring would only reorder the index's own `limit` rows and move
    /// their cosines by ~0.001, so the pool is taken as the index ranks it
    /// (factor 0): at 100k chunks a pool of 100 for 10 shown costs 5.9 ms
    /// of ANN search instead of 13.5 ms, with the same rows (BENCHMARKS.md
    /// "Hybrid search under load: what a call costs").
    pub fn for_pool(self, limit: usize, shown: usize) -> AnnParams {
        if shown >= limit {
            return self;
        }
        let budget = (self.refine_factor as usize).saturating_mul(shown.min(limit));
        let factor = budget.div_ceil(limit.max(1));
        AnnParams {
            refine_factor: match factor {
                0 | 1 => 0,
                n => u32::try_from(n).unwrap_or(u32::MAX),
            },
            ..self
        }
    }
}

impl Default for AnnParams {
    fn default() -> Self {
        AnnParams {
            nprobes: None,
            ef: None,
            refine_factor: 4,
        }
    }
}

/// Which search a vector query runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The index (when one exists) with these parameters.
    Index(AnnParams),
    /// Every row compared with the query, index or not: the reference ANN
    /// recall is measured against.
    Exact,
}

/// One row to store.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRow {
    pub chunk_id: String,
    pub doc_id: String,
    pub vector: Vec<f32>,
}

/// An open vector table.
pub struct VectorStore {
    runtime: tokio::runtime::Runtime,
    table: lancedb::Table,
    name: String,
    dimensions: usize,
    schema: SchemaRef,
    /// What [`VectorStore::search`] asks of the index.
    ann: AnnParams,
    /// The table is on object storage, shared with other machines.
    shared: bool,
}

impl std::fmt::Debug for VectorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorStore")
            .field("table", &self.name)
            .finish()
    }
}

fn quoted_list(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("'{}'", v.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ")
}

impl VectorStore {
    /// Open (creating when missing) the table for `model_id` and
    /// `dimensions` at `place`. A table whose files lance cannot read is
    /// [`VectorError::Damaged`].
    pub fn open(
        place: &VectorPlace,
        model_id: &str,
        dimensions: usize,
    ) -> Result<VectorStore, VectorError> {
        quiet_lance_panics();
        let name = table_name(model_id, dimensions);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| VectorError::Runtime(e.to_string()))?;
        let schema = Arc::new(Schema::new(vec![
            Field::new("chunk_id", DataType::Utf8, false),
            Field::new("doc_id", DataType::Utf8, false),
            Field::new(
                "vector",
                DataType::FixedSizeList(
                    Arc::new(Field::new("item", DataType::Float32, true)),
                    dimensions as i32,
                ),
                false,
            ),
        ]));
        // On object storage a table that does not open is most likely a
        // store that is down or refused the request — never called damage,
        // which a writer answers by dropping the table.
        let lance = |e: lancedb::Error| match place {
            VectorPlace::Objects(uri) => objects_failed(uri, e),
            VectorPlace::Dir(_) => VectorError::Lance {
                table: name.clone(),
                message: e.to_string(),
            },
        };
        let damaged = |e: lancedb::Error| match place {
            VectorPlace::Objects(uri) => objects_failed(uri, e),
            VectorPlace::Dir(_) => VectorError::Damaged {
                table: name.clone(),
                message: e.to_string(),
            },
        };
        let table = guarded(&runtime, &name, async {
            let mut connect = lancedb::connect(&place.uri());
            if place.is_shared() {
                connect = connect.read_consistency_interval(SHARED_READ_CONSISTENCY);
            }
            let db = connect.execute().await.map_err(lance)?;
            let names = db.table_names().execute().await.map_err(lance)?;
            if names.contains(&name) {
                db.open_table(&name).execute().await.map_err(damaged)
            } else {
                db.create_empty_table(&name, schema.clone())
                    .execute()
                    .await
                    .map_err(lance)
            }
        })?;
        Ok(VectorStore {
            runtime,
            table,
            name,
            dimensions,
            schema,
            ann: AnnParams::default(),
            shared: place.is_shared(),
        })
    }

    /// Read every row's id back: [`VectorError::Damaged`] when the
    /// table's files cannot all be read (a garbled data file, a deleted
    /// fragment), which a plain open does not notice. On object storage a
    /// failed read stays the store's error: it may be the network.
    pub fn check(&self) -> Result<(), VectorError> {
        match self.chunk_ids() {
            Ok(_) => Ok(()),
            Err(VectorError::Lance { table, message }) if !self.shared => {
                Err(VectorError::Damaged { table, message })
            }
            Err(e) => Err(e),
        }
    }

    /// Delete the table for `model_id` and `dimensions` at `place`,
    /// whatever state its files are in, and create it again empty. Only
    /// for a writer holding the writer lock, with no handle on the table
    /// open. On object storage the table is dropped through LanceDB.
    pub fn rebuild(
        place: &VectorPlace,
        model_id: &str,
        dimensions: usize,
    ) -> Result<VectorStore, VectorError> {
        let name = table_name(model_id, dimensions);
        tracing::warn!(table = %name, "rebuilding the vector table");
        let removed = match place {
            VectorPlace::Dir(dir) => {
                let files = dir.join(format!("{name}.lance"));
                match std::fs::remove_dir_all(&files) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        Err(format!("cannot remove {}: {e}", files.display()))
                    }
                    _ => Ok(()),
                }
            }
            VectorPlace::Objects(uri) => drop_shared_table(uri, &name),
        };
        if let Err(message) = removed {
            return Err(VectorError::Lance {
                table: name,
                message,
            });
        }
        VectorStore::open(place, model_id, dimensions)
    }

    fn err(&self, e: impl std::fmt::Display) -> VectorError {
        VectorError::Lance {
            table: self.name.clone(),
            message: e.to_string(),
        }
    }

    /// Run `work` on this table's runtime, its errors as
    /// [`VectorError::Lance`] and a panic inside lance as
    /// [`VectorError::Damaged`].
    fn run<T, E: std::fmt::Display>(
        &self,
        work: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, VectorError> {
        guarded(&self.runtime, &self.name, async {
            work.await.map_err(|e| self.err(e))
        })
    }

    /// Move to the table's latest version, so rows another process wrote
    /// since this handle was opened are searched too.
    pub fn refresh(&self) -> Result<(), VectorError> {
        self.run(self.table.checkout_latest())
    }

    /// How old a version must be before [`VectorStore::prune`] may delete
    /// it here: [`PRUNE_AFTER`], or [`SHARED_PRUNE_AFTER`] on object storage.
    pub fn prune_grace(&self) -> lancedb::table::Duration {
        match self.shared {
            true => SHARED_PRUNE_AFTER,
            false => PRUNE_AFTER,
        }
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Append rows.
    pub fn add(&self, rows: &[VectorRow]) -> Result<(), VectorError> {
        if rows.is_empty() {
            return Ok(());
        }
        if let Some(bad) = rows.iter().find(|r| r.vector.len() != self.dimensions) {
            return Err(VectorError::Dimensions {
                table: self.name.clone(),
                expected: self.dimensions,
                got: bad.vector.len(),
            });
        }
        let ids = StringArray::from_iter_values(rows.iter().map(|r| r.chunk_id.as_str()));
        let docs = StringArray::from_iter_values(rows.iter().map(|r| r.doc_id.as_str()));
        let vectors = FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
            rows.iter()
                .map(|r| Some(r.vector.iter().copied().map(Some).collect::<Vec<_>>())),
            self.dimensions as i32,
        );
        let batch = RecordBatch::try_new(
            self.schema.clone(),
            vec![Arc::new(ids), Arc::new(docs), Arc::new(vectors)],
        )
        .map_err(|e| self.err(e))?;
        self.run(self.table.add(batch).execute())?;
        Ok(())
    }

    /// Remove every row of these documents.
    pub fn delete_docs(&self, doc_ids: &[String]) -> Result<(), VectorError> {
        self.delete_where("doc_id", doc_ids)
    }

    /// Remove these chunks' rows.
    pub fn delete_chunks(&self, chunk_ids: &[String]) -> Result<(), VectorError> {
        self.delete_where("chunk_id", chunk_ids)
    }

    fn delete_where(&self, column: &str, values: &[String]) -> Result<(), VectorError> {
        for part in values.chunks(DELETE_BATCH) {
            let predicate = format!("{column} IN ({})", quoted_list(part));
            self.run(self.table.delete(predicate.as_str()))?;
        }
        Ok(())
    }

    /// Number of rows.
    pub fn count(&self) -> Result<usize, VectorError> {
        self.run(self.table.count_rows(None))
    }

    /// Every stored chunk id (with repeats, if any).
    pub fn chunk_ids(&self) -> Result<Vec<String>, VectorError> {
        let batches: Vec<RecordBatch> = self.run(async {
            self.table
                .query()
                .select(Select::columns(&["chunk_id"]))
                .execute()
                .await?
                .try_collect()
                .await
        })?;
        let mut out = Vec::new();
        for b in &batches {
            out.extend(strings(b, "chunk_id").map_err(|e| self.err(e))?);
        }
        Ok(out)
    }

    /// Use `ann` for every later [`VectorStore::search`].
    pub fn set_ann(&mut self, ann: AnnParams) {
        self.ann = ann;
    }

    /// The `limit` nearest chunks to `query` by cosine similarity, best
    /// first: `(chunk_id, cosine)`, through the index when there is one.
    pub fn search(&self, query: &[f32], limit: usize) -> Result<Vec<(String, f32)>, VectorError> {
        self.search_with(query, limit, Probe::Index(self.ann))
    }

    /// As [`VectorStore::search`] for a pool of `limit` candidates of
    /// which the best `shown` reach the user ([`AnnParams::for_pool`]).
    pub fn search_pool(
        &self,
        query: &[f32],
        limit: usize,
        shown: usize,
    ) -> Result<Vec<(String, f32)>, VectorError> {
        self.search_with(query, limit, Probe::Index(self.ann.for_pool(limit, shown)))
    }

    /// As [`VectorStore::search`], with the index used as `probe` says.
    pub fn search_with(
        &self,
        query: &[f32],
        limit: usize,
        probe: Probe,
    ) -> Result<Vec<(String, f32)>, VectorError> {
        if query.len() != self.dimensions {
            return Err(VectorError::Dimensions {
                table: self.name.clone(),
                expected: self.dimensions,
                got: query.len(),
            });
        }
        let batches: Vec<RecordBatch> = self.run(async {
            let nearest = self
                .table
                .query()
                .nearest_to(query)?
                .distance_type(DistanceType::Cosine);
            let nearest = match probe {
                Probe::Exact => nearest.bypass_vector_index(),
                Probe::Index(ann) => {
                    let mut q = match ann.refine_factor {
                        0 => nearest,
                        factor => nearest.refine_factor(factor),
                    };
                    if let Some(n) = ann.nprobes {
                        q = q.nprobes(n)?;
                    }
                    if let Some(ef) = ann.ef {
                        // HNSW refuses fewer candidates than it is asked for.
                        q = q.ef(ef.max(limit.saturating_mul(ann.refine_factor.max(1) as usize)));
                    }
                    q
                }
            };
            nearest
                .select(Select::columns(&["chunk_id"]))
                .limit(limit)
                .execute()
                .await?
                .try_collect()
                .await
        })?;
        let mut out = Vec::new();
        for b in &batches {
            let ids = strings(b, "chunk_id").map_err(|e| self.err(e))?;
            let distances = b
                .column_by_name("_distance")
                .and_then(|c| c.as_any().downcast_ref::<Float32Array>())
                .ok_or_else(|| self.err("result without _distance"))?;
            out.extend(
                ids.into_iter()
                    .zip(distances.values().iter().map(|d| 1.0 - d)),
            );
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.truncate(limit);
        Ok(out)
    }

    /// Fragments, deleted and live rows.
    pub fn layout(&self) -> Result<Layout, VectorError> {
        let stats = self.run(self.table.stats())?;
        Ok(Layout {
            fragments: stats.fragment_stats.num_fragments,
            deleted_rows: stats.num_deleted_rows.unwrap_or(0),
            rows: stats.num_rows,
            index_parts: self.index_part_rows()?.len(),
        })
    }

    /// Rows covered by each part of the vector column's ANN index, oldest
    /// part first (Lance's merge order); empty without an index.
    fn index_part_rows(&self) -> Result<Vec<usize>, VectorError> {
        use lance::index::DatasetIndexExt;
        let Some(name) = self.vector_index_name()? else {
            return Ok(Vec::new());
        };
        let Some(dataset) = self.table.dataset() else {
            return Err(self.err("not a local table"));
        };
        guarded(&self.runtime, &self.name, async {
            let dataset = dataset.get().await.map_err(|e| self.err(e))?;
            let fragment_rows: HashMap<u64, usize> = dataset
                .manifest()
                .fragments
                .iter()
                .map(|f| (f.id, f.physical_rows.unwrap_or(0)))
                .collect();
            let indices = dataset.load_indices().await.map_err(|e| self.err(e))?;
            Ok(indices
                .iter()
                .filter(|i| i.name == name)
                .map(|i| {
                    i.fragment_bitmap.as_ref().map_or(0, |fragments| {
                        fragments
                            .iter()
                            .filter_map(|id| fragment_rows.get(&u64::from(id)))
                            .sum()
                    })
                })
                .collect())
        })
    }

    /// Compact the table when [`Layout::needs_compaction`] says so: small
    /// fragments merged, deleted rows dropped from the files. The layout
    /// before and after.
    pub fn compact(&self) -> Result<(Layout, Layout), VectorError> {
        use lancedb::table::{CompactionOptions, OptimizeAction};
        let before = self.layout()?;
        if !before.needs_compaction() {
            return Ok((before, before));
        }
        let compact = OptimizeAction::Compact {
            options: CompactionOptions {
                materialize_deletions_threshold: 0.0,
                ..Default::default()
            },
            remap_options: None,
        };
        self.run(self.table.optimize(compact))?;
        Ok((before, self.layout()?))
    }

    /// Delete the files of versions older than `older_than` (never the
    /// latest; ingest uses [`PRUNE_AFTER`]): what compaction rewrote,
    /// deleted rows, superseded index deltas. Safe for kebab's readers: a reader moves to the latest
    /// version whenever SQLite says an ingest committed, so only a query
    /// running at the very moment of the prune could still be on an older
    /// version. Bytes freed.
    pub fn prune(&self, older_than: lancedb::table::Duration) -> Result<u64, VectorError> {
        let prune = lancedb::table::OptimizeAction::Prune {
            older_than: Some(older_than),
            delete_unverified: None,
            error_if_tagged_old_versions: None,
        };
        let stats = self.run(self.table.optimize(prune))?;
        Ok(stats.prune.map(|p| p.bytes_removed).unwrap_or(0))
    }

    /// Whether an ANN index exists on the vectors.
    pub fn has_index(&self) -> Result<bool, VectorError> {
        Ok(self.vector_index_name()?.is_some())
    }

    /// The name of the ANN index on the vectors, if there is one.
    fn vector_index_name(&self) -> Result<Option<String>, VectorError> {
        let indices = self.run(self.table.list_indices())?;
        Ok(indices
            .into_iter()
            .find(|i| i.columns.iter().any(|c| c == "vector"))
            .map(|i| i.name))
    }

    /// Keep the ANN index in step with the table: build IVF-HNSW-SQ once
    /// the table holds at least `min_rows` (below that, search is exact),
    /// and afterwards fold the `added` new rows into it, merging parts as
    /// [`parts_to_merge`] says. Returns whether an index exists afterwards.
    pub fn ensure_index(&self, min_rows: usize, added: usize) -> Result<bool, VectorError> {
        if self.count()? < min_rows {
            return Ok(false);
        }
        let parts = self.index_part_rows()?;
        if !parts.is_empty() {
            let merge = parts_to_merge(&parts, added);
            let options = lancedb::table::OptimizeOptions::new().num_indices_to_merge(Some(merge));
            self.run(
                self.table
                    .optimize(lancedb::table::OptimizeAction::Index(options)),
            )?;
            return Ok(true);
        }
        let index =
            Index::IvfHnswSq(IvfHnswSqIndexBuilder::default().distance_type(DistanceType::Cosine));
        self.run(
            self.table
                .create_index(&["vector"], index)
                .replace(true)
                .execute(),
        )?;
        Ok(true)
    }
}

/// Run `work` to completion on `runtime`; a panic inside it (lance on a
/// garbled file) becomes [`VectorError::Damaged`] for `table`.
fn guarded<T>(
    runtime: &tokio::runtime::Runtime,
    table: &str,
    work: impl std::future::Future<Output = Result<T, VectorError>>,
) -> Result<T, VectorError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runtime.block_on(work)))
        .unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "lance panicked".into());
            Err(VectorError::Damaged {
                table: table.to_string(),
                message: format!("lance panicked reading it: {message}"),
            })
        })
}

/// Panics inside lance's own code are caught ([`guarded`]) and reported
/// as a damaged table: log them instead of printing a panic message and
/// backtrace note on stderr. Every other panic goes to the hook in place.
fn quiet_lance_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_lance = info.location().is_some_and(|l| {
                let file = l.file().replace('\\', "/");
                file.contains("/lance-") || file.contains("/lancedb-")
            });
            if in_lance {
                let place = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                tracing::debug!(at = ?place, "lance failed on a damaged file");
            } else {
                previous(info);
            }
        }));
    });
}

fn strings(batch: &RecordBatch, column: &str) -> Result<Vec<String>, String> {
    let col = batch
        .column_by_name(column)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| format!("result without {column}"))?;
    Ok((0..col.len()).map(|i| col.value(i).to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_failure_reads_as_a_sentence_and_its_innermost_reason() {
        let lance = "Invalid input, Failed to connect to namespace: IO { source: Generic { \
            store: \"S3\", source: ListRequest { source: RetryError(RetryErrorImpl { inner: \
            Http(HttpError { kind: Connect, source: Os { code: 111, kind: ConnectionRefused, \
            message: \"Connection refused\" } }) }) } }, location: Location { line: 1576 } }";
        assert_eq!(
            brief(lance),
            "Invalid input, Failed to connect to namespace: IO (Connection refused)"
        );
        assert_eq!(
            brief("HTTP error: error sending request"),
            "HTTP error: error sending request"
        );
        assert!(brief(&"x".repeat(1000)).chars().count() <= 401);
    }

    #[test]
    fn objects_must_name_a_bucket() {
        let dir = PathBuf::from("/d");
        assert_eq!(
            VectorPlace::new(None, dir.clone()).unwrap(),
            VectorPlace::Dir(dir.clone())
        );
        assert_eq!(
            VectorPlace::new(Some("s3://team-kb/vectors/"), dir.clone()).unwrap(),
            VectorPlace::Objects("s3://team-kb/vectors".into())
        );
        for bad in ["s3://", "s3:///x", "gs://b/p", "/srv/vectors", "team-kb"] {
            assert!(
                matches!(
                    VectorPlace::new(Some(bad), dir.clone()),
                    Err(VectorError::BadObjects(_))
                ),
                "{bad}"
            );
        }
    }

    fn unit(i: usize, dims: usize) -> Vec<f32> {
        let mut v = vec![0.0; dims];
        v[i % dims] = 1.0;
        v
    }

    #[test]
    fn table_names_are_safe_identifiers() {
        assert_eq!(
            table_name("multilingual-e5-small@v1", 384),
            "chunk_embeddings_multilingual_e5_small_v1_384"
        );
    }

    #[test]
    fn add_search_delete_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open(&VectorPlace::Dir(dir.path().into()), "m@v1", 4).unwrap();
        let rows: Vec<VectorRow> = (0..4)
            .map(|i| VectorRow {
                chunk_id: format!("c{i}"),
                doc_id: format!("d{}", i / 2),
                vector: unit(i, 4),
            })
            .collect();
        store.add(&rows).unwrap();
        assert_eq!(store.count().unwrap(), 4);
        let hits = store.search(&unit(2, 4), 2).unwrap();
        assert_eq!(hits[0].0, "c2");
        assert!((hits[0].1 - 1.0).abs() < 1e-5, "{hits:?}");
        assert!(hits[1].1.abs() < 1e-5, "{hits:?}");

        store.delete_docs(&["d0".into()]).unwrap();
        store.delete_chunks(&["c3".into()]).unwrap();
        let mut left = store.chunk_ids().unwrap();
        left.sort();
        assert_eq!(left, vec!["c2"]);
        drop(store);
        let again = VectorStore::open(&VectorPlace::Dir(dir.path().into()), "m@v1", 4).unwrap();
        assert_eq!(again.count().unwrap(), 1);
        assert!(matches!(
            again.search(&[1.0], 1),
            Err(VectorError::Dimensions { .. })
        ));
        assert!(!again.ensure_index(1000, 0).unwrap());
        assert!(!again.has_index().unwrap());
    }

    #[test]
    fn small_runs_merge_only_the_small_new_parts() {
        // A few rows beside a big part: a part of their own.
        assert_eq!(parts_to_merge(&[100_000], 5), 0);
        // Small parts join; the big old ones stay.
        assert_eq!(parts_to_merge(&[100_000, 3], 2), 1);
        assert_eq!(parts_to_merge(&[20_000, 80_000, 3, 1], 1), 2);
        // Parts of a similar size merge, down to the oldest.
        assert_eq!(parts_to_merge(&[10_000, 10_000, 10_000], 10_000), 3);
        assert_eq!(parts_to_merge(&[30_000], 10_000), 0);
        assert_eq!(parts_to_merge(&[30_000, 10_000], 10_000), 2);
        // At the cap the newest part joins whatever its size.
        assert_eq!(parts_to_merge(&[90_000, 40_000, 15_000, 5_000], 1), 1);
        // ... and may bring its neighbours with it.
        assert_eq!(parts_to_merge(&[200_000, 40_000, 15_000, 8_000], 1), 3);
        assert_eq!(parts_to_merge(&[], 1), 0);
    }

    #[test]
    fn a_pool_re_scores_the_rows_shown_times_the_refine_factor() {
        let ann = AnnParams::default();
        assert_eq!(ann.refine_factor, 4);
        // What the user sees is asked for: unchanged.
        assert_eq!(ann.for_pool(10, 10), ann);
        // 100 candidates for 10 shown: 40 rows to re-score, fewer than the
        // pool, so the pool is the index's own ranking, not re-scored.
        assert_eq!(ann.for_pool(100, 10).refine_factor, 0);
        assert_eq!(ann.for_pool(100, 25).refine_factor, 0);
        // 100 candidates for 30 shown: 120 rows, two per candidate.
        assert_eq!(ann.for_pool(100, 30).refine_factor, 2);
        // Never more than the configured factor.
        assert_eq!(ann.for_pool(100, 500).refine_factor, 4);
        assert_eq!(ann.for_pool(0, 0), ann);
        // A query that shows every row it takes is not a pool: a factor of
        // 1 still re-scores its rows.
        let one = AnnParams {
            refine_factor: 1,
            ..ann
        };
        assert_eq!(one.for_pool(10, 10), one);
        assert_eq!(one.for_pool(100, 10).refine_factor, 0);
        // Nothing re-scored stays so.
        let none = AnnParams {
            refine_factor: 0,
            ..ann
        };
        assert_eq!(none.for_pool(10, 10).refine_factor, 0);
        let tuned = AnnParams {
            nprobes: Some(5),
            ef: Some(80),
            refine_factor: 10,
        };
        let pool = tuned.for_pool(100, 20);
        assert_eq!(
            (pool.nprobes, pool.ef, pool.refine_factor),
            (Some(5), Some(80), 2)
        );
    }

    #[test]
    fn an_index_is_built_past_the_threshold_and_takes_in_new_rows() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open(&VectorPlace::Dir(dir.path().into()), "m@v1", 16).unwrap();
        let mut seed = 7u64;
        let mut random = || {
            let v: Vec<f32> = (0..16)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((seed >> 33) % 1000) as f32 / 500.0 - 1.0
                })
                .collect();
            kebab_core::vecmath::normalise(v)
        };
        // `n` rows of random vectors named `prefix0`, `prefix1`, ...
        let mut batch = |prefix: &str, n: usize| -> Vec<VectorRow> {
            (0..n)
                .map(|i| VectorRow {
                    chunk_id: format!("{prefix}{i}"),
                    doc_id: "d".into(),
                    vector: random(),
                })
                .collect()
        };
        let rows = batch("c", 600);
        store.add(&rows).unwrap();
        assert!(
            !store.ensure_index(1000, 600).unwrap(),
            "below the threshold"
        );
        assert!(store.ensure_index(500, 600).unwrap());
        assert!(store.has_index().unwrap());
        assert_eq!(store.layout().unwrap().index_parts, 1);

        // A row per run: the first becomes a part of its own, and each
        // later one merges with it, never with the 600-row part.
        let late = batch("late", 5);
        let mut parts = Vec::new();
        for row in &late {
            store.add(std::slice::from_ref(row)).unwrap();
            assert!(store.ensure_index(500, 1).unwrap());
            parts.push(store.index_part_rows().unwrap());
        }
        assert_eq!(parts[0], [600, 1]);
        assert_eq!(parts[4], [600, 5]);
        for row in &late {
            let hits = store.search(&row.vector, 3).unwrap();
            assert_eq!(hits[0].0, row.chunk_id, "{hits:?}");
        }
        // A run about as big as the old part merges everything into one.
        let bulk = batch("bulk", 300);
        store.add(&bulk).unwrap();
        assert!(store.ensure_index(500, bulk.len()).unwrap());
        assert_eq!(store.index_part_rows().unwrap(), [905]);
        assert_eq!(store.layout().unwrap().index_parts, 1);

        let last = &late[4];
        let pool = store.search_pool(&last.vector, 50, 3).unwrap();
        assert_eq!((pool.len(), pool[0].0.as_str()), (50, "late4"), "{pool:?}");
        assert_eq!(store.search(&rows[42].vector, 1).unwrap()[0].0, "c42");
        assert_eq!(store.search(&bulk[7].vector, 1).unwrap()[0].0, "bulk7");

        // `Exact` passes the index by: the ten a brute-force scan finds.
        let all: Vec<&VectorRow> = rows.iter().chain(&late).chain(&bulk).collect();
        let stingy = Probe::Index(AnnParams {
            nprobes: Some(1),
            ef: Some(10),
            refine_factor: 1,
        });
        for _ in 0..5 {
            let query = random();
            let mut brute: Vec<(f32, &str)> = all
                .iter()
                .map(|r| {
                    let dot = r.vector.iter().zip(&query).map(|(a, b)| a * b).sum();
                    (dot, r.chunk_id.as_str())
                })
                .collect();
            brute.sort_by(|a, b| b.0.total_cmp(&a.0));
            let exact: Vec<String> = store
                .search_with(&query, 10, Probe::Exact)
                .unwrap()
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            let expected: Vec<&str> = brute[..10].iter().map(|(_, id)| *id).collect();
            assert_eq!(exact, expected);
            assert_eq!(store.search_with(&query, 10, stingy).unwrap().len(), 10);
        }
    }

    /// `batches` separate adds (one fragment each) of `rows` rows; batch
    /// `b` is document `d{b}`.
    fn add_batches(store: &VectorStore, batches: usize, rows: usize) {
        for batch in 0..batches {
            let rows: Vec<VectorRow> = (0..rows)
                .map(|i| VectorRow {
                    chunk_id: format!("c{batch}-{i}"),
                    doc_id: format!("d{batch}"),
                    vector: unit(i, 4),
                })
                .collect();
            store.add(&rows).unwrap();
        }
    }

    #[test]
    fn many_fragments_and_deletions_are_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open(&VectorPlace::Dir(dir.path().into()), "m@v1", 4).unwrap();
        add_batches(&store, 20, 5);
        let (before, after) = store.compact().unwrap();
        assert_eq!((before.fragments, before.rows), (20, 100));
        assert_eq!(
            (after.fragments, after.rows, after.deleted_rows),
            (1, 100, 0)
        );
        // A handful of deletions is left alone; a tenth of the rows is not.
        store.delete_docs(&["d0".into()]).unwrap();
        let (before, after) = store.compact().unwrap();
        assert_eq!(before, after);
        assert_eq!(before.deleted_rows, 5);
        store
            .delete_docs(&(1..5).map(|d| format!("d{d}")).collect::<Vec<_>>())
            .unwrap();
        let (before, after) = store.compact().unwrap();
        assert_eq!(before.deleted_rows, 25);
        assert_eq!(
            (after.fragments, after.rows, after.deleted_rows),
            (1, 75, 0)
        );
        assert_eq!(store.search(&unit(0, 4), 3).unwrap().len(), 3);
    }

    /// Bytes of every file under `dir`.
    fn disk_bytes(dir: &std::path::Path) -> u64 {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| match e.file_type().unwrap().is_dir() {
                true => disk_bytes(&e.path()),
                false => e.metadata().unwrap().len(),
            })
            .sum()
    }

    #[test]
    fn pruning_deletes_what_old_versions_held_and_keeps_the_latest() {
        let dir = tempfile::tempdir().unwrap();
        let store = VectorStore::open(&VectorPlace::Dir(dir.path().into()), "m@v1", 4).unwrap();
        add_batches(&store, 40, 50);
        store
            .delete_docs(&(0..10).map(|d| format!("d{d}")).collect::<Vec<_>>())
            .unwrap();
        let (_, compacted) = store.compact().unwrap();
        assert_eq!(compacted.fragments, 1);
        // Nothing is older than a day: the replaced files stay.
        assert_eq!(store.prune(lancedb::table::Duration::days(1)).unwrap(), 0);
        let before = disk_bytes(dir.path());
        let freed = store.prune(lancedb::table::Duration::zero()).unwrap();
        let after = disk_bytes(dir.path());
        assert!(freed > 0, "nothing pruned");
        assert!(after < before, "{after} >= {before}");
        assert_eq!(store.count().unwrap(), 1500);
        // A fresh handle on the pruned table reads every row.
        let reopened = VectorStore::open(&VectorPlace::Dir(dir.path().into()), "m@v1", 4).unwrap();
        assert_eq!(reopened.count().unwrap(), 1500);
        assert_eq!(reopened.search(&unit(1, 4), 10).unwrap().len(), 10);
    }
}
