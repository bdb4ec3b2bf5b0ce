"""A pytest plugin for running an etcd client library's own test suite, unchanged, against
the server at 127.0.0.1:$ETCD_SUITE_PORT (discfg's ClientSuiteTests load it with
`-p etcd_client_suite`). It changes where the suite finds its server, never what a test does:

- A few tests of python-etcd3 and aetcd build a client with no address (`etcd3.client()`,
  `aetcd.Client(username=...)`) and so reach localhost:2379, where the libraries' own CI runs
  etcd. The plugin points those defaults at the server under test, so no test needs port
  2379 (which an etcd started by Debian's etcd-server service may hold) and the suites run
  side by side, each on its own server.
- Hypothesis 6.x refuses python-etcd3's @given tests, which use a function-scoped fixture,
  with a health check that predates the suite; the plugin turns that one check off, and
  keeps no database of examples between runs, so each run draws its own.
- It writes each test's outcome, one `outcome test-id` line per test, to $ETCD_SUITE_OUTCOMES:
  `failed` if any phase failed, `skipped` if it was skipped, else `passed`.
"""

import os

import pytest

PORT = int(os.environ["ETCD_SUITE_PORT"])
HOST = "127.0.0.1"


def _point_defaults(function):
    """Sets the `host` and `port` defaults of `function` to the server under test."""
    code = function.__code__
    names = code.co_varnames[: code.co_argcount]
    defaults = list(function.__defaults__ or ())
    first = len(names) - len(defaults)
    for index, name in enumerate(names[first:]):
        if name == "host":
            defaults[index] = HOST
        elif name == "port":
            defaults[index] = PORT
    function.__defaults__ = tuple(defaults)


try:
    import etcd3

    _point_defaults(etcd3.client)
    _point_defaults(etcd3.Etcd3Client.__init__)
except ImportError:
    pass

try:
    import aetcd

    _point_defaults(aetcd.Client.__init__)
except ImportError:
    pass

try:
    from hypothesis import HealthCheck, settings

    # A suite that registers its own profile with no parent inherits this one's settings.
    settings.register_profile(
        "etcd-client-suite", database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    settings.load_profile("etcd-client-suite")
except ImportError:
    pass

_outcomes = {}


def pytest_runtest_logreport(report):
    previous = _outcomes.get(report.nodeid)
    if report.failed or previous == "failed":
        _outcomes[report.nodeid] = "failed"
    elif report.skipped or previous == "skipped":
        _outcomes[report.nodeid] = "skipped"
    elif report.when == "call" or previous is None:
        _outcomes[report.nodeid] = "passed"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    with open(os.environ["ETCD_SUITE_OUTCOMES"], "w") as out:
        for nodeid in sorted(_outcomes):
            out.write(f"{_outcomes[nodeid]} {nodeid}\n")
