// kebab's page: search as you type, read what a hit cites, ask with
// streamed, cited answers, and the index at a glance — over the same /v1
// API scripts use. Every document text is set as text, never as markup.
"use strict";

// ---- Talking to kebab serve --------------------------------------------

/** Call a /v1 path. A server with a token answers 401 until the page has
 *  shown it knows the token: then the token is asked for once and sent
 *  to /page/token, whose answer sets the page's HttpOnly cookie. */
async function api(path, init) {
  const response = await fetch(path, init);
  if (response.status !== 401) return response;
  const given = window.prompt("This kebab serve needs its token (KEBAB_SERVE_TOKEN):");
  if (!given) return response;
  const letIn = await fetch("/page/token", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: given.trim() }),
  });
  if (!letIn.ok) return letIn;
  loadRoots();
  return fetch(path, init);
}

/** The roots for the filter and the reader's paths, without asking for a
 *  token (that waits until the person does something). */
function loadRoots() {
  fetch("/v1/schema")
    .then((r) => (r.ok ? r.json() : null))
    .then((body) => body && rememberRoots(body.roots || []), () => {});
}

/** GET a /v1 path and its JSON body: `{ok, body}`. */
async function getJson(path) {
  const response = await api(path);
  const body = await response.json();
  return { ok: response.ok, body, statusText: response.statusText };
}

/** Show `text` in a status line, marked as an error when `failed`. */
function tell(status, text, failed) {
  status.className = failed ? "error" : "";
  status.textContent = text;
}

/** What the page says when the server did not answer at all. */
function unanswered(e) {
  return "kebab serve did not answer: " + e;
}

/** An `error.v1` body as one line: its message and hint. */
function problem(body, fallback) {
  return ((body && body.message) || fallback) + (body && body.hint ? " — " + body.hint : "");
}

// ---- Small DOM helpers --------------------------------------------------

/** `text` with its control characters written as visible escapes, as the
 *  CLI writes them (`\e` for ESC, `\r`, `\u{7f}`…); line breaks and tabs
 *  kept. Every text from an index goes through it on its way to the page. */
function visible(text) {
  return String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => {
    if (c === "\r") return "\\r";
    if (c === "\u001b") return "\\e";
    return "\\u{" + c.charCodeAt(0).toString(16) + "}";
  });
}

function element(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = visible(text);
  return e;
}

function button(text, title, onClick) {
  const b = element("button", "", text);
  b.type = "button";
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

/** The query's words (lower case) to mark in snippets. */
function words(query) {
  return query.toLowerCase().split(/[\s\p{P}]+/u).filter((w) => w.length > 1);
}

/** `text` as nodes, each of `marks`' words wrapped in <mark>. */
function marked(text, marks) {
  const out = document.createDocumentFragment();
  if (marks.length === 0) {
    out.append(visible(text));
    return out;
  }
  const escaped = marks.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp("(" + escaped.join("|") + ")", "giu");
  text.split(pattern).forEach((part, i) => {
    if (i % 2 === 1) out.append(element("mark", "", part));
    else out.append(visible(part));
  });
  return out;
}

/** A citation as kebab writes it: `root:uri`. */
function citationText(citation, root) {
  const r = root || (citation && citation.root);
  return (r ? r + ":" : "") + ((citation && citation.uri) || "");
}

// ---- Views ----------------------------------------------------------------

let indexTimer = null;

function showView(id) {
  for (const tab of document.querySelectorAll(".view-tab")) {
    tab.setAttribute("aria-pressed", String(tab.dataset.view === id));
  }
  for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== id;
  clearInterval(indexTimer);
  indexTimer = null;
  if (id === "index-view") {
    showIndex();
    // Live while the view is open: a watcher's changes show up here.
    indexTimer = setInterval(showIndex, 3000);
  } else if (id === "ask-view") {
    listSessions();
    document.getElementById("question").focus();
  } else {
    document.getElementById("q").focus();
  }
}

// ---- Search ---------------------------------------------------------------

/** The filters set, as query-string pairs. */
function filterPairs() {
  const pairs = [];
  const root = document.getElementById("f-root").value;
  if (root) pairs.push(["root", root]);
  for (const [id, name] of [["f-lang", "lang"], ["f-tag", "tag"], ["f-trust", "trust_min"],
    ["f-code-lang", "code_lang"], ["f-kind", "kind"], ["f-path", "path"]]) {
    const value = document.getElementById(id).value.trim();
    if (value) pairs.push([name, value]);
  }
  return pairs;
}

/** One hit: its citation (a button that opens it), score, where it is,
 *  and its snippet. */
function hitItem(hit, marks) {
  const li = element("li", "hit");
  const cited = citationText(hit.citation || { uri: hit.doc_path }, hit.root);
  const open = button(cited, "Read the cited text", () => openChunk(hit.chunk_id, cited));
  open.className = "open";
  const line = element("div", "citation");
  line.append(open);
  li.append(line);
  const where = (hit.heading_path || []).join(" › ");
  const score = typeof hit.score === "number" ? hit.score.toFixed(3) + " " + hit.score_kind : "";
  li.append(element("div", "meta", [score, hit.root, where].filter(Boolean).join(" · ")));
  const snippet = element("p", "snippet");
  snippet.append(marked(hit.snippet || "", marks));
  li.append(snippet);
  return li;
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
  const params = new URLSearchParams([["q", q], ["k", "10"], ...filterPairs()]);
  if (mode) params.set("mode", mode);
  tell(status, "Searching…");
  try {
    const { ok, body, statusText } = await getJson("/v1/search?" + params);
    if (ticket !== latest) return; // a newer query is on its way
    if (!ok) {
      tell(status, problem(body, statusText), true);
      results.replaceChildren();
      return;
    }
    const hits = body.hits || [];
    const marks = words(q);
    results.replaceChildren(...hits.map((h) => hitItem(h, marks)));
    status.textContent = hits.length === 0 ? "No hits." : hits.length + " hits (" + body.mode + ")";
  } catch (e) {
    if (ticket !== latest) return;
    tell(status, unanswered(e), true);
  }
}

/** Arrow keys move between hits (and back to the box); Enter opens one
 *  (the focused button's own click). */
function moveInResults(e) {
  const q = document.getElementById("q");
  const buttons = [...document.querySelectorAll("#results .open")];
  if (buttons.length === 0 || (e.key !== "ArrowDown" && e.key !== "ArrowUp")) return;
  const at = buttons.indexOf(document.activeElement);
  if (document.activeElement !== q && at < 0) return;
  e.preventDefault();
  const next = e.key === "ArrowDown" ? at + 1 : at - 1;
  if (next < 0) q.focus();
  else buttons[Math.min(next, buttons.length - 1)].focus();
}

// ---- Read -----------------------------------------------------------------

/** Where each root lives on this machine (from /v1/schema). */
const rootPaths = new Map();

/** Where a document is on this machine (to open in an editor): its
 *  root's directory and its path in the root. */
function filePath(root, docPath) {
  const base = rootPaths.get(root);
  return (base ? base.replace(/\/$/, "") + "/" : "") + docPath;
}

/** Where in its file a chunk is, for people: the lines its spans cover,
 *  or its first page or slide. */
function place(spans) {
  const lines = spans.filter((s) => s.kind === "line" || s.kind === "code");
  if (lines.length) {
    const start = Math.min(...lines.map((s) => s.start));
    const end = Math.max(...lines.map((s) => s.end));
    return start === end ? `, line ${start}` : `, lines ${start}–${end}`;
  }
  const first = spans[0];
  if (first && first.kind === "page") return `, page ${first.page}`;
  if (first && first.kind === "slide") return `, slide ${first.slide}`;
  return "";
}

/** Show a chunk verbatim as it was indexed, between its neighbours
 *  (`/v1/fetch` with one chunk of context each side). */
async function openChunk(chunkId, cited) {
  const reader = document.getElementById("reader");
  const meta = document.getElementById("reader-meta");
  document.getElementById("reader-title").textContent = visible(cited || "");
  for (const id of ["reader-text", "reader-before", "reader-after", "reader-file"]) {
    document.getElementById(id).textContent = "";
  }
  meta.textContent = "Loading…";
  reader.hidden = false;
  reader.dataset.citation = cited || "";
  if (!chunkId) {
    meta.textContent = "This citation has no chunk to open (an answer kept from before).";
    return;
  }
  try {
    const params = new URLSearchParams({ kind: "chunk", chunk_id: chunkId, context: "1" });
    const { ok, body, statusText } = await getJson("/v1/fetch?" + params);
    if (!ok) {
      meta.textContent = problem(body, statusText);
      return;
    }
    const chunk = body.chunk || {};
    const before = body.context_before || [];
    const after = body.context_after || [];
    const notes = [(chunk.heading_path || []).join(" › "), "indexed " + body.indexed_at];
    if (body.stale) notes.push("the file changed since it was indexed");
    if (body.truncated) notes.push("truncated");
    meta.textContent = visible(notes.filter(Boolean).join(" · "));
    document.getElementById("reader-file").textContent =
      visible("File: " + filePath(body.root, body.doc_path) + place(chunk.source_spans || []));
    if (!cited) {
      document.getElementById("reader-title").textContent = visible(body.root + ":" + body.doc_path);
    }
    document.getElementById("reader-before").textContent = visible(before.map((c) => c.text).join("\n"));
    document.getElementById("reader-text").textContent = visible(chunk.text || "");
    document.getElementById("reader-after").textContent = visible(after.map((c) => c.text).join("\n"));
    const prev = document.getElementById("reader-prev");
    const next = document.getElementById("reader-next");
    prev.disabled = before.length === 0;
    next.disabled = after.length === 0;
    prev.dataset.chunk = before.length ? before[before.length - 1].chunk_id : "";
    next.dataset.chunk = after.length ? after[0].chunk_id : "";
    reader.scrollIntoView({ block: "nearest" });
  } catch (e) {
    meta.textContent = unanswered(e);
  }
}

// ---- Ask ------------------------------------------------------------------

/** The conversation the next question continues. */
let conversation = null;

function newConversation() {
  conversation = crypto.randomUUID ? crypto.randomUUID() :
    "page-" + Date.now().toString(36) + Math.random().toString(36).slice(2);
  document.getElementById("conversation").replaceChildren();
  document.getElementById("ask-status").textContent = "";
}

/** An answer's text with each `[#n]` a button that opens what it cites. */
function answerNodes(text, citations) {
  const byMarker = new Map();
  for (const c of citations || []) if (c.marker) byMarker.set(c.marker, c);
  const out = document.createDocumentFragment();
  text.split(/(\[#\d+\])/).forEach((part, i) => {
    const cited = i % 2 === 1 ? byMarker.get(part) : undefined;
    if (!cited) {
      out.append(visible(part));
      return;
    }
    const where = citationText(cited.citation);
    const link = button(part, where, () => openChunk(cited.chunk_id, where));
    link.className = "marker";
    out.append(link);
  });
  return out;
}

/** A turn's finished answer: the text with its markers as links, the
 *  sources it cites, or the refusal scene (why, and what was searched
 *  with its scores); the multi-hop steps and the verification when used. */
function renderAnswer(turn, answer) {
  const text = turn.querySelector(".answer");
  text.replaceChildren(answerNodes(answer.answer || "", answer.citations));
  turn.classList.toggle("refused", !answer.grounded);
  const sources = turn.querySelector(".sources");
  const meta = turn.querySelector(".answer-meta");
  const facts = [];
  if (answer.grounded) {
    facts.push("grounded ✓");
  } else {
    facts.push("not answered: " + (answer.refusal_reason || "refused"));
    const r = answer.retrieval || {};
    if (typeof r.top_score === "number") {
      facts.push(`best evidence ${r.top_score.toFixed(2)} (the gate is ${r.score_gate.toFixed(2)})`);
    }
  }
  if (answer.grounded && answer.model) facts.push(answer.model.id);
  if (answer.verification) {
    const v = answer.verification;
    facts.push(`verified: entailment ${v.nli_score.toFixed(2)} / ${v.nli_threshold.toFixed(2)}`);
  }
  meta.textContent = facts.join(" · ");
  const items = (answer.citations || []).map((c) => {
    const li = element("li", "source");
    const where = citationText(c.citation);
    const label = (c.marker ? c.marker + " " : "") + where +
      (typeof c.relevance === "number" ? ` (score ${c.relevance.toFixed(2)})` : "");
    li.append(button(label, "Read the cited text", () => openChunk(c.chunk_id, where)));
    return li;
  });
  if (!answer.grounded && items.length) {
    sources.before(element("p", "searched", "Searched, with these entries:"));
  }
  sources.replaceChildren(...items);
  for (const hop of answer.hops || []) {
    const queries = (hop.sub_queries || []).join("; ");
    turn.querySelector(".hops").append(element("li", "",
      `${hop.kind} ${hop.iter}${queries ? ": " + queries : ""}` +
      (hop.context_chunks_added ? ` (+${hop.context_chunks_added} chunks)` : "") +
      (hop.forced_stop ? " (stopped at a bound)" : "")));
  }
  for (const note of answer.notes || []) turn.querySelector(".notes").append(element("li", "", note));
}

function turnElement(question) {
  const turn = element("article", "turn");
  turn.append(element("p", "question", question));
  const text = element("div", "answer");
  text.setAttribute("aria-live", "polite");
  turn.append(text, element("p", "answer-meta"), element("ol", "sources"),
    element("ol", "hops"), element("ul", "notes"));
  document.getElementById("conversation").append(turn);
  return turn;
}

/** Read a server-sent event stream: `onEvent(name, data)` per event. */
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      onEvent(name, data ? JSON.parse(data) : null);
    }
  }
}

let asking = false;

/** Send the question; stream the answer into a new turn as it is written. */
async function ask() {
  const box = document.getElementById("question");
  const question = box.value.trim();
  const status = document.getElementById("ask-status");
  if (!question || asking) return;
  if (!conversation) newConversation();
  asking = true;
  document.getElementById("ask-send").disabled = true;
  tell(status, "Searching and asking the model…");
  const turn = turnElement(question);
  const text = turn.querySelector(".answer");
  box.value = "";
  const request = { question, session: conversation };
  const mode = document.getElementById("mode").value;
  if (mode) request.mode = mode;
  const root = document.getElementById("f-root").value;
  if (root) request.roots = [root];
  try {
    const response = await api("/v1/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
      body: JSON.stringify(request),
    });
    if (!response.ok) {
      const body = await response.json().catch(() => null);
      tell(status, problem(body, response.statusText), true);
      return;
    }
    let finished = false;
    await readEvents(response, (name, data) => {
      if (name === "token") {
        text.append(visible(data.text));
        status.textContent = "Answering…";
      } else if (name === "answer") {
        finished = true;
        renderAnswer(turn, data);
        status.textContent = data.grounded ? "Answered." : "Not answered from your notes.";
      } else if (name === "error") {
        finished = true;
        tell(status, problem(data, "the ask failed"), true);
      }
    });
    if (!finished) {
      tell(status, "The answer stopped before it was finished.", true);
    }
  } catch (e) {
    tell(status, unanswered(e), true);
  } finally {
    asking = false;
    document.getElementById("ask-send").disabled = false;
    listSessions();
  }
}

/** The conversations kept, most recent first: each reopens or deletes. */
async function listSessions() {
  const list = document.getElementById("sessions");
  try {
    const { ok, body, statusText } = await getJson("/v1/list_sessions");
    if (!ok) {
      list.replaceChildren(element("li", "failed", problem(body, statusText)));
      return;
    }
    list.replaceChildren(...(body.sessions || []).map((s) => {
      const li = element("li", "session");
      li.append(button((s.title || s.session_id) + ` (${s.turns} turns, ${s.updated_at})`,
        "Reopen this conversation", () => reopen(s.session_id)));
      const remove = button("Delete", "Delete this conversation and its answers",
        () => removeSession(s.session_id));
      remove.className = "delete";
      li.append(" ", remove);
      return li;
    }));
  } catch (e) {
    list.replaceChildren(element("li", "failed", unanswered(e)));
  }
}

async function reopen(id) {
  const status = document.getElementById("ask-status");
  const { ok, body, statusText } = await getJson("/v1/show_session?session_id=" + encodeURIComponent(id));
  if (!ok) {
    tell(status, problem(body, statusText), true);
    return;
  }
  conversation = id;
  document.getElementById("conversation").replaceChildren();
  for (const t of body.turns || []) {
    const turn = turnElement(t.question);
    const citations = Array.isArray(t.citations) ? t.citations : [];
    turn.querySelector(".answer").append(answerNodes(t.answer || "", citations));
    turn.querySelector(".answer-meta").textContent = t.created_at || "";
  }
  tell(status, "Reopened; the next question continues this conversation.");
}

async function removeSession(id) {
  if (!window.confirm("Delete this conversation and its stored answers?")) return;
  const response = await api("/v1/delete_session", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ session_id: id }),
  });
  if (id === conversation) newConversation();
  const status = document.getElementById("ask-status");
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    tell(status, problem(body, response.statusText), true);
  }
  listSessions();
}

// ---- The index at a glance ------------------------------------------------

/** Roots and their freshness, counts, models and plugins (`/v1/schema`). */
async function showIndex() {
  const stats = document.getElementById("index-stats");
  try {
    const { ok, body, statusText } = await getJson("/v1/schema");
    if (!ok) {
      stats.textContent = problem(body, statusText);
      return;
    }
    const s = body.stats || {};
    stats.textContent = `${s.documents} documents, ${s.chunks} chunks, ${s.embeddings} vectors` +
      (s.last_ingest_at ? `; last ingest ${s.last_ingest_at}` : "");
    const rows = (body.roots || []).map((r) => {
      const tr = document.createElement("tr");
      const cells = [r.name, r.path, r.synced_at || "never", r.watched ? "yes" : "no", String(r.queued)];
      for (const cell of cells) tr.append(element("td", "", cell));
      return tr;
    });
    document.querySelector("#index-roots tbody").replaceChildren(...rows);
    const models = body.models || {};
    document.getElementById("index-models").textContent =
      "Embedding model: " + (models.embedding ? models.embedding.id : "none (lexical search only)") +
      " · answer model: " + (models.llm ? models.llm.id : "none");
    const plugins = ((body.capabilities || {}).plugins || []).map((p) => `${p.name} ${p.version}`);
    document.getElementById("index-plugins").textContent = "Plugins: " + plugins.join(", ");
    rememberRoots(body.roots || []);
  } catch (e) {
    stats.textContent = unanswered(e);
  }
}

/** Keep the roots' places, and offer them in the root filter. */
function rememberRoots(roots) {
  const select = document.getElementById("f-root");
  const chosen = select.value;
  for (const r of roots) rootPaths.set(r.name, r.path);
  const options = roots.map((r) => {
    const o = element("option", "", r.name);
    o.value = r.name;
    return o;
  });
  select.replaceChildren(select.options[0], ...options);
  select.value = chosen;
}

/** `kebab doctor`'s checks, each with what to do when it failed. */
async function runDoctor() {
  const list = document.getElementById("doctor-checks");
  list.replaceChildren(element("li", "", "Checking…"));
  try {
    const { ok, body, statusText } = await getJson("/v1/doctor");
    if (!ok) {
      list.replaceChildren(element("li", "failed", problem(body, statusText)));
      return;
    }
    const checks = body.checks || [];
    list.replaceChildren(...checks.map((c) => {
      const text = (c.ok ? "✓ " : "✗ ") + c.name + (c.detail ? ": " + c.detail : "") +
        (c.hint ? " — " + c.hint : "");
      return element("li", c.ok ? "ok" : "failed", text);
    }));
  } catch (e) {
    list.replaceChildren(element("li", "failed", unanswered(e)));
  }
}

// ---- Wiring -----------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  const q = document.getElementById("q");
  let timer;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(search, 200);
  };
  // A Korean, Japanese or Chinese word being composed is not a query yet.
  q.addEventListener("input", (e) => {
    if (!e.isComposing) later();
  });
  q.addEventListener("compositionend", later);
  document.getElementById("mode").addEventListener("change", search);
  document.getElementById("filters").addEventListener("change", search);
  document.getElementById("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    search();
  });
  document.getElementById("results").addEventListener("keydown", moveInResults);
  q.addEventListener("keydown", moveInResults);
  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    if (e.key === "/" && !typing) {
      e.preventDefault();
      showView("search-view");
    } else if (e.key === "Escape") {
      document.getElementById("reader").hidden = true;
    }
  });
  for (const tab of document.querySelectorAll(".view-tab")) {
    tab.addEventListener("click", () => showView(tab.dataset.view));
  }
  const question = document.getElementById("question");
  question.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      ask();
    }
  });
  document.getElementById("ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    ask();
  });
  document.getElementById("ask-new").addEventListener("click", newConversation);
  document.getElementById("doctor-run").addEventListener("click", runDoctor);
  document.getElementById("reader-close").addEventListener("click", () => {
    document.getElementById("reader").hidden = true;
  });
  for (const id of ["reader-prev", "reader-next"]) {
    const b = document.getElementById(id);
    b.addEventListener("click", () => openChunk(b.dataset.chunk, ""));
  }
  document.getElementById("reader-copy").addEventListener("click", async () => {
    const cited = document.getElementById("reader").dataset.citation ||
      document.getElementById("reader-title").textContent;
    try {
      await navigator.clipboard.writeText(cited);
    } catch (e) {
      window.prompt("Copy the citation:", cited);
    }
  });
  loadRoots();
  const initial = new URLSearchParams(window.location.search).get("q");
  if (initial) {
    q.value = initial;
    search();
  }
});
