//! The engine every front end that serves calls (`kebab mcp` in process,
//! `kebab serve`'s MCP endpoint and HTTP API) runs them on: threads that
//! own sibling [`Session`]s over one index, so the Korean analyser, the
//! embedding model and the vector table load once and every thread reads
//! through its own SQLite connection.
//!
//! - **Two lanes.** Reading calls (search, fetch, list, schema) go to a
//!   pool of reader threads pulling from one queue; calls that wait on the
//!   model server (`ask`, for as long as it streams, and `doctor`) to a
//!   thread of their own, so a slow answer holds up no search.
//! - **Bounded.** Each lane's queue holds a fixed number of waiting calls;
//!   a call beyond it is refused at once with `overloaded` (`error.v1`),
//!   never queued without end. With a time limit, a call not answered in
//!   time gets `timeout`; a call abandoned while it waited (timed out, or
//!   its client went away) is skipped, and an `ask` abandoned while it
//!   streams stops.
//! - **A panic costs one call.** The call gets `internal_error` and its
//!   thread goes on with a fresh sibling session (a new connection; the
//!   shared models stay).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::Value;
use tokio::sync::oneshot;

use kebab::api::{ApiError, Scope, Session};

/// How a thread runs one call on its session: the call's `*.v1` value, or
/// an `error.v1` body. `scope` is whose call it is; `cancel` is raised when
/// the caller stops waiting; `on_token` gets each piece of an answer as the
/// model writes it.
pub(crate) type Handler =
    fn(&Session, &Scope, &str, Value, &AtomicBool, &mut dyn FnMut(&str)) -> Result<Value, Value>;

/// Where a streaming call's pieces go as they are written.
pub(crate) type Tokens = tokio::sync::mpsc::UnboundedSender<String>;

/// Which threads answer a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lane {
    /// The reader pool.
    Read,
    /// The thread for calls that wait on the model server.
    Model,
}

/// An engine's size and bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Reader threads (at least one).
    pub(crate) readers: usize,
    /// Reading calls waiting for a reader, at most.
    pub(crate) read_queue: usize,
    /// Model calls waiting for the model thread, at most.
    pub(crate) model_queue: usize,
    /// How long a call may take, waiting included (`None`: no limit).
    pub(crate) timeout: Option<Duration>,
}

/// A call handed to a thread, with where to put its result.
struct Job {
    tool: String,
    arguments: Value,
    /// Whose call it is.
    scope: Scope,
    /// Raised when the caller stops waiting (see [`CancelOnDrop`]).
    cancel: Arc<AtomicBool>,
    /// Where the pieces of a streamed answer go (`None`: nobody reads them).
    tokens: Option<Tokens>,
    reply: oneshot::Sender<Result<Value, Value>>,
}

/// Raises its flag when dropped: a call whose future is dropped (the
/// client cancelled it or went away, or its time ran out) stops the work
/// it queued.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Calls waiting and running in one lane.
#[derive(Default)]
struct Counts {
    queued: AtomicUsize,
    running: AtomicUsize,
}

/// One lane's queue.
struct Queue {
    jobs: SyncSender<Job>,
    counts: Arc<Counts>,
}

/// The engine (see the module doc). Shared by every connection of a
/// server; dropping the last handle ends its threads once they finish.
pub(crate) struct Engine {
    reads: Queue,
    model: Queue,
    limits: Limits,
}

/// The engine's threads, to wait for once every handle is gone.
pub(crate) struct Workers(Vec<JoinHandle<()>>);

impl Workers {
    /// Wait for every thread to finish its call and end.
    pub(crate) fn join(self) {
        for thread in self.0 {
            let _ = thread.join();
        }
    }
}

impl Engine {
    /// Start the threads: `limits.readers` readers and one model thread,
    /// each with a sibling of `session`, answering calls with `handler`.
    pub(crate) fn start(
        session: &Session,
        limits: Limits,
        handler: Handler,
    ) -> Result<(Arc<Engine>, Workers)> {
        let mut threads = Vec::new();
        let readers = limits.readers.max(1);
        let (reads, read_jobs) = queue(limits.read_queue);
        for i in 0..readers {
            let name = format!("kebab-reader-{i}");
            threads.push(spawn(
                &name,
                session.sibling(),
                &read_jobs,
                &reads,
                handler,
            )?);
        }
        let (model, model_jobs) = queue(limits.model_queue);
        threads.push(spawn(
            "kebab-model",
            session.sibling(),
            &model_jobs,
            &model,
            handler,
        )?);
        let engine = Engine {
            reads,
            model,
            limits: Limits { readers, ..limits },
        };
        Ok((Arc::new(engine), Workers(threads)))
    }

    /// Run `tool` on `lane`: its value or its `error.v1` body. Refused at
    /// once (`overloaded`) when the lane's queue is full; `timeout` when
    /// the engine's time limit passes first.
    pub(crate) async fn call(
        &self,
        lane: Lane,
        tool: &str,
        arguments: Value,
        scope: Scope,
    ) -> Result<Value, Value> {
        self.call_streaming(lane, (tool, arguments), scope, None)
            .await
    }

    /// [`Engine::call`], with each piece of a streamed answer sent to
    /// `tokens` as the model writes it.
    pub(crate) async fn call_streaming(
        &self,
        lane: Lane,
        (tool, arguments): (&str, Value),
        scope: Scope,
        tokens: Option<Tokens>,
    ) -> Result<Value, Value> {
        let queue = match lane {
            Lane::Read => &self.reads,
            Lane::Model => &self.model,
        };
        let (reply, result) = oneshot::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let _stop_when_dropped = CancelOnDrop(cancel.clone());
        let job = Job {
            tool: tool.to_string(),
            arguments,
            scope,
            cancel,
            tokens,
            reply,
        };
        queue.counts.queued.fetch_add(1, Ordering::Relaxed);
        if let Err(refused) = queue.jobs.try_send(job) {
            queue.counts.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(error_value(&match refused {
                TrySendError::Full(_) => ApiError::Overloaded {
                    running: queue.counts.running.load(Ordering::Relaxed),
                    queued: queue.counts.queued.load(Ordering::Relaxed),
                },
                TrySendError::Disconnected(_) => stopped(tool),
            }));
        }
        let answered = match self.limits.timeout {
            Some(limit) => match tokio::time::timeout(limit, result).await {
                Ok(answered) => answered,
                Err(_) => {
                    tracing::warn!(tool, secs = limit.as_secs(), "call timed out");
                    return Err(error_value(&ApiError::TimedOut {
                        call: tool.to_string(),
                        secs: limit.as_secs(),
                    }));
                }
            },
            None => result.await,
        };
        answered.unwrap_or_else(|_| Err(error_value(&stopped(tool))))
    }

    /// Reader threads.
    pub(crate) fn readers(&self) -> usize {
        self.limits.readers
    }

    /// Calls `(running, queued)` now, both lanes together.
    pub(crate) fn load(&self) -> (usize, usize) {
        let [r, m] = [&self.reads.counts, &self.model.counts];
        (
            r.running.load(Ordering::Relaxed) + m.running.load(Ordering::Relaxed),
            r.queued.load(Ordering::Relaxed) + m.queued.load(Ordering::Relaxed),
        )
    }
}

/// A lane's bounded queue: its sending half, and the receiving half the
/// lane's threads share.
fn queue(capacity: usize) -> (Queue, Arc<Mutex<Receiver<Job>>>) {
    let (jobs, receiver) = std::sync::mpsc::sync_channel(capacity.max(1));
    let queue = Queue {
        jobs,
        counts: Arc::default(),
    };
    (queue, Arc::new(Mutex::new(receiver)))
}

/// The error of a call no thread will answer.
fn stopped(tool: &str) -> ApiError {
    ApiError::Internal {
        call: tool.to_string(),
        message: "the kebab engine stopped".into(),
    }
}

/// Start one thread answering `jobs` with `handler` on `session`, in
/// order, until every sender is gone.
fn spawn(
    name: &str,
    mut session: Session,
    jobs: &Arc<Mutex<Receiver<Job>>>,
    queue: &Queue,
    handler: Handler,
) -> Result<JoinHandle<()>> {
    let jobs = jobs.clone();
    let counts = queue.counts.clone();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            loop {
                // One thread waits on the queue at a time; the lock is
                // never held while a call runs.
                let next = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
                let Ok(job) = next else { return };
                counts.queued.fetch_sub(1, Ordering::Relaxed);
                if job.cancel.load(Ordering::Relaxed) {
                    // Abandoned while it waited: nobody reads the answer.
                    continue;
                }
                counts.running.fetch_add(1, Ordering::Relaxed);
                let mut on_token = |piece: &str| {
                    if let Some(tokens) = &job.tokens {
                        let _ = tokens.send(piece.to_string());
                    }
                };
                let result = run(
                    &mut session,
                    handler,
                    (&job.scope, job.tool, job.arguments),
                    &job.cancel,
                    &mut on_token,
                );
                counts.running.fetch_sub(1, Ordering::Relaxed);
                let _ = job.reply.send(result);
            }
        })
        .with_context(|| format!("starting the {name} thread"))
}

/// Run one call; a panic becomes its `internal_error`, and the session
/// (whatever state the panic left in it) is replaced by a fresh sibling.
fn run(
    session: &mut Session,
    handler: Handler,
    (scope, tool, arguments): (&Scope, String, Value),
    cancel: &AtomicBool,
    on_token: &mut dyn FnMut(&str),
) -> Result<Value, Value> {
    let started = Instant::now();
    let call = || handler(session, scope, &tool, arguments, cancel, on_token);
    let result = catch_unwind(AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        let old = std::mem::replace(session, session.sibling());
        // Dropping what the panic left behind may panic too.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(old)));
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panicked".into());
        tracing::error!(
            tool,
            panic = message.as_str(),
            "tool call panicked; session rebuilt"
        );
        let call = tool.clone();
        Err(error_value(&ApiError::Internal { call, message }))
    });
    tracing::info!(
        tool,
        ok = result.is_ok(),
        ms = started.elapsed().as_secs_f64() * 1000.0,
        "tool call"
    );
    result
}

/// `error`'s `error.v1` body as JSON.
pub(crate) fn error_value(error: &ApiError) -> Value {
    serde_json::to_value(error.report()).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kebab::app::Paths;
    use kebab::config::Config;
    use serde_json::json;

    /// Panics on `boom`, sleeps on `sleep` (until cancelled, at most 5 s),
    /// echoes any other tool.
    fn handler(
        _: &Session,
        _: &Scope,
        tool: &str,
        _: Value,
        cancel: &AtomicBool,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Value, Value> {
        on_token(tool);
        assert_ne!(tool, "boom", "the tool exploded");
        if tool == "sleep" {
            let until = Instant::now() + Duration::from_secs(5);
            while !cancel.load(Ordering::Relaxed) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        Ok(json!(tool))
    }

    fn engine(limits: Limits) -> (Arc<Engine>, Workers, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            config_file: dir.path().join("config.toml"),
            data_dir: dir.path().join("data"),
            cache_dir: dir.path().join("cache"),
        };
        let session = Session::new(Config::default(), paths);
        let (engine, workers) = Engine::start(&session, limits, handler).unwrap();
        (engine, workers, dir)
    }

    const SMALL: Limits = Limits {
        readers: 2,
        read_queue: 1,
        model_queue: 1,
        timeout: None,
    };

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_call_that_panics_gets_an_error_and_the_next_call_is_served() {
        let (engine, workers, _dir) = engine(SMALL);
        runtime().block_on(async {
            assert_eq!(
                engine
                    .call(Lane::Read, "search", json!({}), Scope::Everything)
                    .await,
                Ok(json!("search"))
            );
            let error = engine
                .call(Lane::Read, "boom", json!({}), Scope::Everything)
                .await
                .unwrap_err();
            assert_eq!(error["code"], "internal_error");
            assert!(
                error["message"]
                    .as_str()
                    .unwrap()
                    .contains("the tool exploded")
            );
            assert_eq!(
                engine
                    .call(Lane::Read, "fetch", json!({}), Scope::Everything)
                    .await,
                Ok(json!("fetch"))
            );
            assert_eq!(
                engine
                    .call(Lane::Model, "boom", json!({}), Scope::Everything)
                    .await
                    .unwrap_err()["code"],
                "internal_error"
            );
            assert_eq!(
                engine
                    .call(Lane::Model, "ask", json!({}), Scope::Everything)
                    .await,
                Ok(json!("ask"))
            );
        });
        drop(engine);
        workers.join();
    }

    #[test]
    fn a_streaming_call_hands_on_each_piece_as_it_is_written() {
        let (engine, workers, _dir) = engine(SMALL);
        runtime().block_on(async {
            let (tokens, mut pieces) = tokio::sync::mpsc::unbounded_channel();
            let answer = engine
                .call_streaming(
                    Lane::Model,
                    ("ask", json!({})),
                    Scope::Everything,
                    Some(tokens),
                )
                .await;
            assert_eq!(answer, Ok(json!("ask")));
            assert_eq!(pieces.recv().await.as_deref(), Some("ask"));
            // The sender went with the call: the stream ends.
            assert_eq!(pieces.recv().await, None);
        });
        drop(engine);
        workers.join();
    }

    #[test]
    fn calls_beyond_the_queue_are_refused_at_once_and_the_lanes_are_apart() {
        let (engine, workers, _dir) = engine(SMALL);
        runtime().block_on(async {
            // Two readers busy, one call waiting: the queue is full.
            let mut busy = Vec::new();
            for _ in 0..3 {
                let engine = engine.clone();
                busy.push(tokio::spawn(async move {
                    engine
                        .call(Lane::Read, "sleep", json!({}), Scope::Everything)
                        .await
                }));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert_eq!(engine.load(), (2, 1));
            let started = Instant::now();
            let refused = engine
                .call(Lane::Read, "search", json!({}), Scope::Everything)
                .await
                .unwrap_err();
            assert_eq!(refused["code"], "overloaded", "{refused:#}");
            assert_eq!(refused["details"]["queued"], 1);
            assert!(started.elapsed() < Duration::from_secs(1));
            // The model lane is not held up by the readers.
            assert_eq!(
                engine
                    .call(Lane::Model, "doctor", json!({}), Scope::Everything)
                    .await,
                Ok(json!("doctor"))
            );
            for b in busy {
                b.abort();
            }
        });
        drop(engine);
        workers.join();
    }

    #[test]
    fn a_call_past_its_time_gets_timeout_and_its_work_stops() {
        let limits = Limits {
            timeout: Some(Duration::from_millis(200)),
            ..SMALL
        };
        let (engine, workers, _dir) = engine(limits);
        runtime().block_on(async {
            let started = Instant::now();
            let error = engine
                .call(Lane::Model, "sleep", json!({}), Scope::Everything)
                .await
                .unwrap_err();
            assert_eq!(error["code"], "timeout", "{error:#}");
            assert_eq!(error["details"]["call"], "sleep");
            // The abandoned call saw its cancel flag, so the thread is free.
            assert_eq!(
                engine
                    .call(Lane::Model, "ask", json!({}), Scope::Everything)
                    .await,
                Ok(json!("ask"))
            );
            assert!(started.elapsed() < Duration::from_secs(2));
        });
        drop(engine);
        workers.join();
    }
}
