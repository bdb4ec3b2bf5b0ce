"""Hooks for scripts/fuzz-api: the rules of docs/openapi.yaml that JSON Schema cannot state.

A read at a past revision (GET /v1/{config}/keys/{key}?revision=N, GET
/v1/{config}/keys?document&revision=N, GET /v1/{config}/schema?revision=N, GET
/v1/{config}/export?revision=N) or a compaction
(POST /v1/{config}/compact?revision=N) names a revision the config has reached: one past
it is refused with 400, as etcd refuses a future revision.
The schema cannot know the store's revision, so positive cases ask the server for it
and read at most there.

Stateful runs fill a key from earlier responses or draws without the key's pattern; a
positive case whose key breaks the pattern (control characters) has them dropped.

A pointer read (GET /v1/{config}/keys/{key}?path=P) reads into one JSON value: with a
listing (?recursive), or on a value that is not JSON, it is refused with 400, so positive
cases send path only where it can apply. A document written through PUT
/v1/{config}/keys/{key}?document is a JSON object whatever the drawn body's type, so a
positive case sends {}. A schema's target names the key the schema is kept at
(/.discfg/schema/ and the target with each / and % escaped as three bytes, at most 1024
bytes), and a schema must be one the validator's metaschema accepts: positive cases keep
within both.

An import (POST /v1/{config}/import) names each key once: a schema-valid snapshot whose
items repeat a key (after discfg's normalization) is refused with 400, so positive cases
keep the first item of each key.

A transaction (POST /v1/{config}/txn) writes each key at most once per branch: no key put
twice, put and deleted, or put under a prefix or in a range the same branch deletes. The document says
so in words; a schema-valid body that breaks it is refused with 400, as it should be. So
before a positive case is sent, its branches keep only the first of each conflicting
write (a shorter list of valid operations is still valid). Negative cases go as drawn.

A deployment's start (POST /v1/{config}/deployments) is refused with 400 for what its
schema cannot state: strategy beside growth, a step or duration out of its words' range,
a signal named twice, a candidate outside its prefix or equal to the live keys. So a
positive case starts the one deployment the run's config can hold, on a prefix of its
own (every later start overlaps it: 412), with a candidate no other request writes;
route tests (DeploymentRouteTests) hold the parameters' refusals.

A config quota (quotaBytes) refuses with 507 every later write that grows the config, and a
raised alarm (alarms: ["NOSPACE"], or raiseAlarms) every later write of a key, so either drawn
in a positive case (PUT or PATCH /v1/{config}) would close the run's config to the writes the
rest of the run sends: positive cases set no quota and raise no alarm (alarms: [], no
raiseAlarms, and no disarmAlarms beside alarms, which is refused).
"""

import json
import os
import re
import unicodedata
import urllib.error
import urllib.request

import schemathesis
from schemathesis.core.parameters import ParameterLocation

TRANSACTION = "/v1/{config}/txn"
KEY_READ = "/v1/{config}/keys/{key}"
KEYS = "/v1/{config}/keys"
CONFIG = "/v1/{config}"
SCHEMA = "/v1/{config}/schema"
COMPACT = "/v1/{config}/compact"
EXPORT = "/v1/{config}/export"
DEPLOYMENTS = "/v1/{config}/deployments"
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _config_revision(config: str):
    """The config's revision now, from the server under test (scripts/fuzz-api's URL)."""
    base = os.environ.get("DISCFG_FUZZ_URL")
    if not base:
        return None
    try:
        with urllib.request.urlopen(f"{base}/v1/{urllib.request.quote(config, safe='')}", timeout=5) as answer:
            return json.load(answer).get("info", {}).get("revision")
    except Exception:
        return None


def _holds_json(config: str, key: str) -> bool:
    """Whether the key's value is JSON now (an absent key answers 404 to any read)."""
    base = os.environ.get("DISCFG_FUZZ_URL")
    if not base:
        return False
    path = "/".join(urllib.request.quote(part, safe="") for part in key.strip("/").split("/"))
    try:
        with urllib.request.urlopen(f"{base}/v1/{urllib.request.quote(config, safe='')}/keys/{path}?raw", timeout=5) as answer:
            json.loads(answer.read())
            return True
    except urllib.error.HTTPError as error:
        return error.code == 404
    except Exception:
        return False


def _flag_on(value) -> bool:
    return value in ("", "true", True)


def _schema_target_fits(target: str) -> bool:
    """Whether the key a schema for `target` is kept at is at most 1024 bytes."""
    path = target if target.startswith("/") else "/" + target
    escaped = path.replace("%", "%25").replace("/", "%2F")
    return len("/.discfg/schema/".encode()) + len(escaped.encode("utf-8", "surrogatepass")) <= 1024


def _valid_schema(schema) -> bool:
    """Whether a drawn schema is one a 2020-12 metaschema accepts (what discfg checks too)."""
    try:
        import jsonschema
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
        return True
    except Exception:
        return False


def _negative(case, location) -> bool:
    """Whether the case was drawn to break the schema at `location` (stateful cases carry
    no such record, and are drawn valid)."""
    return case.meta is not None and case.meta.is_negative_at(location)


def _fit_state(case) -> None:
    """Keeps a positive case within what the document's words allow (see above)."""
    path_parameters = case.path_parameters or {}
    key = path_parameters.get("key")
    if isinstance(key, str) and CONTROL.search(key) and not _negative(case, ParameterLocation.PATH):
        cleaned = CONTROL.sub("", key).strip("/")
        path_parameters["key"] = cleaned if cleaned and not any(part in ("", ".", "..") for part in cleaned.split("/")) else "k"
    query = case.query or {}
    reads_revision = (case.operation.path in (KEY_READ, KEYS, SCHEMA) and case.method.upper() == "GET") or case.operation.path in (COMPACT, EXPORT)
    if reads_revision and not _negative(case, ParameterLocation.QUERY):
        revision = query.get("revision")
        if isinstance(revision, str) and revision.isdigit():
            revision = int(revision)
        if isinstance(revision, int) and not isinstance(revision, bool):
            current = _config_revision(path_parameters.get("config", "demo"))
            if isinstance(current, int) and revision > current:
                query["revision"] = current
    if _negative(case, ParameterLocation.QUERY):
        return
    config = path_parameters.get("config", "demo")
    if case.operation.path == KEY_READ and case.method.upper() == "GET" and "path" in query and not _flag_on(query.get("document")):
        key = path_parameters.get("key")
        if _flag_on(query.get("recursive")) or not isinstance(key, str) or not _holds_json(config, key):
            del query["path"]
    if case.operation.path == KEY_READ and case.method.upper() == "PUT" and _flag_on(query.get("document")):
        case.body = b"{}"
    if case.operation.path == SCHEMA:
        target = query.get("target")
        if isinstance(target, str) and not _schema_target_fits(target):
            query["target"] = "/fuzz/" if target.endswith("/") else "/fuzz"
        if case.method.upper() == "PUT" and not _negative(case, ParameterLocation.BODY) and not _valid_schema(case.body):
            case.body = {}
IMPORT = "/v1/{config}/import"


def _key(path: str) -> str:
    """A key as discfg normalizes it: NFC, with a leading slash."""
    path = unicodedata.normalize("NFC", path)
    return path if path.startswith("/") else "/" + path


def _prefix(path: str) -> str:
    """A prefix as discfg normalizes it: a key that ends with a slash; "" is the root."""
    path = _key(path)
    return path if path.endswith("/") else path + "/"


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _in_range(key: str, lower: str, upper) -> bool:
    """Whether a key lies in [lower, upper), comparing UTF-8 bytes as discfg does."""
    return _utf8(key) >= _utf8(lower) and (upper is None or _utf8(key) < _utf8(upper))


def _without_conflicts(operations: list) -> list:
    puts: set[str] = set()
    deleted: set[str] = set()
    ranges: list[tuple] = []
    kept = []
    for operation in operations:
        if not isinstance(operation, dict):
            kept.append(operation)
            continue
        op, key, prefix = operation.get("op"), operation.get("key"), operation.get("prefix")
        if op in ("put", "patch") and isinstance(key, str):
            key = _key(key)
            if key in puts or key in deleted or any(_in_range(key, *bounds) for bounds in ranges):
                continue
            puts.add(key)
        elif op == "delete" and isinstance(key, str):
            key = _key(key)
            if key in puts:
                continue
            deleted.add(key)
        elif op == "delete" and (isinstance(prefix, str) or isinstance(operation.get("from"), str)):
            if isinstance(prefix, str):
                prefix = _prefix(prefix)
                # The prefix's keys, as a range: up to the prefix with its slash made "0".
                bounds = (prefix, prefix[:-1] + "0")
            else:
                upper = operation.get("to")
                bounds = (operation["from"], upper if isinstance(upper, str) else None)
            if any(_in_range(key, *bounds) for key in puts):
                continue
            ranges.append(bounds)
        kept.append(operation)
    return kept


def _fit_deployment_start(case) -> None:
    """A positive start: one strategy, a prefix of its own and a candidate there (see above)."""
    if case.operation.path != DEPLOYMENTS or case.method.upper() != "POST":
        return
    if _negative(case, ParameterLocation.QUERY) or _negative(case, ParameterLocation.BODY):
        return
    drawn = case.query or {}
    query = {"strategy": "AllAtOnce", "prefix": "/fuzz-deploy/"}
    if drawn.get("replace") in ("", "true", "false"):
        query["replace"] = drawn["replace"]
    case.query = query
    case.body = {"/fuzz-deploy/k": os.urandom(8).hex()}


def _fit_health(case) -> None:
    """A positive health report counts at least one request, and no more errors than requests: a bound
    between two fields the schema cannot say."""
    if not case.operation.path.endswith("/health") or not isinstance(case.body, dict) or _negative(case, ParameterLocation.BODY):
        return
    cohorts = [case.body.get("stable"), case.body.get("candidate")] if "reporter" in case.body else [case.body]
    for counts in cohorts:
        if not isinstance(counts, dict):
            continue
        requests, errors = counts.get("requests"), counts.get("errors")
        numbers = all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in (requests, errors))
        if numbers and errors > requests:
            counts["errors"] = requests
        if "reporter" not in case.body and not (counts.get("requests") or counts.get("errors")):
            counts["requests"] = 1


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    _fit_state(case)
    _fit_deployment_start(case)
    _fit_health(case)
    if case.operation.path == CONFIG and isinstance(case.body, dict) and "quotaBytes" in case.body and not _negative(case, ParameterLocation.BODY):
        case.body["quotaBytes"] = None
    if case.operation.path == CONFIG and isinstance(case.body, dict) and not _negative(case, ParameterLocation.BODY):
        if "alarms" in case.body:
            case.body["alarms"] = []
            # A patch replaces the alarms or raises and disarms some, not both.
            case.body.pop("disarmAlarms", None)
        case.body.pop("raiseAlarms", None)
    if case.operation.path not in (TRANSACTION, IMPORT) or case.meta is None or case.meta.is_negative_at(ParameterLocation.BODY):
        return
    body = case.body
    if not isinstance(body, dict):
        return
    if case.operation.path == IMPORT:
        items = body.get("items")
        if isinstance(items, list):
            seen: set[str] = set()
            kept = []
            for item in items:
                key = item.get("key") if isinstance(item, dict) else None
                if isinstance(key, str):
                    if _key(key) in seen:
                        continue
                    seen.add(_key(key))
                kept.append(item)
            body["items"] = kept
        return
    for branch in ("success", "failure"):
        operations = body.get(branch)
        if isinstance(operations, list):
            body[branch] = _without_conflicts(operations)
