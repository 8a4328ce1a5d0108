"""What every Python test script shares: the results and their closing line, waiting on a condition with a deadline
(never a fixed sleep), and the player's control socket. A script puts Tests/ on sys.path and imports it."""
import socket
import threading
import time

# One list for the whole process: the VM tests run one another's sections (test_cec uses test_gpio's guest).
results = []
_lock = threading.Lock()


def record(ok, what):
    """One check: PASS or FAIL and what was seen; returns `ok`. Threads may record at once."""
    with _lock:
        results.append(bool(ok))
        print(("PASS  " if ok else "FAIL  ") + what, flush=True)
    return ok


def summary(note=""):
    """Prints the closing `N passed, M failed` line (and `note`); the exit status."""
    failed = results.count(False)
    print(f"{results.count(True)} passed, {failed} failed" + (f" ({note})" if note else ""))
    return 1 if failed else 0


def until(condition, timeout, step=0.05):
    """Polls `condition` until it returns something true or `timeout` seconds passed; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()


def until_done(condition, timeout, step=0.2):
    """Polls `condition`, which returns (done, value), until done or the deadline: (done, last value)."""
    deadline = time.monotonic() + timeout
    while True:
        done, value = condition()
        if done or time.monotonic() > deadline:
            return done, value
        time.sleep(step)


def ctl(path, command, timeout=5):
    """One command line on the control socket at `path`; the answer's line."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(command.encode() + b"\n")
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer.decode().strip()
