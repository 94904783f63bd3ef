"""A kebab parser plugin in Python: CSV and TSV files.

Every data row becomes a table block with its exact line span; chunks group
rows up to the token target and repeat the header row, so a chunk always
says what its columns mean. Built into a WebAssembly component with
componentize-py (see build.sh).
"""

import csv
import io

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import log, types

VERSION = "0.1.0"
CHUNKER = "csv-rows-v1"


def estimate_tokens(text: str) -> int:
    """Same rule as the Rust SDK: ~4 ASCII characters or 1 other character per token."""
    ascii_chars = sum(1 for c in text if c.isascii() and not c.isspace())
    other = sum(1 for c in text if not c.isascii() and not c.isspace())
    return (ascii_chars + 3) // 4 + other


def lines_span(start: int, end: int) -> types.Span:
    return types.Span_Lines(types.LineRange(start=start, end=end))


class Parser(exports.Parser):
    def info(self) -> types.PluginInfo:
        return types.PluginInfo(
            name="csv",
            version=VERSION,
            parser_version="python-csv-v1",
            chunker_version=CHUNKER,
            handles=["*.csv", "*.tsv"],
            accepts_binary=False,
        )

    def parse(self, path: str, bytes: bytes) -> types.Document:
        try:
            text = bytes.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Err(types.Error_Malformed(f"invalid UTF-8 at byte {e.start}"))
        delimiter = "\t" if path.lower().endswith(".tsv") else ","
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        blocks = []
        header = None
        previous_end = 0
        try:
            for row in reader:
                start, end = previous_end + 1, reader.line_num
                previous_end = end
                if not any(cell.strip() for cell in row):
                    continue
                if header is None:
                    header = row
                    kind = types.BlockKind.HEADING
                else:
                    kind = types.BlockKind.TABLE
                source = "\n".join(text.splitlines()[start - 1 : end])
                blocks.append(
                    types.Block(
                        kind=kind,
                        heading_path=[],
                        span=lines_span(start, end),
                        text=source,
                        level=1 if kind == types.BlockKind.HEADING else None,
                        lang=None,
                    )
                )
        except csv.Error as e:
            raise Err(types.Error_Malformed(f"line {reader.line_num}: {e}"))
        if header is None:
            raise Err(types.Error_Unsupported("no rows"))
        log.log(log.Level.DEBUG, f"{len(blocks) - 1} rows, {len(header)} columns")
        return types.Document(
            title=None,
            lang=None,
            blocks=blocks,
            metadata=[("columns", ",".join(header)), ("rows", str(len(blocks) - 1))],
        )

    def chunk_document(self, doc: types.Document, policy: types.ChunkPolicy) -> list[types.Chunk]:
        if not doc.blocks:
            return []
        header = doc.blocks[0]
        budget = max(policy.target_tokens, 1)
        chunks = []
        group = []
        tokens = estimate_tokens(header.text)

        def flush():
            if group:
                rows = [doc.blocks[i] for i in group]
                chunks.append(
                    types.Chunk(
                        text="\n".join([header.text] + [r.text for r in rows]),
                        heading_path=[],
                        blocks=[0] + group,
                        spans=[header.span, lines_span(rows[0].span.value.start, rows[-1].span.value.end)],
                    )
                )

        for index in range(1, len(doc.blocks)):
            cost = estimate_tokens(doc.blocks[index].text)
            if group and tokens + cost > budget:
                flush()
                group = []
                tokens = estimate_tokens(header.text)
            group.append(index)
            tokens += cost
        flush()
        return chunks
