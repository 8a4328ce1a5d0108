#!/usr/bin/python3
"""Stands in for systemd's notification socket in a VM guest: binds a datagram socket and prints each message it
receives as one line, `SECONDS MESSAGE` (CLOCK_MONOTONIC, newlines in the message shown as `|`), until killed.

Usage: notify_listener.py SOCKET_PATH
"""
import os
import socket
import sys
import time


def main():
    path = sys.argv[1]
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(path)
    print(f"{time.monotonic():.3f} LISTENING", flush=True)
    while True:
        message = listener.recv(4096).decode(errors="replace")
        print(f"{time.monotonic():.3f} {message.replace(chr(10), '|')}", flush=True)


if __name__ == "__main__":
    main()
