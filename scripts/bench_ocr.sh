#!/usr/bin/env bash
# OCR benchmark: the host's Tesseract engine against the `tesseract` CLI on
# the same full A4 pages (Korean and English prose, rendered by
# tests/fixtures/ocr/make_scans.py): seconds per page (wall and CPU),
# characters wrong, peak RSS, handle initialisation per language set and
# what each language added to a page costs.
#
#   scripts/bench_ocr.sh [PAGES_DIR]
#
# The engine runs through the `ocr_bench` example of kebab-plugin-host
# (OCR_BENCH names a built binary instead). Needs what setup-ocr.sh
# installs, plus the `tesseract` CLI (Debian: tesseract-ocr) and
# /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
pages="${1:-${TMPDIR:-/tmp}/kebab-ocr-pages}"
mkdir -p "$pages"
python3 tests/fixtures/ocr/make_scans.py --out "$pages/crops" --pages "$pages" 2>/dev/null

bench="${OCR_BENCH:-}"
if [ -z "$bench" ]; then
    cargo build --release -q -p kebab-plugin-host --example ocr_bench
    bench="${CARGO_TARGET_DIR:-target}/release/examples/ocr_bench"
fi

cer() { # cer GOT_FILE WANT_FILE: edit distance / expected length, whitespace runs as one space
    python3 - "$1" "$2" <<'EOF'
import sys
norm = lambda s: " ".join(s.split())
got, want = (norm(open(p, encoding="utf-8").read()) for p in sys.argv[1:3])
prev = list(range(len(want) + 1))
for i, a in enumerate(got, 1):
    cur = [i] + [0] * len(want)
    for j, b in enumerate(want, 1):
        cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a != b))
    prev = cur
print(f"CER {prev[-1] / max(1, len(want)):.4f}")
EOF
}

echo "== machine"
echo "cores: $(nproc); $(uptime)"
grep -m1 'model name' /proc/cpuinfo
grep -m1 '^flags' /proc/cpuinfo
tesseract --version 2>&1 | sed -n '1,2p;/Found/p'

echo "== handle initialisation per language set (one engine each)"
"$bench" --init Hangul eng kor kor+eng kor+eng+jpn kor+eng+chi_sim kor+eng+jpn+chi_sim+chi_tra

echo "== the engine (default: Hangul, one worker), three reads per page"
for page in a4_clean_300dpi a4_photo a4_rotated_90 a4_skewed_4 a4_100dpi; do
    "$bench" --expected "$pages/a4_expected.txt" --repeat 3 "$pages/$page.png" | grep -v '^probe'
done

echo "== the tesseract CLI on the same pages (-l Hangul; psm 3)"
for page in a4_clean_300dpi a4_photo; do
    for omp in 1 default; do
        out="$pages/cli_${page}_$omp"
        if [ "$omp" = 1 ]; then
            /usr/bin/time -f "%e s wall, %U s user, %S s sys, peak RSS %M KB" -o "$out.time" \
                env OMP_THREAD_LIMIT=1 tesseract "$pages/$page.png" "$out" -l Hangul 2>/dev/null
        else
            /usr/bin/time -f "%e s wall, %U s user, %S s sys, peak RSS %M KB" -o "$out.time" \
                tesseract "$pages/$page.png" "$out" -l Hangul 2>/dev/null
        fi
        echo "$page.png, OMP_THREAD_LIMIT=$omp: $(cat "$out.time"), $(cer "$out.txt" "$pages/a4_expected.txt")"
    done
done

echo "== what each language costs a page (engine, clean A4)"
for langs in Hangul eng kor+eng kor+eng+jpn kor+eng+chi_sim kor+eng+jpn+chi_sim+chi_tra; do
    echo -n "$langs: "
    "$bench" --langs "$langs" --expected "$pages/a4_expected.txt" "$pages/a4_clean_300dpi.png" | grep '^a4_'
done

echo "== two workers, four pages at once"
/usr/bin/time -f "%e s wall, %U s user, peak RSS %M KB" "$bench" --workers 2 --parallel \
    "$pages/a4_clean_300dpi.png" "$pages/a4_photo.png" "$pages/a4_skewed_4.png" "$pages/a4_rotated_90.png" |
    grep -v '^probe'
