"""The real servers the sync tests run against, each started on loopback with a throw-away config under a work
folder, waited for by a request (never a fixed sleep), and stopped with its children: Apache with mod_dav (basic
auth, and a TLS listener with a test CA made by openssl) and `rclone serve webdav`."""
import base64
import http.client
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402  (Tests/harness.py)

APACHE_MODULES = "/usr/lib/apache2/modules"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_certificates(folder):
    """A test CA and a certificate it signed for 127.0.0.1 and localhost."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Vitrine sync test CA",
        "-keyout", "ca.key", "-out", "ca.pem")
    with open(f"{folder}/server.ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out",
        "server.csr")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-out", "server.pem", "-extfile", "server.ext")


def open_to_server(path):
    """Apache started by root serves as www-data: every folder above the data must let it through."""
    if os.getuid() != 0:
        return
    while path not in ("/", ""):
        os.chmod(path, os.stat(path).st_mode | 0o005)
        path = os.path.dirname(path)


class Server:
    """A server process in its own process group, so its children stop with it."""
    process = None

    def stop(self):
        if self.process and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None

    def ready(self, port, path, user, password, context=None):
        """Waits until a PROPFIND on `path` answers 207."""
        def answers():
            try:
                if context:
                    connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=2, context=context)
                else:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                token = base64.b64encode(f"{user}:{password}".encode()).decode()
                connection.request("PROPFIND", path, headers={"Depth": "0", "Authorization": f"Basic {token}"})
                status = connection.getresponse().status
                connection.close()
                return status == 207
            except OSError:
                return False
        if not harness.until(answers, 15):
            raise RuntimeError(f"{type(self).__name__} did not answer on port {port}")


class Apache(Server):
    """mod_dav on `data` at /dav/ with basic auth (alice / s3cret), over http and over https with a test CA."""
    user, password = "alice", "s3cret"

    def __init__(self, work):
        self.root = f"{work}/apache"
        self.data = f"{self.root}/data"
        for folder in ("logs", "run", "lock", "data", "tls"):
            os.makedirs(f"{self.root}/{folder}", exist_ok=True)
        make_certificates(f"{self.root}/tls")
        self.port = free_port()
        self.tls_port = free_port()
        subprocess.run(["htpasswd", "-bcB", f"{self.root}/htpasswd", self.user, self.password], check=True,
                       capture_output=True)
        root = self.root
        modules = ["mpm_event", "authz_core", "authz_user", "authn_core", "authn_file", "auth_basic", "mime",
                   "alias", "dav", "dav_fs", "socache_shmcb", "ssl"]
        lines = [f'ServerRoot "{root}"', "ServerName 127.0.0.1", f"PidFile {root}/run/httpd.pid",
                 f"DefaultRuntimeDir {root}/run", f"Mutex file:{root}/run default", f"ErrorLog {root}/logs/error.log",
                 "LogLevel warn", f"Listen 127.0.0.1:{self.port}", f"Listen 127.0.0.1:{self.tls_port}"]
        lines += [f"LoadModule {name}_module {APACHE_MODULES}/mod_{name}.so" for name in modules]
        if os.getuid() == 0:
            lines += ["User www-data", "Group www-data"]
        lines += ["TypesConfig /etc/mime.types",
                  f'CustomLog {root}/logs/access.log "%r %>s %b"',
                  "StartServers 1", "ServerLimit 1", "ThreadsPerChild 8", "MaxRequestWorkers 8",
                  f"DavLockDB {root}/lock/lockdb", f"SSLSessionCache shmcb:{root}/run/ssl_scache(512000)",
                  "<Directory />", "Require all denied", "</Directory>",
                  f"DocumentRoot {self.data}", f"Alias /dav {self.data}",
                  f"<Directory {self.data}>", "Dav On", "AuthType Basic", 'AuthName "vitrine-test"',
                  f"AuthUserFile {root}/htpasswd", "Require valid-user", "</Directory>",
                  f"<VirtualHost 127.0.0.1:{self.tls_port}>", "SSLEngine on",
                  f"SSLCertificateFile {root}/tls/server.pem", f"SSLCertificateKeyFile {root}/tls/server.key",
                  "</VirtualHost>"]
        with open(f"{root}/httpd.conf", "w") as f:
            f.write("\n".join(lines) + "\n")
        self.ca = f"{root}/tls/ca.pem"
        self.access_log = f"{root}/logs/access.log"

    def start(self):
        open_to_server(self.data)
        if os.getuid() == 0:
            shutil.chown(f"{self.root}/lock", "www-data")
        self.process = subprocess.Popen(["apache2", "-f", f"{self.root}/httpd.conf", "-DFOREGROUND"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.ready(self.port, "/dav/", self.user, self.password)
        self.ready(self.tls_port, "/dav/", self.user, self.password, ssl.create_default_context(cafile=self.ca))

    def url(self, tls=False):
        return f"https://127.0.0.1:{self.tls_port}/dav/" if tls else f"http://127.0.0.1:{self.port}/dav/"

    def requests(self):
        """The access log's request lines with their status, as (method, path, status)."""
        try:
            with open(self.access_log) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return []
        found = []
        for line in lines:
            parts = line.rsplit(" ", 2)
            if len(parts) == 3:
                request = parts[0].split(" ")
                found.append((request[0], request[1] if len(request) > 1 else "", parts[1]))
        return found


class Rclone(Server):
    """`rclone serve webdav` on `data` (bob / p4ss), re-reading the folder on every request."""
    user, password = "bob", "p4ss"

    def __init__(self, work):
        self.root = f"{work}/rclone"
        self.data = f"{self.root}/data"
        os.makedirs(self.data, exist_ok=True)
        self.port = free_port()

    def start(self):
        environment = dict(os.environ, HOME=self.root, RCLONE_CONFIG="/dev/null")
        self.process = subprocess.Popen(
            ["rclone", "serve", "webdav", self.data, "--addr", f"127.0.0.1:{self.port}", "--user", self.user,
             "--pass", self.password, "--dir-cache-time", "0s", "--poll-interval", "0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment, start_new_session=True)
        self.ready(self.port, "/", self.user, self.password)

    def url(self):
        return f"http://127.0.0.1:{self.port}/"



class Samba(Server):
    """Debian's smbd on a free port with a throw-away smb.conf: `photos` for the runner's own account (SMB users
    must be Linux users) with password `s3cret`, and `public` for guests."""
    password = "s3cret"

    def __init__(self, work):
        import pwd
        self.root = f"{work}/samba"
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.data = f"{self.root}/photos"
        self.public = f"{self.root}/public"
        for folder in ("private", "lock", "state", "cache", "pid", "log", "ncalrpc", "photos", "public"):
            os.makedirs(f"{self.root}/{folder}", exist_ok=True)
        self.port = free_port()
        root = self.root
        # No RPC helpers (samba-dcerpcd outlives smbd by seconds and serves nothing a share needs), no NetBIOS.
        self.config = f"{root}/smb.conf"
        with open(self.config, "w") as f:
            f.write("\n".join([
                "[global]", "rpc start on demand helpers = no", "netbios name = VITRINETEST",
                "workgroup = WORKGROUP", "server role = standalone server", "interfaces = 127.0.0.1",
                "bind interfaces only = yes", f"smb ports = {self.port}", "disable netbios = yes",
                "server min protocol = SMB2", f"private dir = {root}/private", f"lock directory = {root}/lock",
                f"state directory = {root}/state", f"cache directory = {root}/cache", f"pid directory = {root}/pid",
                f"ncalrpc dir = {root}/ncalrpc", f"log file = {root}/log/log.%m",
                f"passdb backend = tdbsam:{root}/private/passdb.tdb", "map to guest = Bad User",
                "guest account = nobody", "load printers = no", "printing = bsd", "printcap name = /dev/null",
                "disable spoolss = yes",
                "[photos]", f"path = {self.data}", "read only = yes", f"valid users = {self.user}",
                "[public]", f"path = {self.public}", "read only = yes", "guest ok = yes", "guest only = yes", ""]))
        subprocess.run(["pdbedit", "-s", self.config, "-a", "-t", "-u", self.user],
                       input=f"{self.password}\n{self.password}\n", text=True, check=True, capture_output=True)

    def start(self):
        open_to_server(self.public)
        # smbd makes a process group of its own (so it is not started in a new session, which it would fail to
        # make); never --no-process-group, with which it signals the test's group when it stops.
        self.process = subprocess.Popen(["smbd", "--foreground", "-s", self.config], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        def answers():
            if not harness.accepts(self.port):
                return False
            listing = subprocess.run(
                ["smbclient", "-p", str(self.port), "//127.0.0.1/photos", "-U", f"{self.user}%{self.password}",
                 "-c", "ls"], capture_output=True, timeout=10)
            return listing.returncode == 0
        if not harness.until(answers, 15, step=0.1):
            raise RuntimeError(f"smbd did not answer on port {self.port}")

    def url(self, share="photos"):
        return f"smb://127.0.0.1:{self.port}/{share}/"


class FaultProxy:
    """An HTTP proxy in front of a real server that misbehaves on demand. `mode`:
    - "pass": forwards every request;
    - "stall": forwards a photo's headers and its first `cut_at` bytes, then holds the connection open, silent;
    - "cut": the same, then closes the connection;
    - "busy": answers every request 503 with `Retry-After: retry_after`.
    Each request is written down with its time, method, path and Range header (`requests`)."""

    def __init__(self, upstream_port, cut_at=20_000, retry_after=2):
        import threading
        self.upstream = upstream_port
        self.cut_at = cut_at
        self.retry_after = retry_after
        self.mode = "pass"
        self.requests = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.port = self._server.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._server.close()

    def log(self):
        with self._lock:
            return list(self.requests)

    def _accept(self):
        import threading
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    @staticmethod
    def _read_request(client):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = client.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = client.recv(65536)
            if not chunk:
                return None
            body += chunk
        return lines[0], headers, head, body

    def _serve(self, client):
        import time
        with client:
            while not self._stop.is_set():
                request = self._read_request(client)
                if request is None:
                    return
                line, headers, head, body = request
                method, path = line.split(" ")[:2]
                mode = self.mode
                with self._lock:
                    self.requests.append((time.monotonic(), method, path, headers.get("range"), mode))
                if mode == "busy":
                    client.sendall(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: %d\r\nContent-Length: 0\r\n\r\n"
                                   % self.retry_after)
                    continue
                # One request per upstream connection, read to its end: the answer is then whole before it is
                # passed on (or cut short).
                head_lines = [part for part in head.split(b"\r\n") if not part.lower().startswith(b"connection:")]
                upstream = socket.create_connection(("127.0.0.1", self.upstream), timeout=30)
                with upstream:
                    upstream.sendall(b"\r\n".join(head_lines) + b"\r\nConnection: close\r\n\r\n" + body)
                    answer = b""
                    while True:
                        chunk = upstream.recv(65536)
                        if not chunk:
                            break
                        answer += chunk
                photo = method == "GET" and path.lower().endswith(".jpg")
                if photo and mode in ("stall", "cut"):
                    header_end = answer.index(b"\r\n\r\n") + 4
                    client.sendall(answer[:header_end + self.cut_at])
                    if mode == "cut":
                        return
                    self._stop.wait(3600)
                    return
                client.sendall(answer)
                if b"connection: close" in answer[:answer.find(b"\r\n\r\n")].lower():
                    return
