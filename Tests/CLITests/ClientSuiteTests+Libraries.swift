/// The three suites, at the versions `scripts/setup` installs, and the tests of each that
/// do not pass on `serve --etcd`. Run against etcd 3.4 (Debian's etcd-server) the same
/// way, every test passes but those marked ``ClientSuite/Reason/failsOnEtcd(_:)`` and
/// ``ClientSuite/Reason/skippedBySuite(_:)``.
extension ClientSuite {
    static let all = [pythonEtcd3, aetcd, etcd3gw]

    /// Debian's python3-etcd3 0.12.0, with the tests of the PyPI sdist of that version, run
    /// by Debian's interpreter and pytest. `TEST_ETCD_VERSION` says which etcd the suite
    /// talks to: 3.4's API, as discfg serves it, runs the tests the suite keeps from 3.2.
    static let pythonEtcd3 = ClientSuite(
        library: "python-etcd3", directory: "etcd3-0.12.0", python: "/usr/bin/python3", arguments: ["tests"],
        server: { ["PYTHON_ETCD_HTTP_URL": "http://127.0.0.1:\($0)", "TEST_ETCD_VERSION": "v3.4.23"] },
        count: 82,
        notPassing: [
            "tests/test_etcd3.py::TestEtcd3::test_get_key_serializable": pifpafStopped,
            "tests/test_etcd3.py::TestEtcd3::test_get_prefix_serializable": pifpafStopped,
            "tests/test_etcd3.py::TestEtcd3::test_member_list": .failsOnEtcd("expects the three members of the suite's pifpaf cluster"),
            "tests/test_etcd3.py::TestEtcd3::test_lock_acquire": debianTenacity,
            "tests/test_etcd3.py::TestEtcd3::test_lock_contended": debianTenacity,
            "tests/test_etcd3.py::TestEtcd3::test_lock_acquire_none": debianTenacity,
            "tests/test_etcd3.py::TestClient::test_user_pwd_auth": .failsOnEtcd("patches a module `etcdrpc` that is not importable (ModuleNotFoundError)"),
            "tests/test_etcd3.py::TestEtcd3::test_snapshot": snapshot,
        ]
    )

    /// aetcd 1.0.0 from PyPI, with its sdist's tests; `addopts` is emptied of the suite's
    /// coverage report, which needs pytest-cov and changes no outcome.
    static let aetcd = ClientSuite(
        library: "aetcd", directory: "aetcd-1.0.0", python: "python3", arguments: ["-o", "addopts=", "tests"],
        server: { ["TEST_ETCD_HTTP_URL": "http://127.0.0.1:\($0)"] },
        count: 93,
        notPassing: [
            "tests/integration/test_cluster.py::test_member_list": withCluster,
            "tests/integration/test_kv.py::test_get_key_with_serializable": withCluster,
            "tests/integration/test_auth.py::test_auth": .notServed(
                "etcd's users and roles (etcdctl user add, auth enable): discfg's tokens are its users"
            ),
            "tests/integration/test_maintenance.py::test_snapshot": snapshot,
        ]
    )

    /// etcd3gw 2.7.0 from PyPI, whose suite is inside its installed package; it speaks to
    /// the JSON gateway on the etcd API's port.
    static let etcd3gw = ClientSuite(
        library: "etcd3gw", directory: nil, python: "python3", arguments: ["--pyargs", "etcd3gw.tests"],
        server: { ["TOOZ_TEST_HTTP_URL": "http://127.0.0.1:\($0)", "TOOZ_TEST_ETCD_PORT": String($0)] },
        count: 39,
        notPassing: [:]
    )

    private static let pifpafStopped = Reason.failsOnEtcd("stops members of the suite's three-node pifpaf cluster (pgrep --name pifpaf)")
    private static let debianTenacity = Reason.failsOnEtcd(
        "Lock.acquire hands Debian's tenacity a wait function of two arguments, which it calls with one (TypeError)"
    )
    private static let withCluster = Reason.skippedBySuite("runs only with --with-cluster, on the suite's three-node cluster")
    private static let snapshot = Reason.notServed("Maintenance.Snapshot: discfg has no etcd database file (discfg export backs a config up)")
}
