"""The OpenFeature Python SDK with its OFREP provider, reading flags from discfg.

Usage: ofrep_client.py BASE_URL [TOKEN]

BASE_URL is an OFREP base URL (http://HOST:PORT/v1/CONFIG); TOKEN, if given, is sent as
a bearer token. Each line of standard input is one evaluation,
{"type": "boolean"|"string"|"integer"|"float"|"object", "flag": KEY, "default": VALUE,
 "targetingKey": KEY or absent, "attributes": {...}}, and each line of standard output
the SDK's details of it, in order: {"value", "pytype", "reason", "variant",
"errorCode", "errorMessage", "metadata"}.

Needs openfeature-sdk and openfeature-provider-ofrep (scripts/setup installs them); a
missing package fails with ModuleNotFoundError.
"""

import json
import sys

from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext


def main() -> None:
    base = sys.argv[1]
    token = sys.argv[2] if len(sys.argv) > 2 else None
    headers = (lambda: {"Authorization": f"Bearer {token}"}) if token else None
    api.set_provider(OFREPProvider(base, headers_factory=headers))
    client = api.get_client()
    resolvers = {
        "boolean": client.get_boolean_details,
        "string": client.get_string_details,
        "integer": client.get_integer_details,
        "float": client.get_float_details,
        "object": client.get_object_details,
    }
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        context = EvaluationContext(case.get("targetingKey"), case.get("attributes", {}))
        details = resolvers[case["type"]](case["flag"], case["default"], context)
        reason = details.reason
        code = details.error_code
        print(json.dumps({
            "value": details.value,
            "pytype": type(details.value).__name__,
            "reason": getattr(reason, "value", reason),
            "variant": details.variant,
            "errorCode": getattr(code, "value", code),
            "errorMessage": details.error_message,
            "metadata": dict(details.flag_metadata or {}),
        }), flush=True)


if __name__ == "__main__":
    main()
