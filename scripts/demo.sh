#!/usr/bin/env bash
# Build kebab and run it on the bundled sample corpus: ingest, then search.
# The index goes to a throw-away data dir unless KEBAB_DATA_DIR is set.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

# --workspace: the same feature set as the test command's build, so one
# target directory serves both (`-p kebab` alone unifies features
# differently and recompiles LanceDB and DataFusion).
cargo build --workspace --bins
kebab="$CARGO_TARGET_DIR/debug/kebab"
data="${KEBAB_DATA_DIR:-$(mktemp -d)/kebab-demo}"
export KEBAB_CONFIG="${KEBAB_CONFIG:-$data/config.toml}"

# Vector search with the multilingual model (multilingual-e5-small,
# converted from PyPI wheels by setup.sh) and Korean morphology with
# mecab-ko-dic (fetched by setup.sh; the dictionary is built once).
assets="$KEBAB_ASSETS_DIR"
if [ ! -f "$assets/ko-dic/metadata.json" ]; then
    echo "== kebab models import-ko-dic (once, about a minute)"
    "$kebab" --data-dir "$data" models import-ko-dic "$assets/mecab-ko-dic" --out "$assets/ko-dic"
    echo
fi
if [ ! -f "$KEBAB_CONFIG" ]; then
    mkdir -p "$(dirname "$KEBAB_CONFIG")"
    cat > "$KEBAB_CONFIG" <<EOF
[models.embedding]
model = "multilingual-e5-small"
path = "$assets/models/multilingual-e5-small"
runtime = "$assets/onnxruntime"

[models.korean]
dictionary = "$assets/ko-dic"
EOF
fi

echo "== kebab init"
"$kebab" --data-dir "$data" init
echo
echo "== kebab ingest samples/notes"
"$kebab" --data-dir "$data" ingest samples/notes
echo
queries=("$@")
if [ ${#queries[@]} -eq 0 ]; then
    queries=("leader election log replication" "why does my coffee taste sour" "커피가 시큼한 이유" "경복궁")
fi
for q in "${queries[@]}"; do
    echo "== kebab search \"$q\""
    "$kebab" --data-dir "$data" search "$q" --k 3
    echo
done
echo "== kebab list docs"
"$kebab" --data-dir "$data" list docs | tail -n 4
echo
echo "index kept in $data (pass --data-dir $data to query it again)"
