#!/usr/bin/env bash
# Build kebab and run it on the bundled sample corpus: ingest, then search.
# The index goes to a throw-away data dir unless KEBAB_DATA_DIR is set.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

cargo build -p kebab --bin kebab
kebab="$CARGO_TARGET_DIR/debug/kebab"
data="${KEBAB_DATA_DIR:-$(mktemp -d)/kebab-demo}"
export KEBAB_CONFIG="${KEBAB_CONFIG:-$data/config.toml}"

echo "== kebab init"
"$kebab" --data-dir "$data" init
echo
echo "== kebab ingest samples/notes"
"$kebab" --data-dir "$data" ingest samples/notes
echo
for q in "${@:-leader election log replication}"; do
    echo "== kebab search \"$q\""
    "$kebab" --data-dir "$data" search "$q" --k 3
    echo
done
echo "== kebab list docs"
"$kebab" --data-dir "$data" list docs | tail -n 4
echo
echo "index kept in $data (pass --data-dir $data to query it again)"
