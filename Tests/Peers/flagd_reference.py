#!/usr/bin/env python3
"""flagd's reference evaluator (openfeature-flagd-core from PyPI) as a peer of FlagsTests.

Reads JSON lines on standard input, one evaluation each:
  {"id": N, "set": {flag set}, "flag": KEY, "context": {...}, "type": "boolean"|...|null,
   "timestamp": UNIX_SECONDS}
and writes one JSON line per case on standard output:
  {"id": N, "setError": true}                          the flag set was refused
  {"id": N, "reason": R, "variant": V, "value": X, "errorCode": E}

The current generation of `fractional` (CBOR) is openfeature-flagd-core 2.0.0, installed in
this interpreter; the previous one (UTF-8 of flagKey + targetingKey) is 1.0.0's, whose
operators are loaded from the directory named by the first argument (scripts/setup installs
it there with pip --target). A flag set selects the previous one with the metadata member
"fractionalGeneration": "utf8", as discfg's evaluator does.
"""
import importlib.util
import json
import os
import sys
import types

from openfeature.evaluation_context import EvaluationContext
from openfeature.exception import OpenFeatureError
from openfeature.contrib.tools.flagd.core import FlagdCore
import openfeature.contrib.tools.flagd.core.targeting  # noqa: F401 - registers the module below

# The package's __init__ exports the function `targeting`, which hides the module of that name.
targeting_module = sys.modules["openfeature.contrib.tools.flagd.core.targeting.targeting"]

if len(sys.argv) != 2:
    sys.exit("usage: flagd_reference.py OPENFEATURE_FLAGD_CORE_1_0_0_DIR")
previous_ops_path = os.path.join(sys.argv[1], "openfeature/contrib/tools/flagd/core/targeting/custom_ops.py")
spec = importlib.util.spec_from_file_location("flagd_core_1_0_0_custom_ops", previous_ops_path)
previous_ops = importlib.util.module_from_spec(spec)
spec.loader.exec_module(previous_ops)
current_fractional = targeting_module.OPERATORS["fractional"]

# JSON Logic's "log" prints to standard output; keep that stream for answers only.
answers = sys.stdout
sys.stdout = sys.stderr

clock = {"now": 0}
targeting_module.time = types.SimpleNamespace(time=lambda: clock["now"])

DEFAULTS = {"boolean": False, "string": "", "integer": 0, "float": 0.0, "object": {}}


def evaluate(case):
    core = FlagdCore()
    flag_set = case["set"]
    try:
        core.set_flags(json.loads(json.dumps(flag_set)))
    except Exception:  # noqa: BLE001 - any refusal of the set is the answer
        return {"setError": True}
    metadata = flag_set.get("metadata") if isinstance(flag_set, dict) else None
    previous = isinstance(metadata, dict) and metadata.get("fractionalGeneration") == "utf8"
    targeting_module.OPERATORS["fractional"] = previous_ops.fractional if previous else current_fractional
    clock["now"] = case["timestamp"]
    context = dict(case["context"])
    evaluation_context = EvaluationContext(targeting_key=context.pop("targetingKey", None), attributes=context)
    kind = case.get("type")
    try:
        if kind is None:
            result = core._resolve(case["flag"], None, evaluation_context, None)
        else:
            resolve = getattr(core, f"resolve_{kind}_value")
            result = resolve(case["flag"], DEFAULTS[kind], evaluation_context)
    except OpenFeatureError as error:
        return {"reason": "ERROR", "errorCode": error.error_code.value}
    except Exception:  # noqa: BLE001 - the SDK reports any other failure as GENERAL
        return {"reason": "ERROR", "errorCode": "GENERAL"}
    reason = result.reason.value if hasattr(result.reason, "value") else result.reason
    answer = {"reason": reason, "variant": result.variant}
    if result.variant is not None:
        answer["value"] = result.value
    return answer


for line in sys.stdin:
    if not line.strip():
        continue
    case = json.loads(line)
    answer = evaluate(case)
    answer["id"] = case["id"]
    answers.write(json.dumps(answer, allow_nan=True) + "\n")
answers.flush()
