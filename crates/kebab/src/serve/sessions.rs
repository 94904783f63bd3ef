//! MCP sessions of `kebab serve`, bounded. rmcp's session manager keeps
//! every session it ever created (a session whose worker ended on its idle
//! timeout stays in its map), so a local process sending `initialize` in a
//! loop grew the server by ~62 KB a session without end. [`BoundedSessions`]
//! wraps it: it knows when each session was last used and whether a
//! request of it is being answered, forgets sessions idle past rmcp's own
//! keep-alive, and when [`MAX_SESSIONS`](kebab::service::MAX_SESSIONS) are
//! open makes room by closing the session idle longest — never one with a
//! request in flight, nor one used within [`MIN_IDLE`]. When none can go,
//! [`BoundedSessions::admit`] says no and the guard answers 503 with
//! `Retry-After`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// How long a session must have been unused before it may be closed to
/// make room for a new one.
pub(super) const MIN_IDLE: Duration = Duration::from_secs(10);

/// When a session was last used and how many of its requests are being
/// answered.
#[derive(Debug, Clone, Copy)]
struct Use {
    last: Instant,
    in_flight: usize,
}

/// The sessions' uses, shared with the streams that answer their requests.
type Uses = Arc<Mutex<HashMap<SessionId, Use>>>;

/// rmcp's local session manager with a bound on open sessions.
pub(super) struct BoundedSessions {
    inner: LocalSessionManager,
    uses: Uses,
    max: usize,
    keep_alive: Duration,
}

impl BoundedSessions {
    /// At most `max` sessions open at once.
    pub(super) fn new(max: usize) -> BoundedSessions {
        let inner = LocalSessionManager::default();
        let keep_alive = inner
            .session_config
            .keep_alive
            .unwrap_or(SessionConfig::DEFAULT_KEEP_ALIVE);
        BoundedSessions {
            inner,
            uses: Arc::default(),
            max,
            keep_alive,
        }
    }

    /// Sessions open now.
    pub(super) fn open(&self) -> usize {
        self.uses.lock().map(|u| u.len()).unwrap_or(0)
    }

    /// Whether a new session may start: sessions idle past the keep-alive
    /// (their workers have ended) are closed, and at the bound the one idle
    /// longest (at least [`MIN_IDLE`], nothing in flight) is closed too.
    pub(super) async fn admit(&self) -> bool {
        let now = Instant::now();
        let (expired, room, evict) = {
            let Ok(uses) = self.uses.lock() else {
                return false;
            };
            let idle = |u: &Use| u.in_flight == 0 && now.duration_since(u.last) >= MIN_IDLE;
            let expired: Vec<SessionId> = uses
                .iter()
                .filter(|(_, u)| u.in_flight == 0 && now.duration_since(u.last) >= self.keep_alive)
                .map(|(id, _)| id.clone())
                .collect();
            let room = uses.len() - expired.len() < self.max;
            let evict = (!room)
                .then(|| {
                    uses.iter()
                        .filter(|(_, u)| idle(u))
                        .min_by_key(|(_, u)| u.last)
                        .map(|(id, _)| id.clone())
                })
                .flatten();
            (expired, room, evict)
        };
        for id in expired.iter().chain(evict.iter()) {
            self.forget(id).await;
        }
        room || evict.is_some()
    }

    /// Close the session `id` and forget it.
    async fn forget(&self, id: &SessionId) {
        if let Ok(mut uses) = self.uses.lock() {
            uses.remove(id);
        }
        if let Err(e) = self.inner.close_session(id).await {
            tracing::debug!(error = %e, "closing an idle session");
        }
    }

    /// Note a use of the session `id` (`delta`: a request begins (+1) or
    /// ends (-1), or 0).
    fn touch(uses: &Uses, id: &SessionId, delta: isize) {
        if let Ok(mut uses) = uses.lock()
            && let Some(u) = uses.get_mut(id)
        {
            u.last = Instant::now();
            u.in_flight = u.in_flight.saturating_add_signed(delta);
        }
    }
}

/// Ends a request's count when the stream answering it is dropped.
struct InFlight {
    uses: Uses,
    id: SessionId,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        BoundedSessions::touch(&self.uses, &self.id, -1);
    }
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        if let Ok(mut uses) = self.uses.lock() {
            uses.insert(
                id.clone(),
                Use {
                    last: Instant::now(),
                    in_flight: 0,
                },
            );
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        BoundedSessions::touch(&self.uses, id, 0);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Ok(mut uses) = self.uses.lock() {
            uses.remove(id);
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        BoundedSessions::touch(&self.uses, id, 1);
        let held = InFlight {
            uses: self.uses.clone(),
            id: id.clone(),
        };
        let stream = self.inner.create_stream(id, message).await?;
        Ok(stream.map(move |message| {
            let _held = &held;
            message
        }))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        BoundedSessions::touch(&self.uses, id, 0);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        BoundedSessions::touch(&self.uses, id, 0);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        BoundedSessions::touch(&self.uses, id, 0);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn at_the_bound_the_longest_idle_session_makes_room_and_busy_ones_stay() {
        let sessions = BoundedSessions::new(2);
        let (a, _ta) = sessions.create_session().await.unwrap();
        let (b, _tb) = sessions.create_session().await.unwrap();
        assert_eq!(sessions.open(), 2);
        // Both just used: no room, nothing may go.
        assert!(!sessions.admit().await);
        assert_eq!(sessions.open(), 2);
        {
            let mut uses = sessions.uses.lock().unwrap();
            let long_ago = Instant::now() - MIN_IDLE * 3;
            uses.get_mut(&a).unwrap().last = long_ago;
            let b_use = uses.get_mut(&b).unwrap();
            b_use.last = long_ago - MIN_IDLE;
            b_use.in_flight = 1;
        }
        // b is idle longer but busy: a goes.
        assert!(sessions.admit().await);
        assert_eq!(sessions.open(), 1);
        assert!(!sessions.has_session(&a).await.unwrap());
        assert!(sessions.has_session(&b).await.unwrap());
    }

    #[tokio::test]
    async fn sessions_idle_past_the_keep_alive_are_forgotten() {
        let sessions = BoundedSessions::new(10);
        let (a, _t) = sessions.create_session().await.unwrap();
        sessions.uses.lock().unwrap().get_mut(&a).unwrap().last =
            Instant::now() - sessions.keep_alive - Duration::from_secs(1);
        assert!(sessions.admit().await);
        assert_eq!(sessions.open(), 0);
        assert!(!sessions.has_session(&a).await.unwrap());
    }
}
