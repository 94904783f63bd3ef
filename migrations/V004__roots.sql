-- Roots (collections): an index holds several trees side by side. A
-- document's workspace_path stays relative to its root, and the pair
-- (root_id, workspace_path) is unique where workspace_path alone was, so
-- two trees that both hold README.md are both indexed.
--
-- * name    what users and outputs call the root (`notes`), unique, renamable
-- * path    the root directory, absolute, in kebab's lossless path text
-- * id_key  fixed at creation: the root's part of its documents' IDs, so a
--           rename keeps every ID
-- * synced_at            when a walk of the whole root last completed
-- * watch_pid, watch_seen_at, watch_queued
--           the `kebab watch` (or `kebab serve --watch`) keeping the root
--           fresh: its process, its last heartbeat, changes it has queued
--
-- Documents indexed before roots existed are given roots when this runs
-- (one per tree they came from, see the store's migration step).
CREATE TABLE roots (
    root_id       INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    path          TEXT NOT NULL UNIQUE,
    id_key        TEXT NOT NULL,
    exclude_json  TEXT NOT NULL DEFAULT '[]',
    created_at    TEXT NOT NULL,
    synced_at     TEXT,
    watch_pid     INTEGER,
    watch_seen_at TEXT,
    watch_queued  INTEGER NOT NULL DEFAULT 0
);

ALTER TABLE documents ADD COLUMN root_id INTEGER REFERENCES roots(root_id);
DROP INDEX idx_docs_workspace_path;
CREATE UNIQUE INDEX idx_docs_root_path ON documents(root_id, workspace_path);
