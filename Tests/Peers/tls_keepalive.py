#!/usr/bin/env python3
"""One keep-alive HTTPS connection across a certificate reload, for the TLS tests.

Usage: tls_keepalive.py PORT CAFILE PATH GO_FILE

Opens one TLS connection to 127.0.0.1:PORT trusting CAFILE, sends GET PATH and prints
`first STATUS SERIAL` (the serial, in hex, of the certificate the connection got). Then
waits until GO_FILE exists (the test reloads the server's certificate meanwhile), sends
GET PATH again on the same connection and prints `again STATUS SERIAL`, and opens a
new connection and prints `new SERIAL`.
"""
import os
import socket
import ssl
import sys
import time


def serial(connection):
    return format(int(connection.getpeercert()["serialNumber"], 16), "x")


def get(connection, path):
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = connection.recv(65536)
        if not chunk:
            raise SystemExit("the server closed the connection")
        head += chunk
    header, _, rest = head.partition(b"\r\n\r\n")
    lines = header.decode().split("\r\n")
    status = lines[0].split()[1]
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(rest) < length:
        rest += connection.recv(65536)
    return status


def connect(port, context):
    return context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30), server_hostname="localhost")


def main():
    port, cafile, path, go = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    context = ssl.create_default_context(cafile=cafile)
    connection = connect(port, context)
    print("first", get(connection, path), serial(connection), flush=True)
    deadline = time.time() + 60
    while not os.path.exists(go):
        if time.time() > deadline:
            raise SystemExit("no go file")
        time.sleep(0.05)
    print("again", get(connection, path), serial(connection), flush=True)
    fresh = connect(port, context)
    print("new", serial(fresh), flush=True)


main()
