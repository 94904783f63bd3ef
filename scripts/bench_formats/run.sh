#!/usr/bin/env bash
# Format-plugin and OCR measurements (issues 48 and 49). Raw results go to
# $OUT (default /tmp/bench/results); the report is written by hand from them.
#
#   scripts/bench_formats/run.sh [prepare] [native] [sandbox] [mixed] [ocr]
#
# prepare  generate the corpora (make_mixed.py big / mixed, the OCR pages of
#          tests/fixtures/ocr/make_scans.py, legacy .doc/.ppt/.xls through
#          LibreOffice) and compile every plugin component into a warm cache
# native   the plugins' parse+chunk compiled natively (native/, release) on
#          the big files
# sandbox  the same big files through the wasm sandbox: `kebab plugin test`
#          (two runs + output validation per file) and `kebab ingest` of
#          each file alone (timings.parse_ms, wall, peak RSS)
# mixed    `kebab ingest` of the 1,000 mixed office files: wall, docs/s,
#          peak RSS (two runs, each into a fresh data dir)
# ocr      OCR seconds per page through kebab ingest vs the tesseract CLI,
#          peak RSS, and a second ingest on the same cache dir
#
# The guest-only share of a sandboxed run was taken by hand with perf:
#   perf record -F 999 -o perf.data kebab --json plugin test office big.docx
#   perf report -i perf.data --no-children --sort dso --stdio   # the .cwasm line
#
# Environment: KEBAB (binary; default /tmp/bench/kebab, a copy of the dev
# build), BENCH (work dir; default /tmp/bench), OUT.
set -euo pipefail
shopt -s nullglob
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
BENCH="${BENCH:-/tmp/bench}"
KEBAB="${KEBAB:-$BENCH/kebab}"
OUT="${OUT:-$BENCH/results}"
NATIVE="${NATIVE:-$BENCH/target/release/bench-formats-native}"
CORPUS="$BENCH/corpus"
WARM="$BENCH/cache_warm"
CFG="$BENCH/cfg.toml"
mkdir -p "$OUT"

sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(prepare native sandbox mixed ocr)

# No embedding model (parse/chunk/store/lexical only); big files allowed.
printf '[models.embedding]\nmodel = ""\n\n[indexing]\nmax_file_mb = 64\n' >"$CFG"
export KEBAB_CONFIG="$CFG"

# A cache dir holding only the compiled plugin components (no OCR results),
# so a run times the work, not cranelift compiling the plugins.
fresh_cache() { # fresh_cache DIR
    rm -rf "$1"
    mkdir -p "$1"
    cp -r "$WARM/components" "$1/"
}

# cer GOT WANT: character error rate, whitespace runs as one space (as
# scripts/bench_ocr.sh computes it), and with all whitespace removed (the
# tesseract CLI puts spaces between Hangul syllables).
cer() {
    python3 - "$1" "$2" <<'EOF'
import sys
def cer(got, want):
    prev = list(range(len(want) + 1))
    for i, a in enumerate(got, 1):
        cur = [i] + [0] * len(want)
        for j, b in enumerate(want, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a != b))
        prev = cur
    return prev[-1] / max(1, len(want))
got, want = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
spaced = cer(" ".join(got.split()), " ".join(want.split()))
bare = cer("".join(got.split()), "".join(want.split()))
print(f"CER {spaced:.4f} (whitespace ignored: {bare:.4f})")
EOF
}

# ingest_timed NAME PATH DATA CACHE: one `kebab ingest` under /usr/bin/time -v;
# the report (last JSON line) in $OUT/NAME.json, time's output in NAME.time.
ingest_timed() {
    local name="$1" path="$2" data="$3" cache="$4"
    /usr/bin/time -v -o "$OUT/$name.time" env KEBAB_DATA_DIR="$data" KEBAB_CACHE_DIR="$cache" \
        "$KEBAB" --json ingest "$path" | tail -1 >"$OUT/$name.json"
    python3 - "$OUT/$name.json" "$OUT/$name.time" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read()
wall = re.search(r"Elapsed \(wall clock\) time.*: (.*)", t).group(1)
parts = [float(p) for p in wall.split(":")]
secs = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
user = float(re.search(r"User time \(seconds\): (.*)", t).group(1))
sys_ = float(re.search(r"System time \(seconds\): (.*)", t).group(1))
tm = r["timings"]
print(f"{sys.argv[1].rsplit('/', 1)[-1][:-5]}: wall {secs:.2f} s (user {user:.2f}, sys {sys_:.2f}), "
      f"peak RSS {rss / 1024:.0f} MiB, scanned {r['scanned']}, new {r['new']}, errors {r['errors']}, "
      f"skipped {r['skipped']}, chunks {r['chunks_indexed']}, duration_ms {r['duration_ms']}, "
      f"parse_ms {tm['parse_ms']:.0f}, store_ms {tm['store_ms']:.0f}, cjk_ms {tm['korean_ms']:.0f}, "
      f"lexical_ms {tm['lexical_ms']:.0f}, ocr_images {r['ocr_images']}, ocr_cached {r['ocr_cached']}")
EOF
}

machine() {
    {
        echo "date: $(date -u +%FT%TZ)"
        echo "uptime: $(uptime)"
        echo "cores: $(nproc)"
        grep -m1 'model name' /proc/cpuinfo
        echo "flags (of interest): $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|avx512f|avx512_vnni|avx512bw|fma' | tr '\n' ' ')"
        echo "kebab: $KEBAB ($("$KEBAB" --version))"
        echo "eval beir running: $(pgrep -fa 'eval beir' | head -1 || echo no)"
    } | tee -a "$OUT/machine.txt"
}

for s in "${sections[@]}"; do
    case "$s" in
    prepare)
        mkdir -p "$CORPUS"
        [ -f "$CORPUS/big/units.tsv" ] || python3 "$here/make_mixed.py" big "$CORPUS/big"
        [ -d "$CORPUS/mixed" ] || python3 "$here/make_mixed.py" mixed "$CORPUS/mixed" --count 1000
        if [ ! -d "$CORPUS/legacy" ]; then
            mkdir -p "$CORPUS/legacy"
            for pair in big.docx:doc big.pptx:ppt big.xlsx:xls; do
                timeout 600 soffice --headless --convert-to "${pair##*:}" --outdir "$CORPUS/legacy" \
                    "$CORPUS/big/${pair%%:*}" >/dev/null 2>&1 || echo "soffice: ${pair} failed" >&2
            done
        fi
        [ -d "$BENCH/ocr/pages" ] ||
            python3 "$root/tests/fixtures/ocr/make_scans.py" --out "$BENCH/ocr/crops" --pages "$BENCH/ocr/pages"
        if [ ! -d "$WARM/components" ]; then
            # The first start compiles every built-in component (cranelift).
            KEBAB_DATA_DIR="$BENCH/data_warm" KEBAB_CACHE_DIR="$WARM" \
                "$KEBAB" --json plugin test office "$root/tests/fixtures/formats/office/notes.docx" >/dev/null
        fi
        ;;
    native)
        machine
        "$NATIVE" --repeat 5 "$CORPUS"/big/big.* "$CORPUS"/legacy/big.* | tee "$OUT/native.txt"
        ;;
    sandbox)
        machine
        : >"$OUT/plugin_test.txt"
        for f in "$CORPUS"/big/big.* "$CORPUS"/legacy/big.*; do
            case "$f" in
            *.docx | *.odt | *.rtf | *.pptx | *.odp | *.doc | *.ppt) plugin=office ;;
            *.xlsx | *.ods | *.csv | *.xls) plugin=sheets ;;
            *.epub) plugin=epub ;;
            *.mbox) plugin=mail ;;
            *) continue ;;
            esac
            for rep in 1 2 3; do
                KEBAB_DATA_DIR="$BENCH/data_pt" KEBAB_CACHE_DIR="$WARM" \
                    "$KEBAB" --json plugin test "$plugin" "$f" |
                    python3 -c 'import json,sys; r=json.load(sys.stdin); f=r["files"][0]; print("\t".join([f["path"], r["plugin"], "ok %s" % f["ok"], "blocks %s" % f["blocks"], "chunks %s" % f["chunks"], "ms(2 runs+validate) %s" % f["ms"], f["error"] or ""]))' |
                    tee -a "$OUT/plugin_test.txt"
            done
            # A folder holding only this file (a file outside every root
            # would be copied into the data dir first).
            name="ingest_$(basename "$f" | tr . _)"
            one="$CORPUS/one/$name"
            mkdir -p "$one"
            [ -e "$one/$(basename "$f")" ] || ln "$f" "$one/"
            rm -rf "$BENCH/data_one"
            ingest_timed "$name" "$one" "$BENCH/data_one" "$WARM" | tee -a "$OUT/ingest_big.txt"
        done
        ;;
    mixed)
        machine
        for rep in 1 2; do
            rm -rf "$BENCH/data_mixed"
            ingest_timed "mixed_$rep" "$CORPUS/mixed" "$BENCH/data_mixed" "$WARM" | tee -a "$OUT/mixed.txt"
        done
        ;;
    ocr)
        machine
        tesseract --version 2>&1 | head -1 | tee -a "$OUT/machine.txt"
        p="$BENCH/ocr/pages"
        mkdir -p "$BENCH/ocr/in"
        : >"$OUT/ocr.txt"
        # Start-up floor: the same ingest of a one-line text file.
        mkdir -p "$BENCH/ocr/in/floor"
        echo "hello" >"$BENCH/ocr/in/floor/floor.txt"
        rm -rf "$BENCH/data_ocr"
        fresh_cache "$BENCH/cache_floor"
        ingest_timed ocr_floor "$BENCH/ocr/in/floor" "$BENCH/data_ocr" "$BENCH/cache_floor" | tee -a "$OUT/ocr.txt"
        for img in "$p/a4_clean_300dpi.png" "$p/a4_photo.png" \
            "$root/tests/fixtures/ocr/clean_300dpi.png" "$root/tests/fixtures/ocr/photo.png"; do
            tag="$(basename "$(dirname "$img")")_$(basename "$img" .png)"
            case "$img" in */pages/*) expected="$p/a4_expected.txt" ;; *) expected="$root/tests/fixtures/ocr/expected.txt" ;; esac
            dir="$BENCH/ocr/in/$tag"
            mkdir -p "$dir"
            cp "$img" "$dir/"
            # First: a cache with the compiled plugins but no OCR results.
            fresh_cache "$BENCH/cache_ocr"
            rm -rf "$BENCH/data_ocr"
            ingest_timed "ocr_${tag}_cold" "$dir" "$BENCH/data_ocr" "$BENCH/cache_ocr" | tee -a "$OUT/ocr.txt"
            doc_id="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["items"][0]["doc_id"])' "$OUT/ocr_${tag}_cold.json")"
            KEBAB_DATA_DIR="$BENCH/data_ocr" KEBAB_CACHE_DIR="$BENCH/cache_ocr" "$KEBAB" --json fetch doc "$doc_id" |
                python3 -c 'import json,sys; sys.stdout.write(json.load(sys.stdin)["text"])' >"$OUT/kebab_${tag}.txt"
            echo "kebab $tag: $(cer "$OUT/kebab_${tag}.txt" "$expected")" | tee -a "$OUT/ocr.txt"
            # Again: a fresh data dir, the same cache dir.
            rm -rf "$BENCH/data_ocr"
            ingest_timed "ocr_${tag}_cached" "$dir" "$BENCH/data_ocr" "$BENCH/cache_ocr" | tee -a "$OUT/ocr.txt"
            # The tesseract CLI on the same image, same language, one
            # thread and its default threads.
            for omp in 1 default; do
                if [ "$omp" = 1 ]; then envs=(OMP_THREAD_LIMIT=1); else envs=(); fi
                /usr/bin/time -f "%e s wall, %U s user, %S s sys, peak RSS %M KB" -o "$OUT/cli.time" \
                    env "${envs[@]}" tesseract "$img" "$OUT/cli_${tag}_$omp" -l Hangul 2>/dev/null
                echo "tesseract CLI $tag -l Hangul OMP_THREAD_LIMIT=$omp: $(cat "$OUT/cli.time"), $(cer "$OUT/cli_${tag}_$omp.txt" "$expected")" | tee -a "$OUT/ocr.txt"
            done
        done
        # Both A4 pages in one ingest (two extract workers, OCR workers = cores).
        mkdir -p "$BENCH/ocr/two"
        cp "$p/a4_clean_300dpi.png" "$p/a4_photo.png" "$BENCH/ocr/two/"
        fresh_cache "$BENCH/cache_ocr"
        rm -rf "$BENCH/data_ocr"
        ingest_timed ocr_two_pages_cold "$BENCH/ocr/two" "$BENCH/data_ocr" "$BENCH/cache_ocr" | tee -a "$OUT/ocr.txt"
        rm -rf "$BENCH/data_ocr"
        ingest_timed ocr_two_pages_cached "$BENCH/ocr/two" "$BENCH/data_ocr" "$BENCH/cache_ocr" | tee -a "$OUT/ocr.txt"
        ;;
    *)
        echo "unknown section: $s" >&2
        exit 2
        ;;
    esac
done
