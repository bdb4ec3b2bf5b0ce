#!/usr/bin/env python3
"""A two-node PostgreSQL cluster run by patroni over an etcd v3 API, then a failover.

Usage: patroni_cluster.py --dcs HOST:PORT --dcs HOST:PORT --work DIR
                          [--kill-with-leader I=PID,...] [--dcs-auth USER:PASSWORD]
                          [--use-proxies] [--timeout SECONDS]

Each --dcs is one node's DCS (patroni's `etcd3` DCS, which speaks etcd's HTTP/JSON
gateway): node 0 uses the first, node 1 the second; --dcs-auth is the user and
password patroni authenticates with (for discfg, a token's id and the token);
--use-proxies sets patroni's `use_proxies`: it keeps the hosts it was given rather
than the etcd cluster's member list. The scenario:

1. both nodes start (patroni as the `postgres` user, data in DIR, free loopback ports);
2. one becomes leader (REST GET /leader answers 200);
3. the other replicates by streaming (pg_stat_replication on the leader, the replica's
   state in REST /cluster), and a row written on the leader is read on the replica;
4. `patronictl list` shows both members, one of them the leader;
5. the leader's patroni is SIGKILLed and its PostgreSQL stopped (`pg_ctl stop -m
   immediate`); with --kill-with-leader I=PID, when node I is the leader PID is
   SIGKILLed too (the DCS server that node used); the seconds until the other node is
   leader are the failover time.

Prints one JSON line on stdout (`ok`, the times, and on failure `error` and the step),
a readable log on stderr. Every process it started is ended on the way out, whatever
happened, and the whole run is bounded by --timeout.
"""

import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

PG_BIN = "/usr/lib/postgresql/15/bin"
PATRONI = "/usr/bin/patroni"
PATRONICTL = "/usr/bin/patronictl"
SUPERUSER_PASSWORD = "patroni-super"
REPLICATION_PASSWORD = "patroni-repl"


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Failure(Exception):
    """A step of the scenario that did not happen."""

    def __init__(self, step, message):
        super().__init__(f"{step}: {message}")
        self.step = step


class Deadline(Exception):
    """The run's overall timeout."""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Node:
    """One patroni with its PostgreSQL, run as the postgres user."""

    def __init__(self, index, dcs, work, scope, user, auth=None, use_proxies=False):
        self.index = index
        self.use_proxies = use_proxies
        self.auth = auth
        self.name = f"node{index}"
        self.dcs = dcs
        self.user = user
        self.directory = os.path.join(work, self.name)
        self.data = os.path.join(self.directory, "data")
        self.config = os.path.join(self.directory, "patroni.yml")
        self.log_path = os.path.join(self.directory, "patroni.log")
        self.pg_port = free_port()
        self.api_port = free_port()
        while self.api_port == self.pg_port:
            self.api_port = free_port()
        self.scope = scope
        self.process = None
        self.log_file = None

    def write_config(self):
        os.makedirs(self.directory, mode=0o700)
        # Strings are JSON-quoted, which YAML reads as its double-quoted strings.
        q = json.dumps
        credentials = "\n  use_proxies: true" if self.use_proxies else ""
        if self.auth:
            name, _, password = self.auth.partition(":")
            credentials += f"\n  username: {q(name)}\n  password: {q(password)}"
        text = f"""scope: {q(self.scope)}
name: {q(self.name)}
log:
  level: INFO
restapi:
  listen: 127.0.0.1:{self.api_port}
  connect_address: 127.0.0.1:{self.api_port}
etcd3:
  hosts: {q(self.dcs)}{credentials}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    postgresql:
      use_pg_rewind: false
      parameters:
        max_connections: 20
        max_wal_senders: 5
        max_replication_slots: 5
        wal_level: replica
        hot_standby: "on"
  initdb:
    - encoding: UTF8
    - auth: md5
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 md5
    - host all all 127.0.0.1/32 md5
postgresql:
  listen: 127.0.0.1:{self.pg_port}
  connect_address: 127.0.0.1:{self.pg_port}
  data_dir: {q(self.data)}
  bin_dir: {q(PG_BIN)}
  pgpass: {q(os.path.join(self.directory, "pgpass"))}
  authentication:
    superuser:
      username: postgres
      password: {q(SUPERUSER_PASSWORD)}
    replication:
      username: replicator
      password: {q(REPLICATION_PASSWORD)}
  parameters:
    unix_socket_directories: {q(self.directory)}
    shared_buffers: 16MB
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
"""
        with open(self.config, "w") as config:
            config.write(text)
        for path in (self.directory, self.config):
            os.chown(path, self.user.pw_uid, self.user.pw_gid)

    def start(self):
        self.log_file = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            as_postgres(self.user, [PATRONI, self.config]),
            stdout=self.log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=postgres_environment(self.user), start_new_session=True,
        )
        log(f"{self.name}: patroni pid {self.process.pid}, PostgreSQL 127.0.0.1:{self.pg_port}, "
            f"REST 127.0.0.1:{self.api_port}, DCS {self.dcs}")

    def rest(self, path, timeout=2):
        """(status, parsed JSON body or None) of GET path on this node's REST API; (None, None) when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.api_port}{path}", timeout=timeout) as response:
                return response.status, parse_json(response.read())
        except urllib.error.HTTPError as error:
            return error.code, parse_json(error.read())
        except (OSError, ValueError):
            return None, None

    def is_leader(self):
        return self.rest("/leader")[0] == 200

    def psql(self, sql):
        result = subprocess.run(
            as_postgres(self.user, [os.path.join(PG_BIN, "psql"), "-h", "127.0.0.1", "-p", str(self.pg_port),
                                    "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qAtc", sql]),
            capture_output=True, text=True, timeout=20,
            env=dict(postgres_environment(self.user), PGPASSWORD=SUPERUSER_PASSWORD, PGCONNECT_TIMEOUT="5"),
        )
        if result.returncode != 0:
            raise Failure("psql", f"{self.name}: {sql!r}: {result.stderr.strip()}")
        return result.stdout.strip()

    def kill_patroni(self):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop_postgres(self):
        if not os.path.exists(os.path.join(self.data, "postmaster.pid")):
            return
        subprocess.run(
            as_postgres(self.user, [os.path.join(PG_BIN, "pg_ctl"), "stop", "-D", self.data, "-m", "immediate", "-w", "-t", "20"]),
            capture_output=True, env=postgres_environment(self.user), timeout=30,
        )

    def end(self):
        """Ends patroni and its PostgreSQL, however they are."""
        try:
            self.kill_patroni()
        except OSError:
            pass
        try:
            self.stop_postgres()
        except (OSError, subprocess.SubprocessError):
            pass
        # A postmaster pg_ctl could not stop: kill what still runs from our data directory.
        pid_file = os.path.join(self.data, "postmaster.pid")
        try:
            with open(pid_file) as f:
                pid = int(f.readline())
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass
        if self.log_file:
            self.log_file.close()

    def log_tail(self, lines=25):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


def parse_json(data):
    try:
        return json.loads(data)
    except ValueError:
        return None


def as_postgres(user, command):
    """command run as `user` by setpriv, which execs it: the PID is the command's own;
    the command itself when this process runs as `user` already."""
    if os.getuid() == user.pw_uid:
        return command
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--"] + command


def postgres_environment(user):
    return {
        "PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": user.pw_dir, "USER": user.pw_name,
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
    }


def wait_for(step, timeout, check, interval=0.2):
    """check()'s first true value within timeout seconds; Failure(step) otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise Failure(step, f"not within {timeout} s")
        time.sleep(interval)


def patronictl_list(node):
    result = subprocess.run(
        [PATRONICTL, "-c", node.config, "list", "-f", "json"],
        capture_output=True, text=True, timeout=30, env=postgres_environment(pwd.getpwuid(os.getuid())),
    )
    if result.returncode != 0:
        return None, result.stdout + result.stderr
    return parse_json(result.stdout), result.stdout


def parse_kills(text):
    kills = {}
    for item in filter(None, (text or "").split(",")):
        index, _, pid = item.partition("=")
        kills[int(index)] = int(pid)
    return kills


def scenario(nodes, kills, results):
    for node in nodes:
        node.write_config()
    for node in nodes:
        node.start()
    started = time.monotonic()

    def check_alive():
        for node in nodes:
            if node.process.poll() is not None:
                raise Failure("start", f"{node.name}'s patroni exited with {node.process.returncode}:\n{node.log_tail()}")

    def one_leader():
        check_alive()
        leaders = [node for node in nodes if node.is_leader()]
        return leaders[0] if len(leaders) == 1 else None

    leader = wait_for("leader elected", 60, one_leader)
    replica = next(node for node in nodes if node is not leader)
    results["leader_elected_s"] = round(time.monotonic() - started, 2)
    results["first_leader"] = leader.index
    log(f"{leader.name} is leader after {results['leader_elected_s']} s")

    def streaming():
        check_alive()
        status, cluster = leader.rest("/cluster")
        members = (cluster or {}).get("members", [])
        member = next((m for m in members if m.get("name") == replica.name), None)
        if not member or member.get("state") not in ("running", "streaming"):
            return None
        try:
            states = leader.psql("SELECT state FROM pg_stat_replication")
        except Failure:
            return None
        return member["state"] if "streaming" in states.split() else None

    results["replica_state"] = wait_for("replica streaming", 90, streaming, interval=0.5)
    results["replica_joined_s"] = round(time.monotonic() - started, 2)
    log(f"{replica.name} streams from {leader.name} after {results['replica_joined_s']} s (REST state {results['replica_state']})")

    marker = uuid.uuid4().hex
    leader.psql(f"CREATE TABLE IF NOT EXISTS patroni_check (marker text); INSERT INTO patroni_check VALUES ('{marker}')")

    def replicated():
        try:
            return replica.psql(f"SELECT count(*) FROM patroni_check WHERE marker = '{marker}'") == "1"
        except Failure:
            return False

    wait_for("row replicated", 30, replicated, interval=0.3)
    results["row_replicated"] = True
    log("a row written on the leader is read on the replica")

    def listed():
        members, _ = patronictl_list(leader)
        if not isinstance(members, list) or len(members) != 2:
            return None
        roles = sorted(member.get("Role", "") for member in members)
        names = sorted(member.get("Member", "") for member in members)
        if names != sorted(node.name for node in nodes) or roles != ["Leader", "Replica"]:
            return None
        return members

    members = wait_for("patronictl list", 30, listed, interval=0.5)
    results["patronictl_list"] = [{k: m.get(k) for k in ("Member", "Role", "State")} for m in members]
    log(f"patronictl list: {results['patronictl_list']}")

    # Failover.
    killed_at = time.monotonic()
    leader.kill_patroni()
    leader.stop_postgres()
    if leader.index in kills:
        try:
            os.kill(kills[leader.index], signal.SIGKILL)
            log(f"killed DCS server pid {kills[leader.index]} with {leader.name}")
            results["killed_dcs_pid"] = kills[leader.index]
        except OSError as error:
            raise Failure("kill DCS server", str(error))
    log(f"killed {leader.name} (patroni and PostgreSQL); waiting for {replica.name} to lead")

    def promoted():
        if replica.process.poll() is not None:
            raise Failure("failover", f"{replica.name}'s patroni exited:\n{replica.log_tail()}")
        return replica.is_leader()

    wait_for("failover", 60, promoted, interval=0.1)
    results["failover_s"] = round(time.monotonic() - killed_at, 2)
    log(f"{replica.name} is leader {results['failover_s']} s after the kill")
    # The new leader takes writes once its PostgreSQL is promoted, soon after it holds the lock.
    def writable():
        try:
            return replica.psql("INSERT INTO patroni_check VALUES ('after failover') RETURNING 1") == "1"
        except Failure:
            return False

    wait_for("new leader takes writes", 30, writable, interval=0.2)
    results["writable_s"] = round(time.monotonic() - killed_at, 2)
    log(f"{replica.name} takes writes {results['writable_s']} s after the kill")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dcs", action="append", required=True, help="HOST:PORT of a node's etcd API (one per node)")
    parser.add_argument("--work", required=True, help="a directory for the nodes' data")
    parser.add_argument("--kill-with-leader", default="", help="I=PID,...: when node I leads, SIGKILL PID with it")
    parser.add_argument("--dcs-auth", help="USER:PASSWORD patroni authenticates to the DCS with")
    parser.add_argument("--use-proxies", action="store_true", help="patroni keeps the hosts given, not the member list")
    parser.add_argument("--timeout", type=float, default=200, help="the whole run's bound, in seconds")
    arguments = parser.parse_args()
    if len(arguments.dcs) != 2:
        parser.error("give --dcs twice, one per node")
    for program in (PATRONI, PATRONICTL, os.path.join(PG_BIN, "postgres")):
        if not os.access(program, os.X_OK):
            print(json.dumps({"ok": False, "step": "setup", "error": f"{program} is not installed"}))
            return 1

    results = {"ok": False}
    # PostgreSQL refuses to run as root: root runs the nodes as the postgres user, any
    # other user as itself.
    user = pwd.getpwnam("postgres") if os.getuid() == 0 else pwd.getpwuid(os.getuid())
    work = os.path.join(os.path.abspath(arguments.work), f"patroni-{uuid.uuid4().hex[:8]}")
    os.makedirs(work, mode=0o700)
    if os.getuid() == 0:
        os.chown(work, user.pw_uid, user.pw_gid)
        # postgres must reach the work directory through its parents.
        parent = os.path.dirname(work)
        while parent != "/":
            mode = os.stat(parent).st_mode
            if not mode & 0o001:
                os.chmod(parent, mode | 0o001)
            parent = os.path.dirname(parent)
    scope = f"discfg-{uuid.uuid4().hex[:10]}"
    results["scope"] = scope
    nodes = [Node(index, dcs, work, scope, user, arguments.dcs_auth, arguments.use_proxies) for index, dcs in enumerate(arguments.dcs)]

    def on_alarm(signum, frame):
        raise Deadline()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, arguments.timeout)
    try:
        scenario(nodes, parse_kills(arguments.kill_with_leader), results)
        results["ok"] = True
    except Failure as failure:
        results["step"], results["error"] = failure.step, str(failure)
    except Deadline:
        results["step"], results["error"] = "timeout", f"the run passed its {arguments.timeout} s bound"
    except Exception as error:  # noqa: BLE001 — reported, then cleaned up
        results["step"], results["error"] = "unexpected", f"{type(error).__name__}: {error}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if not results["ok"]:
            log(f"FAILED at {results.get('step')}: {results.get('error')}")
            for node in nodes:
                log(f"--- {node.name}'s patroni log (last lines):\n{node.log_tail()}")
        for node in nodes:
            node.end()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results), flush=True)
    return 0 if results["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
