"""kebab's built-in Org-mode plugin, written in Python.

Built into a WebAssembly component by componentize-py from the newest
frozen contract in ``wit/`` (crates/plugin-host/build.rs does it; the component is
embedded in the kebab binary like the Rust plugins).

Parser ``python-org-v1``: headlines (``*``, ``**``, … with TODO keywords,
``[#A]`` priorities and ``:tags:`` removed from the title) open sections;
``#+BEGIN_SRC lang`` … ``#+END_SRC`` and the other ``#+BEGIN_x`` blocks are
kept whole; tables (``|`` lines) whole; property and logbook drawers and
``#+KEYWORD:`` lines are skipped (``#+TITLE:`` names the document);
paragraphs and lists are separated by blank lines.

Chunker ``org-heading-v1``: a chunk never spans two sections (a headline
with nothing under it but a deeper headline joins that section), blocks
are packed up to the policy's token target, a source block is never split,
other oversized blocks are cut by lines; every chunk carries its section's
heading path and cites its lines.
"""

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types

VERSION = "1.0.0"
PARSER = "python-org-v1"
CHUNKER = "org-heading-v1"
TODO_KEYWORDS = {"TODO", "DONE", "NEXT", "WAITING", "CANCELLED", "CANCELED"}
HEADING = types.BlockKind.HEADING
CODE = types.BlockKind.CODE


def estimate_tokens(text: str) -> int:
    """The Rust SDK's rule: ~4 ASCII characters or 1 other character per token."""
    ascii_chars = sum(1 for c in text if c.isascii() and not c.isspace())
    other = sum(1 for c in text if not c.isascii() and not c.isspace())
    return (ascii_chars + 3) // 4 + other


def lines_span(start: int, end: int) -> types.Span:
    return types.Span_Lines(types.LineRange(start=start, end=end))


def headline(line: str):
    """(level, title) of a headline, else None."""
    stars = len(line) - len(line.lstrip("*"))
    if stars == 0 or not line[stars:].startswith(" "):
        return None
    words = line[stars:].split()
    if words and words[0] in TODO_KEYWORDS:
        words = words[1:]
    if words and words[0].startswith("[#") and words[0].endswith("]"):
        words = words[1:]
    if words and len(words[-1]) > 2 and words[-1].startswith(":") and words[-1].endswith(":"):
        words = words[:-1]
    title = " ".join(words)
    return (min(stars, 255), title) if title else None


def begin_name(line: str):
    """The block name of a ``#+BEGIN_name`` line."""
    if line[:8].lower() != "#+begin_":
        return None
    rest = line[8:].split()
    return rest[0] if rest else None


def drawer_start(line: str) -> bool:
    t = line.strip()
    return (
        len(t) > 2
        and t.startswith(":")
        and t.endswith(":")
        and t.upper() != ":END:"
        and all(c.isalnum() or c in "_-" for c in t[1:-1])
    )


def list_item(line: str) -> bool:
    t = line.lstrip()
    if t.startswith(("- ", "+ ")) or (t.startswith("* ") and line != t):
        return True
    digits = len(t) - len(t.lstrip("0123456789"))
    return digits > 0 and t[digits:].startswith((". ", ") "))


class Outline:
    """Blocks in order, each with its section's heading path."""

    def __init__(self, lines):
        self.lines = lines
        self.headings = []
        self.blocks = []
        self.title = None

    def heading(self, level, title, index):
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, title))
        self.add(HEADING, index, index, None, level)

    def add(self, kind, first, last, lang=None, level=None):
        text = "\n".join(self.lines[first : last + 1])
        if not text.strip():
            return
        self.blocks.append(
            types.Block(
                kind=kind,
                heading_path=[t for _, t in self.headings],
                span=lines_span(first + 1, last + 1),
                text=text,
                level=level,
                lang=lang,
            )
        )


def parse_org(text: str) -> types.Document:
    lines = text.splitlines()
    out = Outline(lines)
    blank = lambda line: not line.strip()  # noqa: E731
    i = 0
    while i < len(lines):
        line = lines[i]
        trimmed = line.lstrip()
        if blank(line) or trimmed.startswith("# ") or trimmed.strip() == "#":
            i += 1
            continue
        head = headline(line)
        if head:
            out.heading(head[0], head[1], i)
            i += 1
            continue
        name = begin_name(trimmed)
        if name:
            end_marker = "#+end_" + name.lower()
            close = next(
                (j for j in range(i + 1, len(lines)) if lines[j].strip().lower() == end_marker),
                len(lines) - 1,
            )
            lower = name.lower()
            if lower == "src":
                words = trimmed.split()
                lang = words[1].lower() if len(words) > 1 and not words[1].startswith(":") else None
                out.add(CODE, i, close, lang)
            elif lower == "example":
                out.add(CODE, i, close)
            elif lower == "quote":
                out.add(types.BlockKind.QUOTE, i, close)
            else:
                out.add(types.BlockKind.PARAGRAPH, i, close)
            i = close + 1
            continue
        if trimmed.startswith("#+"):
            key, _, value = trimmed[2:].partition(":")
            if key.lower() == "title" and value.strip() and out.title is None:
                out.title = value.strip()
            i += 1
            continue
        if drawer_start(trimmed):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().upper() == ":END:"), i)
            i = end + 1
            continue
        if trimmed.startswith("|"):
            end = i
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            out.add(types.BlockKind.TABLE, i, end - 1)
            i = end
            continue
        end = i
        while (
            end < len(lines)
            and not blank(lines[end])
            and headline(lines[end]) is None
            and begin_name(lines[end].lstrip()) is None
        ):
            end += 1
        kind = types.BlockKind.LIST if list_item(line) else types.BlockKind.PARAGRAPH
        out.add(kind, i, end - 1)
        i = end
    title = out.title
    if title is None:
        tops = [b for b in out.blocks if b.kind == HEADING]
        if tops:
            title = min(tops, key=lambda b: b.level).heading_path[-1]
    return types.Document(title=title, lang=None, blocks=out.blocks, metadata=[])


def sections(blocks):
    """Block indexes grouped by section; an empty headline joins the next."""
    groups = []
    for index, block in enumerate(blocks):
        starts = block.kind == HEADING
        joins = groups and len(groups[-1]) > 0 and all(blocks[j].kind == HEADING for j in groups[-1])
        if starts and not (joins and block.level > blocks[groups[-1][-1]].level):
            groups.append([index])
        elif groups:
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def pieces(block, target):
    """A block as (text, first line, last line) pieces within the target
    (a source block stays whole)."""
    first, last = block.span.value.start, block.span.value.end
    if block.kind == CODE or estimate_tokens(block.text) <= target:
        return [(block.text, first, last)]
    out, run, start = [], [], first
    for offset, line in enumerate(block.text.split("\n")):
        if run and estimate_tokens("\n".join(run + [line])) > target:
            out.append(("\n".join(run), start, first + offset - 1))
            run, start = [], first + offset
        run.append(line)
    out.append(("\n".join(run), start, last))
    return out


def merged_spans(ranges):
    """Line ranges as spans, neighbours (at most one line apart) merged."""
    merged = []
    for first, last in ranges:
        if merged and first <= merged[-1][1] + 2:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return [lines_span(first, last) for first, last in merged]


def chunk_org(doc: types.Document, policy: types.ChunkPolicy):
    target = max(policy.target_tokens, 1)
    chunks = []
    for group in sections(doc.blocks):
        path = doc.blocks[group[-1]].heading_path
        packed = []  # (block index, text, first, last)

        def flush():
            if packed:
                chunks.append(
                    types.Chunk(
                        text="\n\n".join(p[1] for p in packed),
                        heading_path=path,
                        blocks=sorted({p[0] for p in packed}),
                        spans=merged_spans([(p[2], p[3]) for p in packed]),
                    )
                )
                packed.clear()

        for index in group:
            for text, first, last in pieces(doc.blocks[index], target):
                tokens = sum(estimate_tokens(p[1]) for p in packed)
                if packed and tokens + estimate_tokens(text) > target:
                    flush()
                packed.append((index, text, first, last))
        flush()
    return chunks


class Parser(exports.Parser):
    def info(self) -> types.PluginInfo:
        return types.PluginInfo(
            name="org",
            version=VERSION,
            parser_version=PARSER,
            chunker_version=CHUNKER,
            handles=["*.org"],
            accepts_binary=False,
        )

    def parse(self, path: str, bytes: bytes) -> types.Document:
        try:
            text = bytes.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Err(types.Error_Malformed(f"invalid UTF-8 at byte {e.start}"))
        return parse_org(text)

    def chunk_document(self, doc: types.Document, policy: types.ChunkPolicy) -> list[types.Chunk]:
        return chunk_org(doc, policy)
