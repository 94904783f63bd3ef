"""What the bench scripts share: the kebab configuration of the bundled
embedding model."""

import os


def model_config(assets: str) -> str:
    """`[models.embedding]` for a bundled model (all-MiniLM-L6-v2, or the
    one `KEBAB_BENCH_MODEL` names: `multilingual-e5-small`) and ONNX
    Runtime under ASSETS (as scripts/fetch-assets.sh lays them out)."""
    name = os.environ.get("KEBAB_BENCH_MODEL", "all-minilm-l6-v2")
    return (
        f'[models.embedding]\nmodel = "{name}"\n'
        f'path = "{assets}/models/{name}"\nruntime = "{assets}/onnxruntime"\n'
    )
