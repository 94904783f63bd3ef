#!/usr/bin/env bash
# Multilingual retrieval evaluation: the golden suites under
# tests/fixtures/eval-multilingual/ (24 parallel passages in English,
# Korean, Japanese and Simplified Chinese, one paraphrased question per
# passage and language) measured by `kebab eval run` in lexical, vector and
# hybrid mode, per direction (question language -> passage language).
#
#   scripts/eval_multilingual.sh [KEBAB_BIN]      # else `kebab` on PATH
#
# Every passage language is indexed into a data directory of its own
# ($OUT/<config>/data-<lang>), so a cross-language suite (KO questions,
# EN passages) cannot be answered by the question's own-language passage.
# Configurations (CONFIGS, default "e5 minilm e5-noja e5-nofloor"):
#   e5       multilingual-e5-small, Korean (ko-dic) and Japanese (ja-dic) dictionaries
#   minilm   all-MiniLM-L6-v2 (English-only model), same dictionaries
#   e5-noja  e5 without the Japanese dictionary (Japanese then read by jieba);
#            only the ja-ja and zh-zh suites
#   e5-nofloor  e5 with `[search] min_vector_score = 0.0`: no similarity floor
#            (the model card's 0.78 drops most cross-language neighbours)
# Prints a markdown table per configuration (hit@1, hit@3, hit@10, MRR@10,
# nDCG@10 per direction and mode; hit@1/hit@3 are read off each query's
# reciprocal rank at k=10; "hits returned" is the mean number of chunks a
# query got, at most 10) and writes it, with every question that missed
# rank 1 and the documents ranked above it, to $OUT/summary.md.
#
# Environment: OUT (default /tmp/mleval), ASSETS (models and dictionaries,
# default ~/.cache/kebab-assets: models/multilingual-e5-small,
# models/all-minilm-l6-v2, onnxruntime/, ko-dic/, ja-dic/), CONFIGS,
# DIRECTIONS (default: all ten suites). Needs python3.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
fx="$root/tests/fixtures/eval-multilingual"
bin="${1:-$(command -v kebab || true)}"
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "usage: $0 [KEBAB_BIN]   (or put kebab on PATH)" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
out="${OUT:-/tmp/mleval}"
assets="${ASSETS:-$HOME/.cache/kebab-assets}"
configs="${CONFIGS:-e5 minilm e5-noja e5-nofloor}"
all_directions="${DIRECTIONS:-ko-ko ko-en en-ko ja-ja zh-zh en-en ja-en zh-en en-ja en-zh}"
mkdir -p "$out/cache" "$out/logs" "$out/empty-xdg-cache"

write_config() { # write_config NAME FILE
    local model path ja=1 floor=""
    case "$1" in
        e5) model=multilingual-e5-small ;;
        minilm) model=all-minilm-l6-v2 ;;
        e5-noja) model=multilingual-e5-small; ja=0 ;;
        e5-nofloor) model=multilingual-e5-small; floor=0.0 ;;
        *) echo "unknown config $1" >&2; exit 2 ;;
    esac
    path="$assets/models/$model"
    {
        printf '[models.embedding]\nmodel = "%s"\npath = "%s"\nruntime = "%s"\n' \
            "$model" "$path" "$assets/onnxruntime"
        printf '[models.korean]\ndictionary = "%s"\n' "$assets/ko-dic"
        if [ "$ja" = 1 ]; then
            printf '[models.japanese]\ndictionary = "%s"\n' "$assets/ja-dic"
        fi
        if [ -n "$floor" ]; then
            printf '[search]\nmin_vector_score = %s\n' "$floor"
        fi
    } > "$2"
}

kb() { # kb CONFIG_FILE DATA_DIR ARGS...: the binary, isolated from the user's setup
    local cfg="$1" data="$2"
    shift 2
    # An empty XDG cache keeps kebab from finding dictionaries of the user's
    # (~/.cache/kebab/models/ja-dic) that the configuration does not name.
    XDG_CACHE_HOME="$out/empty-xdg-cache" KEBAB_LOG_DIR="$out/logs" \
        KEBAB_CONFIG="$cfg" KEBAB_DATA_DIR="$data" KEBAB_CACHE_DIR="$out/cache" \
        "$bin" "$@"
}

echo "kebab: $bin ($("$bin" --version))" >&2
for c in $configs; do
    dir="$out/$c"
    mkdir -p "$dir"
    cfg="$dir/config.toml"
    write_config "$c" "$cfg"
    directions="$all_directions"
    if [ "$c" = e5-noja ]; then
        directions="$(for d in $all_directions; do case $d in ja-ja | zh-zh) echo "$d" ;; esac; done)"
    fi
    targets="$(for d in $directions; do echo "${d#*-}"; done | sort -u)"
    for t in $targets; do
        rm -rf "$dir/data-$t"
        echo "[$c] ingest corpus/$t" >&2
        kb "$cfg" "$dir/data-$t" --json ingest "$fx/corpus/$t" > "$dir/ingest-$t.ndjson" 2> "$dir/ingest-$t.err"
    done
    for d in $directions; do
        t="${d#*-}"
        echo "[$c] eval $d" >&2
        kb "$cfg" "$dir/data-$t" --json eval run "$fx/suites/$d.yaml" --k 10 \
            --mode lexical --mode vector --mode hybrid > "$dir/$d.json" 2> "$dir/$d.err"
    done
done

python3 - "$out" "$configs" "$all_directions" <<'EOF'
import json, os, sqlite3, sys
out, configs, directions = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
modes = ["lexical", "vector", "hybrid"]
lines, misses = [], []
for c in configs:
    lines += [f"### {c}", "", "| direction | mode | n | hit@1 | hit@3 | hit@10 | MRR@10 | nDCG@10 | hits returned |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for d in directions:
        path = f"{out}/{c}/{d}.json"
        if not os.path.exists(path):
            continue
        rep = json.load(open(path))
        db = sqlite3.connect(f"{out}/{c}/data-{d.split('-')[1]}/kebab.sqlite")
        where = dict(db.execute("SELECT c.chunk_id, d.workspace_path FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"))
        for m in modes:
            rows = [q for q in rep["per_query"] if q["mode"] == m]
            if not rows:
                continue
            n = len(rows)
            rr = [q["mrr"] or 0.0 for q in rows]
            h1 = sum(r >= 1.0 for r in rr) / n
            h3 = sum(r >= 1 / 3 - 1e-9 for r in rr) / n
            agg = rep["modes"][m]
            returned = sum(len(q["top_chunk_ids"]) for q in rows) / n
            lines.append(f"| {d.upper().replace('-', '→')} | {m} | {n} | {h1:.3f} | {h3:.3f} | {agg['hit_at_k']:.3f} | {agg['mrr']:.3f} | {agg['ndcg_at_10']:.3f} | {returned:.1f} |")
            for q in rows:
                if (q["mrr"] or 0) < 1.0:
                    rank = round(1 / q["mrr"]) if q["mrr"] else None
                    top = []
                    for cid in q["top_chunk_ids"][:3]:
                        p = where.get(cid, cid)
                        if p not in top:
                            top.append(p.removesuffix(".md"))
                    misses.append(f"| {c} | {q['id']} | {m} | {rank if rank else '>10 / none'} | {', '.join(top) or '(nothing)'} |")
    lines.append("")
text = "\n".join(lines)
print(text)
with open(f"{out}/summary.md", "w") as f:
    f.write(text + "\n### Questions not ranked first\n\n| config | query | mode | rank | top 3 found |\n|---|---|---|---|---|\n" + "\n".join(misses) + "\n")
print(f"{len(misses)} (query, mode) pairs missed rank 1; see {out}/summary.md", file=sys.stderr)
EOF
