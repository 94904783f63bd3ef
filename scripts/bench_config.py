"""What the bench scripts share: the kebab configuration of the bundled
embedding model."""


def model_config(assets: str) -> str:
    """`[models.embedding]` for the bundled all-MiniLM-L6-v2 and ONNX
    Runtime under ASSETS (as scripts/fetch-assets.sh lays them out)."""
    return (
        '[models.embedding]\nmodel = "all-minilm-l6-v2"\n'
        f'path = "{assets}/models/all-minilm-l6-v2"\nruntime = "{assets}/onnxruntime"\n'
    )
