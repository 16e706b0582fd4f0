"""Validates api/openapi/openapi.json with a real OpenAPI validator (openapi-spec-validator).

Exits 77 (ctest: skipped) with a message when the validator is not installed; the document's own
checks (tests/api/openapi_test.cpp) run everywhere.
"""
import json
import sys

try:
    from openapi_spec_validator import validate
except ImportError:
    print("SKIP: openapi-spec-validator is not installed (pip install openapi-spec-validator)")
    sys.exit(77)

with open(sys.argv[1], encoding="utf-8") as f:
    document = json.load(f)
validate(document)
print(f"{sys.argv[1]}: valid OpenAPI {document['openapi']}, {len(document['paths'])} paths")
