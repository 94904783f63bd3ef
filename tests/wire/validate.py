"""Validate kebab's real `--json` output against the committed wire schemas
(docs/wire-schema/v1), for tests/e2e/wire_schema.rs.

Reads {"schema_dir": DIR, "instances": [[schema_id, value], ...]} on stdin;
exits 1 listing every instance that does not validate.
"""

import json
import os
import sys

from jsonschema import Draft202012Validator


def main():
    plan = json.load(sys.stdin)
    failures = []
    validators = {}
    for schema_id, value in plan["instances"]:
        if schema_id not in validators:
            name = schema_id.removesuffix(".v1") + ".schema.json"
            with open(os.path.join(plan["schema_dir"], name)) as f:
                validators[schema_id] = Draft202012Validator(json.load(f))
        for err in validators[schema_id].iter_errors(value):
            path = "/".join(str(p) for p in err.absolute_path)
            failures.append(f"{schema_id} at /{path}: {err.message}")
    if failures:
        print("\n".join(failures[:50]))
        sys.exit(1)
    print(f"{len(plan['instances'])} instances valid")


if __name__ == "__main__":
    main()
