#!/usr/bin/env python3
"""Validate mgbench results documents against the JSON Schema.

usage: validate_results.py SCHEMA PATH [PATH...]
PATH is a results file or a directory searched recursively for *.json files that carry a
"schema_version" key (other JSON files there are ignored). Exits 1 on the first invalid
document, 2 when nothing was validated or the arguments are wrong.
"""
import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:  # exit 77: CTest reports the check as skipped, never as passed
    print("python3-jsonschema is not installed: schema validation skipped", file=sys.stderr)
    sys.exit(77)


# Versions the schema describes (1: before "presentation"). Other versions found in a directory
# are deliberately wrong test inputs.
SCHEMA_VERSIONS = (1, 2)


def candidates(path):
    p = pathlib.Path(path)
    if p.is_dir():
        for f in sorted(p.rglob("*.json")):
            try:
                doc = json.loads(f.read_text())
            except (ValueError, UnicodeDecodeError):
                continue  # deliberately malformed test inputs live there too
            if isinstance(doc, dict) and doc.get("schema_version") in SCHEMA_VERSIONS:
                yield f, doc
    else:
        yield p, json.loads(p.read_text())


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema = json.loads(pathlib.Path(argv[1]).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    count = 0
    for target in argv[2:]:
        for f, doc in candidates(target):
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
            if errors:
                e = errors[0]
                loc = "/".join(str(x) for x in e.path)
                print(f"{f}: invalid at '{loc}': {e.message}", file=sys.stderr)
                return 1
            count += 1
    if count == 0:
        print("no results documents found", file=sys.stderr)
        return 2
    print(f"{count} results document(s) valid")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
