//! Embedding beside the document pass, a bounded pipeline: the chunks of
//! each document just stored are embedded on a thread of their own while
//! the plugins parse further files.
//!
//! Only the model runs on that thread. The vector cache, the vector table
//! and the embedding records are written by the thread that stores the
//! documents, so SQLite and LanceDB keep one writer each. The vector pass
//! after the document pass still reconciles everything (`sync_vectors`):
//! whatever this stage leaves — chunks of a file stored again with the
//! same bytes (their ids may already have rows), chunks past its bound,
//! windows that Ctrl-C or an embedding error stopped — is embedded there,
//! so this stage only moves work earlier and never decides what is indexed.
//!
//! A text repeated across windows is embedded once: a chunk whose text is
//! at the model thread in an earlier window is left out of the later one
//! (the vector pass takes its vector from the cache).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::Scope;
use std::time::Instant;

use super::Progress;
use super::derived::{DerivedError, EMBED_WINDOW, EmbedPlan, Timings, VectorReport, elapsed_ms};
use kebab_search::embed::Embedder;
use kebab_store::vector::VectorStore;
use kebab_store::{MissingVector, ModelKey, NewDocument, Store};

/// Stored chunks held for the model at most; chunks stored while this many
/// wait are left to the vector pass (parsing is far faster than
/// embedding, so without a bound every chunk text would be held).
const MAX_PENDING: usize = 2 * EMBED_WINDOW;

/// A window goes to the model thread while at most this many are still
/// there: one is embedded while the next waits, so the model never idles
/// for the storing thread.
const REFILL_AT: usize = 1;

/// A window of chunks on its way to the model thread, planned as one
/// batch so that a text repeated in it is embedded once (as in the vector
/// pass); the model still runs it in batches of the configured size,
/// shortest texts first.
struct Sent {
    plan: EmbedPlan,
    at: Instant,
}

/// A window back from the model thread: its vectors, or `None` when Ctrl-C
/// came first (the window is left to the vector pass).
struct Computed {
    sent: Sent,
    vectors: Option<Result<Vec<Vec<f32>>, DerivedError>>,
    model_ms: f64,
}

/// The storing thread's end of the pipeline.
pub(super) struct EmbedAhead<'a> {
    embedder: &'a Embedder,
    vectors: &'a VectorStore,
    key: ModelKey<'a>,
    /// Stored chunks not yet handed to the model thread.
    pending: Vec<MissingVector>,
    /// Windows and chunks at the model thread.
    windows_out: usize,
    chunks_out: usize,
    /// Hashes of the texts the model thread has yet to send back.
    texts_out: HashSet<String>,
    /// Stored chunks not taken for want of room or left out of a window
    /// (the vector pass gives them vectors); counted in the progress
    /// events' `total`.
    passed_over: usize,
    to_model: Option<mpsc::Sender<Sent>>,
    from_model: mpsc::Receiver<Computed>,
    /// No more windows are sent (an embedding error: the vector pass
    /// meets it again and reports it).
    stopped: bool,
    report: VectorReport,
}

impl<'a> EmbedAhead<'a> {
    /// Start the model thread in `scope`.
    pub(super) fn start<'scope>(
        scope: &'scope Scope<'scope, 'a>,
        embedder: &'a Embedder,
        vectors: &'a VectorStore,
        cancel: &'a AtomicBool,
    ) -> EmbedAhead<'a> {
        let (to_model, jobs) = mpsc::channel::<Sent>();
        let (done, from_model) = mpsc::channel::<Computed>();
        scope.spawn(move || run_model(embedder, &jobs, &done, cancel));
        let spec = embedder.spec();
        EmbedAhead {
            embedder,
            vectors,
            key: (&spec.name, &spec.version, spec.dimensions),
            pending: Vec::new(),
            windows_out: 0,
            chunks_out: 0,
            texts_out: HashSet::new(),
            passed_over: 0,
            to_model: Some(to_model),
            from_model,
            stopped: false,
            report: VectorReport::new(embedder, vectors),
        }
    }

    /// Take the chunks of `doc`, just stored, while the bound allows.
    pub(super) fn offer(&mut self, doc: &NewDocument) {
        if self.stopped {
            return;
        }
        if self.pending.len() + doc.chunks.len() > MAX_PENDING {
            self.passed_over += doc.chunks.len();
            return;
        }
        self.pending
            .extend(doc.chunks.iter().map(|c| MissingVector {
                chunk_id: c.chunk_id.clone(),
                doc_id: doc.doc_id.clone(),
                text: c.text.clone(),
            }));
    }

    /// Store the vectors that came back, and send the next window when the
    /// model thread is about to run out of work.
    pub(super) fn pump(
        &mut self,
        store: &mut Store,
        timings: &mut Timings,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<(), DerivedError> {
        while let Ok(computed) = self.from_model.try_recv() {
            self.store_computed(store, computed, timings, on_progress)?;
        }
        if self.stopped || self.windows_out > REFILL_AT || self.pending.len() < EMBED_WINDOW {
            return Ok(());
        }
        let window: Vec<MissingVector> = self.pending.drain(..EMBED_WINDOW).collect();
        let t = Instant::now();
        let plan = EmbedPlan::new(store, self.embedder, self.key, window, &self.texts_out)?;
        timings.vector_store_ms += elapsed_ms(t);
        let n_chunks = plan.len();
        self.passed_over += EMBED_WINDOW - n_chunks;
        if n_chunks == 0 {
            return Ok(());
        }
        self.texts_out
            .extend(plan.hashes_to_embed().iter().cloned());
        let sent = Sent {
            plan,
            at: Instant::now(),
        };
        if self.to_model.as_ref().is_none_or(|t| t.send(sent).is_err()) {
            // The model thread is gone (it panicked): the vector pass
            // embeds what is left.
            self.stopped = true;
            return Ok(());
        }
        on_progress(&Progress::EmbedBatchStarted { n_chunks });
        self.windows_out += 1;
        self.chunks_out += n_chunks;
        Ok(())
    }

    /// Wait for every window at the model thread, store their vectors, and
    /// return what this stage did (the vector pass goes on from it).
    pub(super) fn finish(
        mut self,
        store: &mut Store,
        timings: &mut Timings,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<VectorReport, DerivedError> {
        // Closing the channel ends the model thread once it has sent back
        // every window.
        self.to_model = None;
        while let Ok(computed) = self.from_model.recv() {
            self.store_computed(store, computed, timings, on_progress)?;
        }
        Ok(self.report)
    }

    fn store_computed(
        &mut self,
        store: &mut Store,
        computed: Computed,
        timings: &mut Timings,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<(), DerivedError> {
        let Computed {
            sent,
            vectors,
            model_ms,
        } = computed;
        let n_chunks = sent.plan.len();
        self.windows_out -= 1;
        self.chunks_out -= n_chunks;
        for hash in sent.plan.hashes_to_embed() {
            self.texts_out.remove(hash);
        }
        let fresh = match vectors {
            Some(Ok(fresh)) => fresh,
            stopped => {
                if let Some(Err(e)) = stopped {
                    tracing::warn!(error = %e, "embedding beside parsing stopped; the vector pass retries");
                    self.stopped = true;
                }
                // Ctrl-C or an error: the window is left to the vector pass.
                self.passed_over += n_chunks;
                return Ok(());
            }
        };
        timings.embed_ms += model_ms;
        let t = Instant::now();
        sent.plan
            .commit(store, self.vectors, self.key, fresh, &mut self.report)?;
        timings.vector_store_ms += elapsed_ms(t);
        on_progress(&Progress::EmbedBatchFinished {
            n_chunks,
            ms: sent.at.elapsed().as_millis() as u64,
            done: self.report.done(),
            total: self.report.done() + self.chunks_out + self.pending.len() + self.passed_over,
        });
        Ok(())
    }
}

/// The model thread: embed each window sent until the sender is dropped;
/// after Ctrl-C, hand windows back unembedded.
fn run_model(
    embedder: &Embedder,
    jobs: &mpsc::Receiver<Sent>,
    done: &mpsc::Sender<Computed>,
    cancel: &AtomicBool,
) {
    for sent in jobs {
        let t = Instant::now();
        let vectors = (!cancel.load(Ordering::Relaxed)).then(|| sent.plan.compute(embedder));
        let computed = Computed {
            sent,
            vectors,
            model_ms: elapsed_ms(t),
        };
        if done.send(computed).is_err() {
            break;
        }
    }
}
