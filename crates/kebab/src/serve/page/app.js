// kebab's page: search as you type over the same /v1 API scripts use.
"use strict";

const TOKEN_KEY = "kebab-token";

/** GET a /v1 path with the server's token when the tab holds one; asks
 *  for the token once when the server answers 401. */
async function api(path) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers["Authorization"] = "Bearer " + token;
  const response = await fetch(path, { headers });
  if (response.status === 401) {
    const given = window.prompt("This kebab serve needs its token (KEBAB_SERVE_TOKEN):");
    if (given) {
      sessionStorage.setItem(TOKEN_KEY, given.trim());
      return api(path);
    }
  }
  return response;
}

/** The query's words (lower case) to mark in snippets. */
function words(query) {
  return query.toLowerCase().split(/[\s\p{P}]+/u).filter((w) => w.length > 1);
}

/** `text` as nodes, each of `marked`'s words wrapped in <mark>. */
function marked(text, marks) {
  const out = document.createDocumentFragment();
  if (marks.length === 0) {
    out.append(text);
    return out;
  }
  const escaped = marks.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp("(" + escaped.join("|") + ")", "giu");
  text.split(pattern).forEach((part, i) => {
    if (i % 2 === 1) {
      const m = document.createElement("mark");
      m.textContent = part;
      out.append(m);
    } else {
      out.append(part);
    }
  });
  return out;
}

function element(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** One hit: its citation, score and where it is, and its snippet. */
function hitItem(hit, marks) {
  const li = element("li", "hit");
  const citation = hit.citation || {};
  const cited = (hit.root ? hit.root + ":" : "") + (citation.uri || hit.doc_path);
  const open = element("button", "", cited);
  open.type = "button";
  open.title = "Read the cited text";
  open.addEventListener("click", () => read(hit, cited));
  const line = element("div", "citation");
  line.append(open);
  li.append(line);
  const where = (hit.heading_path || []).join(" › ");
  const score = typeof hit.score === "number" ? hit.score.toFixed(3) + " " + hit.score_kind : "";
  li.append(element("div", "meta", [score, where].filter(Boolean).join(" · ")));
  const snippet = element("p", "snippet");
  snippet.append(marked(hit.snippet || "", marks));
  li.append(snippet);
  return li;
}

/** Show the chunk a hit cites, verbatim as it was indexed (`/v1/fetch`). */
async function read(hit, cited) {
  const reader = document.getElementById("reader");
  const text = document.getElementById("reader-text");
  const meta = document.getElementById("reader-meta");
  document.getElementById("reader-title").textContent = cited;
  meta.textContent = "Loading…";
  text.textContent = "";
  reader.hidden = false;
  reader.dataset.citation = cited;
  try {
    const response = await api("/v1/fetch?kind=chunk&chunk_id=" + encodeURIComponent(hit.chunk_id));
    const body = await response.json();
    if (!response.ok) {
      meta.textContent = (body.message || response.statusText) + (body.hint ? " — " + body.hint : "");
      return;
    }
    const chunk = body.chunk || {};
    const where = (chunk.heading_path || []).join(" › ");
    const notes = [where, "indexed " + body.indexed_at];
    if (body.stale) notes.push("the file changed since it was indexed");
    if (body.truncated) notes.push("truncated");
    meta.textContent = notes.filter(Boolean).join(" · ");
    text.textContent = chunk.text || "";
    reader.scrollIntoView({ block: "nearest" });
  } catch (e) {
    meta.textContent = "kebab serve did not answer: " + e;
  }
}

/** The index at a glance (`/v1/schema`): roots and their last sync,
 *  counts, models and plugins. */
async function showIndex() {
  const stats = document.getElementById("index-stats");
  try {
    const response = await api("/v1/schema");
    const body = await response.json();
    if (!response.ok) {
      stats.textContent = body.message || response.statusText;
      return;
    }
    const s = body.stats || {};
    stats.textContent = `${s.documents} documents, ${s.chunks} chunks, ${s.embeddings} vectors` +
      (s.last_ingest_at ? `; last ingest ${s.last_ingest_at}` : "");
    const rows = (body.roots || []).map((r) => {
      const tr = document.createElement("tr");
      for (const cell of [r.name, r.path, r.synced_at || "never", r.watched ? "yes" : "no"]) {
        tr.append(element("td", "", cell));
      }
      return tr;
    });
    document.querySelector("#index-roots tbody").replaceChildren(...rows);
    const models = body.models || {};
    document.getElementById("index-models").textContent =
      "Embedding model: " + (models.embedding ? models.embedding.id : "none (lexical search only)") +
      " · answer model: " + (models.llm ? models.llm.id : "none");
    const plugins = ((body.capabilities || {}).plugins || []).map((p) => `${p.name} ${p.version}`);
    document.getElementById("index-plugins").textContent = "Plugins: " + plugins.join(", ");
  } catch (e) {
    stats.textContent = "kebab serve did not answer: " + e;
  }
}

/** `kebab doctor`'s checks, each with what to do when it failed. */
async function runDoctor() {
  const list = document.getElementById("doctor-checks");
  list.replaceChildren(element("li", "", "Checking…"));
  try {
    const response = await api("/v1/doctor");
    const body = await response.json();
    const checks = body.checks || [];
    list.replaceChildren(...checks.map((c) => {
      const text = (c.ok ? "✓ " : "✗ ") + c.name + (c.detail ? ": " + c.detail : "") +
        (c.hint ? " — " + c.hint : "");
      return element("li", c.ok ? "ok" : "failed", text);
    }));
  } catch (e) {
    list.replaceChildren(element("li", "failed", "kebab serve did not answer: " + e));
  }
}

let latest = 0;

async function search() {
  const q = document.getElementById("q").value.trim();
  const mode = document.getElementById("mode").value;
  const status = document.getElementById("status");
  const results = document.getElementById("results");
  const ticket = ++latest;
  if (!q) {
    results.replaceChildren();
    status.textContent = "";
    return;
  }
  let path = "/v1/search?q=" + encodeURIComponent(q) + "&k=10";
  if (mode) path += "&mode=" + encodeURIComponent(mode);
  status.className = "";
  status.textContent = "Searching…";
  try {
    const response = await api(path);
    const body = await response.json();
    if (ticket !== latest) return; // a newer query is on its way
    if (!response.ok) {
      status.className = "error";
      status.textContent = (body.message || response.statusText) + (body.hint ? " — " + body.hint : "");
      results.replaceChildren();
      return;
    }
    const hits = body.hits || [];
    const marks = words(q);
    results.replaceChildren(...hits.map((h) => hitItem(h, marks)));
    status.textContent = hits.length === 0 ? "No hits." : hits.length + " hits (" + body.mode + ")";
  } catch (e) {
    if (ticket !== latest) return;
    status.className = "error";
    status.textContent = "kebab serve did not answer: " + e;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const q = document.getElementById("q");
  let timer;
  q.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, 200);
  });
  document.getElementById("mode").addEventListener("change", search);
  document.getElementById("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    search();
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && document.activeElement !== q) {
      e.preventDefault();
      q.focus();
    }
  });
  document.getElementById("index-view").addEventListener("toggle", (e) => {
    if (e.target.open) showIndex();
  });
  document.getElementById("doctor-run").addEventListener("click", runDoctor);
  document.getElementById("reader-close").addEventListener("click", () => {
    document.getElementById("reader").hidden = true;
  });
  document.getElementById("reader-copy").addEventListener("click", async () => {
    const cited = document.getElementById("reader").dataset.citation || "";
    try {
      await navigator.clipboard.writeText(cited);
    } catch (e) {
      window.prompt("Copy the citation:", cited);
    }
  });
  const initial = new URLSearchParams(window.location.search).get("q");
  if (initial) {
    q.value = initial;
    search();
  }
});
