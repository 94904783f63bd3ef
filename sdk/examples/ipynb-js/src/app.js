// A kebab parser plugin in JavaScript: Jupyter notebooks (.ipynb).
//
// Each markdown or code cell becomes a block and a chunk, cited by the lines
// the cell occupies in the notebook file. Built into a WebAssembly component
// with jco / componentize-js (see build.sh).

const VERSION = "0.1.0";

function linesSpan(start, end) {
  return { tag: "lines", val: { start, end } };
}

// First line (1-based) of each cell object: nbformat writes cells with
// sorted keys, so "cell_type" opens every cell.
function cellStarts(text) {
  const starts = [];
  text.split("\n").forEach((line, i) => {
    if (/^\s*"cell_type"\s*:/.test(line)) starts.push(i + 1);
  });
  return starts;
}

function sourceText(cell) {
  return Array.isArray(cell.source) ? cell.source.join("") : String(cell.source ?? "");
}

export const parser = {
  info() {
    return {
      name: "ipynb",
      version: VERSION,
      parserVersion: "js-ipynb-v1",
      chunkerVersion: "ipynb-cell-v1",
      handles: ["*.ipynb"],
      acceptsBinary: false,
    };
  },

  parse(path, bytes) {
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (e) {
      throw { tag: "malformed", val: "invalid UTF-8" };
    }
    let nb;
    try {
      nb = JSON.parse(text);
    } catch (e) {
      throw { tag: "malformed", val: `not JSON: ${e.message}` };
    }
    if (!Array.isArray(nb.cells)) {
      throw { tag: "unsupported", val: "no cells: not an nbformat 4 notebook" };
    }
    const starts = cellStarts(text);
    if (starts.length !== nb.cells.length) {
      throw { tag: "malformed", val: "cell layout not recognised (expected nbformat's sorted keys)" };
    }
    const lineCount = text.replace(/\n$/, "").split("\n").length;
    const lang = nb.metadata?.kernelspec?.language ?? nb.metadata?.language_info?.name ?? "python";
    const blocks = [];
    let title;
    nb.cells.forEach((cell, i) => {
      const source = sourceText(cell);
      if (!source.trim() || cell.cell_type === "raw") return;
      const end = i + 1 < starts.length ? starts[i + 1] - 1 : lineCount;
      const isCode = cell.cell_type === "code";
      if (!title && !isCode) {
        const heading = source.match(/^#\s+(.+)$/m);
        if (heading) title = heading[1].trim();
      }
      blocks.push({
        kind: isCode ? "code" : "paragraph",
        headingPath: [],
        span: linesSpan(starts[i], end),
        text: source,
        level: undefined,
        lang: isCode ? lang : undefined,
      });
    });
    return { title, lang: undefined, blocks, metadata: [["kernel_language", lang]] };
  },

  chunkDocument(doc, policy) {
    return doc.blocks.map((block, i) => ({
      text: block.text,
      headingPath: block.headingPath,
      // list<u32> crosses the boundary as a typed array.
      blocks: Uint32Array.of(i),
      spans: [block.span],
    }));
  },
};
