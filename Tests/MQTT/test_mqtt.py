#!/usr/bin/python3
"""Vitrine on a real MQTT broker: Debian's mosquitto on loopback ports with a throw-away config (an anonymous
listener, one with a password file, one TLS-only with a test CA made by openssl), python3-paho-mqtt as Home
Assistant and as a fleet operator, and the release binary on headless panels.

1. every command over MQTT acts as over the control socket, and the state follows within a second;
2. the discovery payloads carry the keys Home Assistant requires, the select's options follow a category added on
   disk, and Home Assistant's `online` brings them again;
3. faults: the broker down at start, killed mid-run, stopped for VITRINE_MQTT_STOP_SECONDS (default 25, five keep-alives) while the
   player runs at a 0.2 s interval (no flip late by more than 20 ms of the player's own doing), a wrong password, a world-readable credentials
   file, a 1 MiB payload and random bytes on the command topic, the player killed (the will says offline);
4. three players on one broker: `PREFIX/all/cmd` reaches all three, a group command only its group;
5. the image topic: the slide on screen as a JPEG, following the show;
6. two screens (`outputs`): a Home Assistant device per output, linked to the player's, with its own state and
   command topics; a retained command on an output's topic is ignored;
6. TLS with a client certificate, and a broker whose certificate the player's CA did not sign;
9. brokers of MQTT 3.1.1 only: one that refuses 5 by its CONNACK (socket code, as Mosquitto 1.x), and amqtt from
   PyPI, which never answers 5's CONNECT: the player says once that it speaks 3.1.1, connects, publishes, obeys a
   command and ignores a retained one;
8. retained commands (`screen off` on the player's topic, `pause` on the fleet's, published with retain before it
   starts) are ignored with a log line and the player starts lit and playing; the fleet and group topics steer but
   may not rotate the token or reload (mqtt.commands), the player's own topic may; category names as Home
   Assistant's select sends them (JSON-quoted: a folder called next, one with spaces at its ends, unicode escapes);
7. the overlay (running beside the others): a text from a topic on screen within a second of a publish, updated,
   hidden after its staleness limit, nothing drawn while the screen is off; with a one-hour interval the clock
   changes at each minute as a strip over the same photo; every fade step carries it. Each screen is compared
   pixel for pixel with `vitrine render --overlay --time --text`.

Prints PASS/FAIL per check and `N passed, M failed`. Usage: test_mqtt.py --vitrine BIN
"""
import argparse
import http.client
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import paho.mqtt.client as mqtt
    from PIL import Image, ImageChops
except ImportError as missing:
    print(f"FAIL  {missing.name} is missing (make mqtt-test installs python3-paho-mqtt and python3-pil)")
    sys.exit(1)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Tests"))
import harness  # noqa: E402  (Tests/harness.py)
from harness import record, summary  # noqa: E402

PANEL = (64, 48)
lock = threading.Lock()


def until(condition, timeout):
    """harness.until polling every 20 ms: the overlay's redraws are timed to a few tens of milliseconds."""
    return harness.until(condition, timeout, step=0.02)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_library(root, categories):
    for name, colors in categories.items():
        for index, color in enumerate(colors):
            path = f"{root}/{name}/{index:02d}-{name.lower()}.jpg"
            os.makedirs(os.path.dirname(path), exist_ok=True)
            Image.new("RGB", PANEL, color).save(path, quality=90)
    return root


def make_certificates(folder):
    """A test CA, a server certificate for localhost and a client certificate it signed; a second CA that signed
    nothing the broker has."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)
    for ca in ("ca", "other-ca"):
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN=Vitrine test {ca}",
            "-keyout", f"{ca}.key", "-out", f"{ca}.pem")
    with open(f"{folder}/server.ext", "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, subject in (("server", "/CN=localhost"), ("client", "/CN=frame")):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", f"{name}.key", "-out", f"{name}.csr")
        extra = ["-extfile", "server.ext"] if name == "server" else []
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days",
            "2", "-out", f"{name}.pem", *extra)
    for name in ("client.key", "server.key"):
        os.chmod(f"{folder}/{name}", 0o600)


class Broker:
    """mosquitto with an anonymous listener (`port`), a password listener (`password_port`, user frame,
    password right) and a TLS listener that wants a client certificate (`tls_port`)."""

    def __init__(self, work, name, certificates=None):
        self.work = work
        self.port = free_port()
        self.password_port = free_port()
        self.tls_port = free_port() if certificates else None
        self.config = f"{work}/{name}.conf"
        passwords = f"{work}/{name}.passwd"
        with open(passwords, "w") as f:
            f.write("frame:right\n")
        subprocess.run(["mosquitto_passwd", "-U", passwords], check=True, capture_output=True)
        # Started as root, mosquitto would drop to its own user, which cannot read the files in the work folder.
        lines = ["per_listener_settings true", "persistence false", f"user {pwd.getpwuid(os.getuid()).pw_name}",
                 f"log_dest file {work}/{name}-broker.log",
                 f"listener {self.port} 127.0.0.1", "allow_anonymous true",
                 f"listener {self.password_port} 127.0.0.1", "allow_anonymous false", f"password_file {passwords}"]
        if certificates:
            lines += [f"listener {self.tls_port} localhost", "allow_anonymous true",
                      f"cafile {certificates}/ca.pem", f"certfile {certificates}/server.pem",
                      f"keyfile {certificates}/server.key", "require_certificate true"]
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.process = None

    def start(self):
        self.process = subprocess.Popen(["mosquitto", "-c", self.config], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        if not until(lambda: harness.accepts(self.port), 10):
            raise RuntimeError("mosquitto did not start")

    def kill(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait()


class Observer:
    """A paho client that records every message under `topic_filter` (Home Assistant, or a fleet operator)."""

    def __init__(self, broker, topic_filter="#", name="observer"):
        self.messages = []
        self.client = mqtt.Client(client_id=f"{name}-{os.getpid()}-{random.randrange(1 << 30)}")
        self.client.on_message = self._message
        self.client.on_connect = lambda client, *_: client.subscribe(topic_filter)
        self.client.reconnect_delay_set(0.2, 1)
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        until(self.client.is_connected, 10)

    def _message(self, _client, _userdata, message):
        with lock:
            self.messages.append((time.monotonic(), message.topic, message.payload, message.retain))

    def since(self, start, topic):
        with lock:
            return [(t, payload) for t, name, payload, _ in self.messages if t >= start and name == topic]

    def wait(self, topic, predicate, start, timeout=5):
        """The first message on `topic` at or after `start` whose payload satisfies `predicate`: (time, payload)."""
        def found():
            return next(((t, p) for t, p in self.since(start, topic) if predicate(p)), None)
        return until(found, timeout)

    def publish(self, topic, payload, retain=False):
        self.client.publish(topic, payload, retain=retain).wait_for_publish(5)

    def close(self):
        self.client.loop_stop()
        self.client.disconnect()


def state(payload):
    try:
        return json.loads(payload)
    except ValueError:
        return {}


class Player:
    def __init__(self, vitrine, work, name, library, mqtt_settings, interval=30.0, stats=False, extra=None,
                 snapshots=None):
        self.name = name
        self.socket = f"{work}/{name}.sock"
        self.log = f"{work}/{name}.log"
        self.metrics = f"{work}/{name}.prom"
        config = {"library": library, "deviceTable": f"{REPO}/Config/devices.json", "interval": interval,
                  "transition": "none", "controlSocket": self.socket, "metricsFile": self.metrics,
                  "metricsInterval": 1, "positionFile": "", "headerCacheFolder": "", "renditionCacheFolder": "",
                  "display": {"backend": "headless", "headlessSize": f"{PANEL[0]}x{PANEL[1]}"}, "mqtt": mqtt_settings}
        config.update(extra or {})
        self.config = f"{work}/{name}.json"
        with open(self.config, "w") as f:
            json.dump(config, f)
        arguments = ([vitrine, "play", "--config", self.config] + (["--stats"] if stats else [])
                     + (["--snapshots", snapshots] if snapshots else []))
        env = {k: v for k, v in os.environ.items() if k not in ("STATE_DIRECTORY", "JOURNAL_STREAM")}
        # Without a state directory the web token goes to the XDG state folder, never into the library.
        self.xdg_state = f"{work}/{name}-xdg-state"
        env["XDG_STATE_HOME"] = self.xdg_state
        self.process = subprocess.Popen(arguments, stdout=open(self.log, "w"), stderr=subprocess.STDOUT, env=env)
        until(lambda: os.path.exists(self.socket), 10)

    def ctl(self, command):
        return harness.ctl(self.socket, command)

    def status(self):
        return json.loads(self.ctl("status"))

    def output(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def lines(self, text):
        return [line for line in self.output().splitlines() if text in line]

    def stop(self, sig=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=20)


def mqtt_settings(broker, name, **extra):
    settings = {"host": "127.0.0.1", "port": broker.port, "id": name, "keepAlive": 10}
    settings.update(extra)
    return settings


def commands_act_as_on_the_socket(vitrine, work, broker):
    library = make_library(f"{work}/commands", {"A": [(200, 20, 20), (20, 200, 20), (20, 20, 200)],
                                                 "B": [(220, 220, 20), (20, 220, 220)]})
    observer = Observer(broker, "vitrine/#")
    player = Player(vitrine, work, "commands", library, mqtt_settings(broker, "commands"),
                    extra={"startCategory": "A"})
    topic = "vitrine/commands"
    try:
        first = observer.wait(f"{topic}/state", lambda p: state(p).get("slide") is not None, 0, timeout=15)
        record(bool(first), "the state is published once the first slide is on screen")
        record(bool(observer.wait(f"{topic}/availability", lambda p: p == b"online", 0)),
               "availability says online")
        # Each command, what the state must then say, and the same check against the socket's status.
        steps = [
            ("pause", lambda s: "user" in s["paused"], lambda st: "user" in st["paused"]),
            ("resume", lambda s: "user" not in s["paused"], lambda st: "user" not in st["paused"]),
            ("next", lambda s: s["position"] == 2, lambda st: st["position"] == 2),
            ("prev", lambda s: s["position"] == 1, lambda st: st["position"] == 1),
            ("category B", lambda s: s["category"] == "B" and s["position"] == 1,
             lambda st: st["category"] == "B"),
            ("category next", lambda s: s["category"] == "A" and s["position"] == 1,
             lambda st: st["category"] == "A"),
            ("next", lambda s: s["position"] == 2, lambda st: st["position"] == 2),
            ("first", lambda s: s["position"] == 1, lambda st: st["position"] == 1),
            ("toggle", lambda s: "user" in s["paused"], lambda st: "user" in st["paused"]),
            ("toggle", lambda s: "user" not in s["paused"], lambda st: "user" not in st["paused"]),
            ("screen off", lambda s: s["screen"] == "off", lambda st: st["screen"] == "off"),
            ("screen on", lambda s: s["screen"] == "on", lambda st: st["screen"] == "on"),
            ("interval 7.5", lambda s: s["interval"] == 7.5, lambda st: True),
        ]
        slowest = 0.0
        for command, expected, on_socket in steps:
            start = time.monotonic()
            observer.publish(f"{topic}/cmd", command)
            reply = observer.wait(f"{topic}/reply", lambda p: True, start)
            changed = observer.wait(f"{topic}/state", lambda p: expected(state(p)), start, timeout=3)
            seen = changed[0] - start if changed else None
            slowest = max(slowest, seen if seen is not None else 99)
            record(bool(reply) and reply[1] == b"ok" and changed and seen < 1.0 and on_socket(player.status()),
                   f"`{command}` over MQTT: reply {reply[1] if reply else None}, state after "
                   f"{'%.0f ms' % (seen * 1000) if seen is not None else 'never'}, the socket's status agrees")
        record(slowest < 1.0, f"the state follows every command within a second (slowest {slowest * 1000:.0f} ms)")
        for line in ("status", "bogus words", "interval 0", "reload", "category Nowhere"):
            start = time.monotonic()
            observer.publish(f"{topic}/cmd", line)
            reply = observer.wait(f"{topic}/reply", lambda p: True, start)
            answer = player.ctl(line)
            if line == "status":
                same = reply and set(state(reply[1])) == set(json.loads(answer))
            else:
                same = reply and reply[1].decode() == answer
            record(bool(same), f"`{line}` answers over MQTT as on the socket: {answer[:70]!r}")
        # `reload` put the config's interval back: the state saying so is the last one there will be.
        until(lambda: state(observer.since(0, f"{topic}/state")[-1][1]).get("interval") == 30, 5)
        last = observer.since(0, f"{topic}/state")[-1][1]
        retained = Observer(broker, f"{topic}/state", name="late")
        got = until(lambda: retained.since(0, f"{topic}/state"), 5)
        record(bool(got) and got[0][1] == last, "the state is retained: a client that subscribes later gets the "
                                                "latest at once")
        retained.close()
    finally:
        player.stop()
        observer.close()


REQUIRED = {"button": {"command_topic"}, "switch": {"command_topic"}, "select": {"command_topic", "options"},
            "sensor": {"state_topic"}, "number": {"command_topic"}, "image": {"image_topic"}}


def retained_and_authority(vitrine, work, broker):
    library = make_library(f"{work}/retained", {"A": [(200, 20, 20), (20, 200, 20)], "next": [(20, 20, 200)],
                                                 " Spaces ": [(220, 220, 20)], "\u00c9t\u00e9": [(20, 220, 220)]})
    # A prefix of its own: its fleet commands must reach no other test's player (the overlay's runs meanwhile).
    observer = Observer(broker, "meet/#")
    own, fleet, group = "meet/retained/cmd", "meet/all/cmd", "meet/group/hall/cmd"
    # What Home Assistant's mqtt.publish with retain: true leaves on the broker.
    observer.publish(own, "screen off", retain=True)
    observer.publish(fleet, "pause", retain=True)
    player = Player(vitrine, work, "retained", library,
                    mqtt_settings(broker, "retained", groups=["hall"], prefix="meet"),
                    extra={"startCategory": "A"})
    try:
        first = observer.wait("meet/retained/state", lambda p: state(p).get("slide") is not None, 0, timeout=15)
        ignored = until(lambda: len(player.lines("ignored a retained message")) >= 2, 5)
        status = player.status()
        record(bool(first) and ignored and status["screen"] == "on" and status["paused"] == [],
               f"retained `screen off` and `pause` are not obeyed at start: screen {status['screen']}, paused "
               f"{status['paused']}, {len(player.lines('ignored a retained message'))} log lines")
        start = time.monotonic()
        observer.publish(own, "pause")
        paused = observer.wait("meet/retained/state", lambda p: "user" in state(p).get("paused", []), start)
        start = time.monotonic()
        observer.publish(own, "resume")
        resumed = observer.wait("meet/retained/reply", lambda p: p == b"ok", start)
        record(bool(paused) and bool(resumed), "a command sent now on the same topic is obeyed")

        def reply_to(topic, command):
            start = time.monotonic()
            observer.publish(topic, command)
            got = observer.wait("meet/retained/reply", lambda p: True, start)
            return got[1].decode() if got else None
        for topic, command in ((fleet, "token rotate"), (group, "token rotate"), (fleet, "reload"),
                               (group, "reload")):
            answer = reply_to(topic, command)
            record(answer is not None and "is not allowed here" in answer and "steer" in answer,
                   f"`{command}` on {topic} is refused: {answer!r}")
        record(reply_to(fleet, "next") == "ok" and (reply_to(group, "status") or "").startswith("{"),
               "the fleet and group topics still steer and ask for the status")
        record(reply_to(own, "reload") == "ok", "`reload` on the player's own topic is obeyed")
        for name in ("next", " Spaces ", "\u00c9t\u00e9", "A"):
            # As Home Assistant's select sends it: category {{ value | tojson }} (ASCII, with \\u escapes).
            answer = reply_to(own, "category " + json.dumps(name))
            chosen = until(lambda: player.status()["category"] == name, 2)
            record(answer == "ok" and chosen, f"category {json.dumps(name)} over MQTT: {answer!r}, on screen "
                                              f"{player.status()['category']!r}")
        answer = reply_to(own, "category Nowhere")
        record(answer is not None and answer.startswith("error: no category named"),
               f"a category that does not exist: {answer!r}")
    finally:
        player.stop()
        # The broker keeps them for every later player: cleared as a user would.
        observer.publish(own, b"", retain=True)
        observer.publish(fleet, b"", retain=True)
        observer.close()


def retained_during_a_clip(vitrine, work):
    """A clip playing (alone in its category, so it loops) when the player reconnects to a broker that holds a
    retained `pause` and `screen off` for it (what Home Assistant's mqtt.publish with retain leaves, published while
    the player was away): the clip plays on, lit, and a command sent now still holds it. The player is stopped
    (SIGSTOP) while its broker is restarted and the messages retained, so they can only reach it as retained ones."""
    library = f"{work}/clips"
    os.makedirs(f"{library}/Clips")
    shutil.copy(f"{REPO}/Tests/Fixtures/clips/counter.mp4", f"{library}/Clips/counter.mp4")
    broker = Broker(work, "clip")
    broker.start()
    player = Player(vitrine, work, "clip", library, mqtt_settings(broker, "clip", keepAlive=5),
                    extra={"startCategory": "Clips"})
    observer = None
    try:
        def clip():
            return player.status().get("clip") or {}
        playing = until(lambda: clip().get("presented", 0) >= 15, 20)
        online = until(lambda: player.lines("MQTT: connected"), 10)
        player.process.send_signal(signal.SIGSTOP)
        broker.kill()
        broker.start()
        observer = Observer(broker, "vitrine/clip/#")
        observer.publish("vitrine/clip/cmd", "pause", retain=True)
        observer.publish("vitrine/all/cmd", "screen off", retain=True)
        player.process.send_signal(signal.SIGCONT)
        ignored = until(lambda: len(player.lines("ignored a retained message")) >= 2, 20)
        before = clip().get("presented", 0)
        went_on = until(lambda: clip().get("presented", 0) >= before + 15, 5)
        status = player.status()
        record(bool(playing) and bool(online) and ignored and went_on and status["screen"] == "on"
               and "user" not in status["paused"] and (status.get("clip") or {}).get("playing") is True,
               f"a retained `pause` and `screen off` met on reconnecting during a clip are not obeyed: "
               f"{len(player.lines('ignored a retained message'))} log lines, the clip went on from {before} to "
               f"{clip().get('presented')} pictures, screen {status['screen']}, paused {status['paused']}")
        start = time.monotonic()
        observer.publish("vitrine/clip/cmd", "pause")
        answered = observer.wait("vitrine/clip/reply", lambda p: p == b"ok", start)
        held = until(lambda: clip().get("playing") is False, 5)
        count = clip().get("presented", 0)
        time.sleep(0.5)  # the window in which a held clip must show nothing new is the check itself
        record(bool(answered) and held and clip().get("presented", 0) == count,
               f"`pause` sent now holds the clip ({count} pictures, as many half a second later)")
    finally:
        player.stop()
        if observer is not None:
            observer.publish("vitrine/clip/cmd", b"", retain=True)
            observer.publish("vitrine/all/cmd", b"", retain=True)
            observer.close()
        broker.kill()


def broker_refusing_mqtt_5(vitrine, work):
    """A broker that refuses MQTT 5 by its CONNACK (as Mosquitto 1.x does), played here by a few lines of socket
    code: it answers MQTT 5's CONNECT with 3.1.1's CONNACK "unacceptable protocol version" and closes. The player says so
    once and connects with 3.1.1 on its next attempt."""
    library = make_library(f"{work}/old-broker", {"A": [(200, 20, 20)]})
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    levels = []
    stop = threading.Event()
    connections = []

    def read_packet(conn):
        header = conn.recv(1)
        if not header:
            return None, b""
        length, shift = 0, 0
        while True:
            byte = conn.recv(1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        body = b""
        while len(body) < length:
            chunk = conn.recv(length - len(body))
            if not chunk:
                break
            body += chunk
        return header[0], body

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except socket.timeout:
                continue
            conn.settimeout(5)
            try:
                kind, body = read_packet(conn)
                if kind != 0x10:
                    conn.close()
                    continue
                name_length = int.from_bytes(body[0:2], "big")
                level = body[2 + name_length]
                levels.append(level)
                if level == 5:
                    conn.sendall(b"\x20\x02\x00\x01")
                    conn.close()
                else:
                    conn.sendall(b"\x20\x02\x00\x00")
                    connections.append(conn)
            except OSError:
                conn.close()
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    player = Player(vitrine, work, "old-broker", library,
                    {"host": "127.0.0.1", "port": port, "id": "old-broker", "keepAlive": 10})
    try:
        connected = until(lambda: player.lines("MQTT: connected"), 15)
        fell_back = player.lines("MQTT 3.1.1 only")
        record(bool(connected) and levels[:2] == [5, 4] and len(fell_back) == 1,
               f"a broker refusing MQTT 5 by its CONNACK: CONNECTs of levels {levels[:4]}, the fallback said in "
               f"{len(fell_back)} line, then connected ({connected[:1]})")
    finally:
        player.stop()
        stop.set()
        thread.join(5)
        for conn in connections:
            conn.close()
        server.close()


# A broker of MQTT 3.1.1 only: amqtt (hbmqtt's successor, the broker Home Assistant once embedded), not in Debian:
# pinned, installed from PyPI into a venv under the build folder when missing.
AMQTT = "0.12.1"
MQTT_VENV = f"{REPO}/.build/mqtt-venv"


def amqtt_tool():
    """The `amqtt` broker of the pinned version in MQTT_VENV, installed when missing; None when it cannot be."""
    tool, problem = harness.pip_tool(MQTT_VENV, "amqtt", AMQTT, "amqtt")
    if problem:
        record(False, problem)
    return tool


class OldBroker:
    """amqtt on a loopback port, anonymous: it answers MQTT 5's CONNECT with 3.1.1's CONNACK "unacceptable protocol
    version", as Mosquitto 1.x and other older brokers do."""

    def __init__(self, work, tool):
        self.port = free_port()
        config = f"{work}/amqtt.yaml"
        with open(config, "w") as f:
            f.write(f"listeners:\n  default:\n    type: tcp\n    bind: 127.0.0.1:{self.port}\n"
                    "plugins:\n  amqtt.plugins.authentication.AnonymousAuthPlugin:\n    allow_anonymous: true\n")
        self.process = subprocess.Popen([tool, "-c", config], stdout=subprocess.DEVNULL,
                                        stderr=open(f"{work}/amqtt.log", "w"))
        if not until(lambda: harness.accepts(self.port), 20):
            raise RuntimeError("amqtt did not start")

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def broker_of_mqtt_311_only(vitrine, work):
    """A real broker of MQTT 3.1.1 only (amqtt): it never answers MQTT 5's CONNECT (others answer "unacceptable
    protocol version", played by socket code in broker_refusing_mqtt_5); the player says once that it tries 3.1.1,
    connects with it, publishes its state, obeys a command, and ignores a retained one there too (3.1.1 marks
    retained messages delivered on subscribe the same way)."""
    tool = amqtt_tool()
    if tool is None:
        return
    broker = OldBroker(work, tool)
    library = make_library(f"{work}/amqtt-player", {"A": [(200, 20, 20), (20, 200, 20)]})
    operator = Observer(broker, "vitrine/amqtt-player/#", name="amqtt-operator")
    player = None
    try:
        operator.publish("vitrine/amqtt-player/cmd", "screen off", retain=True)
        player = Player(vitrine, work, "amqtt-player", library,
                        {"host": "127.0.0.1", "port": broker.port, "id": "amqtt-player", "keepAlive": 30})
        # amqtt reads MQTT 5's CONNECT properties as 3.1.1's payload and waits for bytes that never come: the
        # player gives the attempt up after 15 s.
        connected = until(lambda: player.lines("MQTT: connected"), 40)
        fell_back = player.lines("the next attempt speaks MQTT 3.1.1")
        online = operator.wait("vitrine/amqtt-player/availability", lambda p: p == b"online", 0, timeout=10)
        record(bool(connected) and len(fell_back) == 1 and bool(online),
               f"a broker of MQTT 3.1.1 only (amqtt {AMQTT}): the fallback said in {len(fell_back)} line "
               f"({fell_back[0].strip() if fell_back else '-'}), connected, online published")
        ignored = until(lambda: player.lines("ignored a retained message"), 10)
        start = time.monotonic()
        operator.publish("vitrine/amqtt-player/cmd", "pause")
        paused = operator.wait("vitrine/amqtt-player/state", lambda p: "user" in state(p).get("paused", []), start)
        reply = json.loads(player.ctl("status"))
        record(bool(ignored) and bool(paused) and reply.get("screen") == "on",
               f"over 3.1.1 a command is obeyed (paused: {bool(paused)}) and the retained `screen off` is ignored "
               f"(screen {reply.get('screen')!r}; {ignored[0].strip() if ignored else 'no log line'})")
    finally:
        operator.publish("vitrine/amqtt-player/cmd", b"", retain=True)
        operator.close()
        if player is not None:
            player.stop()
        broker.kill()


def discovery_follows_the_library(vitrine, work, broker):
    library = make_library(f"{work}/discovery", {"Beach": [(200, 120, 20)], "Snow": [(240, 240, 250)]})
    home_assistant = Observer(broker, "homeassistant/#", name="homeassistant")
    player = Player(vitrine, work, "discovery", library, mqtt_settings(broker, "hall-frame"))
    prefix = "homeassistant/"
    select = f"{prefix}select/vitrine_hall-frame/category/config"
    try:
        got = home_assistant.wait(select, lambda p: True, 0, timeout=15)
        configs = {}
        with lock:
            for _, topic, payload, _ in home_assistant.messages:
                if "vitrine_hall-frame" in topic and payload:
                    configs[topic] = json.loads(payload)
        components = {topic.split("/")[1] for topic in configs}
        record(components == {"button", "switch", "select", "sensor", "number"},
               f"discovery announces buttons, switches, a select, sensors and a number: {sorted(components)}")
        missing = [f"{topic}: {sorted(REQUIRED[topic.split('/')[1]] - set(config))}"
                   for topic, config in configs.items() if not REQUIRED[topic.split("/")[1]] <= set(config)]
        record(not missing, f"each carries the keys Home Assistant requires ({len(configs)} configs) {missing}")
        devices = {json.dumps(config.get("device"), sort_keys=True) for config in configs.values()}
        unique = {config.get("unique_id") for config in configs.values()}
        record(len(devices) == 1 and len(unique) == len(configs) and '"sw_version"' in devices.pop(),
               "one device with model and version, a unique id per entity")
        record(bool(got) and json.loads(got[1]).get("options") == ["Beach", "Snow"],
               f"the select's options are the categories: {json.loads(got[1]).get('options') if got else None}")
        start = time.monotonic()
        make_library(library, {"Forest": [(20, 140, 40)]})
        grown = home_assistant.wait(select, lambda p: p and "Forest" in json.loads(p).get("options", []), start,
                                    timeout=10)
        record(bool(grown), "a category added on disk becomes an option of the select "
                            f"({'%.1f s' % (grown[0] - start) if grown else 'never'})")
        start = time.monotonic()
        home_assistant.publish("homeassistant/status", "online")
        again = until(lambda: len({t for t, p in [(m[1], m[2]) for m in home_assistant.messages if m[0] >= start]
                                   if "vitrine_hall-frame" in t}) >= len(configs), 5)
        record(bool(again), "Home Assistant saying online brings every config again")
    finally:
        player.stop()
        home_assistant.close()


def two_screens(vitrine, work, broker):
    """`outputs`: each output's show is a Home Assistant device of its own, linked to the player's, with its own
    state and command topics; a retained command on an output's topic is ignored like one on the player's."""
    library = make_library(f"{work}/screens", {"Menu": [(200, 20, 20), (20, 200, 20)],
                                                "Offers": [(20, 20, 200), (220, 220, 20)]})
    topic = "vitrine/screens"
    observer = Observer(broker, "#", name="screens-observer")
    observer.publish(f"{topic}/menu/cmd", "pause", retain=True)
    player = Player(vitrine, work, "screens", library, mqtt_settings(broker, "screens"), extra={"outputs": [
        {"name": "menu", "connector": "HDMI-A-1", "categories": ["Menu"], "mode": "64x48"},
        {"name": "offers", "connector": "HDMI-A-2", "categories": ["Offers"], "mode": "48x64"}]})
    try:
        states = {name: observer.wait(f"{topic}/{name}/state", lambda p: state(p).get("slide") is not None, 0,
                                      timeout=15) for name in ("menu", "offers")}
        record(all(states.values()) and state(states["menu"][1]).get("category") == "Menu"
               and state(states["offers"][1]).get("category") == "Offers",
               f"each output's show has its state topic: {[state(s[1]).get('category') if s else None for s in states.values()]}")
        ignored = until(lambda: player.lines(f"ignored a retained message on {topic}/menu/cmd"), 5)
        record(bool(ignored) and "user" not in json.loads(player.ctl("@menu status"))["paused"],
               "a retained `pause` on the menu's command topic is ignored with a log line; the menu plays")
        # Cleared as the log line says (an empty retained message), which the player hears as an empty command.
        cleared = time.monotonic()
        observer.publish(f"{topic}/menu/cmd", "", retain=True)
        observer.wait(f"{topic}/reply", lambda p: b"unknown command" in p, cleared)
        until(lambda: observer.since(0, "homeassistant/select/vitrine_screens_offers/category/config"), 10)
        configs = {}
        with lock:
            for _, name, payload, _ in observer.messages:
                if name.startswith("homeassistant/") and "vitrine_screens" in name and payload:
                    configs[name] = json.loads(payload)
        devices = {}
        for name, config in configs.items():
            device = config.get("device", {})
            devices.setdefault(device.get("identifiers", ["?"])[0], set()).add(device.get("via_device"))
        record(devices == {"vitrine_screens": {None}, "vitrine_screens_menu": {"vitrine_screens"},
                           "vitrine_screens_offers": {"vitrine_screens"}},
               f"three devices: the player's, and one per output linked to it ({devices})")
        offers_select = configs.get("homeassistant/select/vitrine_screens_offers/category/config", {})
        offers_pause = configs.get("homeassistant/switch/vitrine_screens_offers/pause/config", {})
        record(offers_select.get("options") == ["Offers"] and offers_pause.get("command_topic") == f"{topic}/offers/cmd"
               and offers_pause.get("state_topic") == f"{topic}/offers/state"
               and offers_pause.get("availability_topic") == f"{topic}/availability",
               f"the offers device's select has its categories ({offers_select.get('options')}) and its pause switch "
               f"its topics ({offers_pause.get('command_topic')}, {offers_pause.get('state_topic')})")
        start = time.monotonic()
        observer.publish(f"{topic}/offers/cmd", "pause")
        reply = observer.wait(f"{topic}/reply", lambda p: True, start)
        paused = observer.wait(f"{topic}/offers/state", lambda p: "user" in state(p).get("paused", []), start)
        menu = json.loads(player.ctl("@menu status"))["paused"]
        record(bool(reply) and reply[1] == b"ok" and bool(paused) and "user" not in menu,
               f"`pause` on the offers' command topic pauses the offers show alone (reply "
               f"{reply[1] if reply else None}; menu paused {menu})")
        start = time.monotonic()
        observer.publish(f"{topic}/cmd", "resume")
        resumed = observer.wait(f"{topic}/offers/state", lambda p: "user" not in state(p).get("paused", ["user"]),
                                start)
        record(bool(resumed), "`resume` on the player's command topic reaches the offers show too")
    finally:
        player.stop()
        observer.close()


def image_topic(vitrine, work, broker):
    """`image: true`: the slide on screen as a JPEG on PREFIX/ID/image, and Home Assistant's image entity."""
    colors = [(220, 30, 30), (30, 200, 40)]
    library = make_library(f"{work}/image", {"A": colors})
    observer = Observer(broker, "#")
    player = Player(vitrine, work, "pictured", library, mqtt_settings(broker, "pictured", image=True),
                    interval=3600, extra={"startCategory": "A", "fit": "cover"})
    topic = "vitrine/pictured"

    def color_of(payload):
        if not payload.startswith(b"\xff\xd8"):
            return None
        with open(f"{work}/picture.jpg", "wb") as f:
            f.write(payload)
        with Image.open(f"{work}/picture.jpg") as picture:
            rgb = picture.convert("RGB")
            return rgb.size, rgb.getpixel((rgb.size[0] // 2, rgb.size[1] // 2))

    def near(found, color):
        return found is not None and all(abs(a - b) <= 12 for a, b in zip(found[1], color))
    try:
        first = observer.wait(f"{topic}/image", lambda p: near(color_of(p), colors[0]), 0, timeout=15)
        record(bool(first), f"the image topic carries the slide on screen as a JPEG: "
                            f"{color_of(first[1]) if first else 'nothing'}")
        start = time.monotonic()
        observer.publish(f"{topic}/cmd", "next")
        second = observer.wait(f"{topic}/image", lambda p: near(color_of(p), colors[1]), start, timeout=5)
        record(bool(second), "and follows the show: `next` brings the next slide's picture "
                             f"({'%.0f ms' % ((second[0] - start) * 1000) if second else 'never'})")
        config = observer.wait("homeassistant/image/vitrine_pictured/picture/config", lambda p: p, 0)
        record(bool(config) and json.loads(config[1]).get("image_topic") == f"{topic}/image",
               "Home Assistant gets an image entity for it")

        # The web remote, added by a reload in the middle of an hour-long slide, shows that slide at once (it does
        # not wait for the next one), and it is the very picture the image topic carries: one is made for both.
        with open(player.config) as f:
            settings = json.load(f)
        port = free_port()
        settings["web"] = {"address": "127.0.0.1", "port": port, "pages": f"{REPO}/web"}
        with open(player.config, "w") as f:
            json.dump(settings, f)
        start = time.monotonic()
        answer = player.ctl("reload")
        token_file = f"{player.xdg_state}/vitrine/web-token"

        def slide_picture():
            try:
                with open(token_file) as f:
                    token = f.read().strip()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                try:
                    connection.request("GET", "/api/slide.jpg", headers={"Authorization": f"Bearer {token}"})
                    response = connection.getresponse()
                    data = response.read()
                finally:
                    connection.close()
            except OSError:
                return None
            return data if response.status == 200 else None
        picture = until(slide_picture, 5)
        waited = time.monotonic() - start
        latest = observer.since(0, f"{topic}/image")
        record(answer == "ok" and picture is not None and near(color_of(picture), colors[1])
               and bool(latest) and latest[-1][1] == picture,
               f"a web remote added by a reload shows the slide on screen within {waited:.1f} s (not at the next "
               f"slide): {color_of(picture) if picture else 'nothing'}, the same JPEG as the image topic's last "
               f"({len(latest)} published)")
    finally:
        player.stop()
        observer.close()


def broker_down_killed_and_back(vitrine, work, broker):
    """The broker is not there at start, comes, is killed and comes back."""
    library = make_library(f"{work}/down", {"A": [(200, 20, 20), (20, 200, 20), (20, 20, 200)]})
    player = Player(vitrine, work, "down", library, mqtt_settings(broker, "down"), interval=0.3)
    topic = "vitrine/down"
    try:
        shown = until(lambda: player.status()["presented"] >= 5, 15)
        record(bool(shown), "with no broker at start the show plays (5 slides at 0.3 s)")
        # Retries meanwhile (the backoff's first waits are 1 and 2 s), measured by the show itself: seven more slides
        # at 0.3 s; only their absence from the log is checked.
        presented = player.status()["presented"]
        until(lambda: player.status()["presented"] >= presented + 7, 10)
        refusals = player.lines("MQTT: cannot connect")
        record(len(refusals) == 1, f"one log line for a broker that is down, not one per retry: {refusals}")
        broker.start()
        observer = Observer(broker, "vitrine/#")
        start = time.monotonic()
        online = observer.wait(f"{topic}/availability", lambda p: p == b"online", 0, timeout=15)
        record(bool(online), "it connects when the broker comes up "
                             f"({'%.1f s' % (online[0] - start) if online else 'not'} later)")
        record(bool(observer.wait(f"{topic}/state", lambda p: state(p).get("slide"), 0, timeout=5)),
               "and publishes its state")
        observer.close()
        broker.kill()
        before = player.status()["presented"]
        lost = until(lambda: player.lines("MQTT: lost"), 5)
        record(bool(lost), f"a killed broker is noticed: {lost[0].strip() if lost else 'no line'}")
        record(bool(until(lambda: player.status()["presented"] >= before + 5, 10)), "the show goes on without it")
        broker.start()
        observer = Observer(broker, "#")
        start = time.monotonic()
        back = observer.wait(f"{topic}/availability", lambda p: p == b"online", 0, timeout=15)
        states = observer.wait(f"{topic}/state", lambda p: state(p).get("slide"), 0, timeout=5)
        configs = observer.wait("homeassistant/button/vitrine_down/next/config", lambda p: p, 0, timeout=5)
        record(bool(back and states and configs),
               "the broker back (without its retained messages): availability, state and discovery republished "
               f"({'%.1f s' % (back[0] - start) if back else '-'})")
        def metrics_say():
            with open(player.metrics) as f:
                text = f.read()
            return "vitrine_mqtt_reconnects_total 1\n" in text and "vitrine_mqtt_connected 1\n" in text
        metrics = until(metrics_say, 5)
        record(bool(metrics), "the metrics count the reconnects and say connected")
        killed_at = time.monotonic()
        player.stop(signal.SIGKILL)
        will = observer.wait(f"{topic}/availability", lambda p: p == b"offline", killed_at, timeout=20)
        record(bool(will), "the player killed: the broker says offline by its will "
                           f"({'%.1f s' % (will[0] - killed_at) if will else 'never'})")
        observer.close()
    finally:
        player.stop()


def wrong_password_and_credentials(vitrine, work, broker):
    library = make_library(f"{work}/auth", {"A": [(200, 20, 20), (20, 200, 20)]})
    wrong = f"{work}/wrong.secret"
    with open(wrong, "w") as f:
        f.write("frame\nwrong\n")
    os.chmod(wrong, 0o600)
    right = f"{work}/right.secret"
    with open(right, "w") as f:
        f.write("frame\nright\n")
    os.chmod(right, 0o640)
    open_file = f"{work}/open.secret"
    shutil.copy(right, open_file)
    os.chmod(open_file, 0o644)
    observer = Observer(broker, "vitrine/#")
    refused = Player(vitrine, work, "refused", library,
                     mqtt_settings(broker, "refused", port=broker.password_port, credentialsFile=wrong), interval=0.3)
    accepted = Player(vitrine, work, "accepted", library,
                      mqtt_settings(broker, "accepted", port=broker.password_port, credentialsFile=right))
    exposed = Player(vitrine, work, "exposed", library,
                     mqtt_settings(broker, "exposed", port=broker.password_port, credentialsFile=open_file))
    try:
        # Three or four refused attempts meanwhile (backoff 1, 2, 4 s), measured by the show itself (twenty slides at
        # 0.3 s): the log must still have one line.
        until(lambda: refused.status()["presented"] >= 20, 15)
        lines = refused.lines("MQTT: cannot connect")
        record(len(lines) == 1 and ("not authori" in lines[0].lower() or "bad user name or password" in lines[0].lower()),
               f"a wrong password is one clear line, whatever the retries: {lines}")
        record(refused.status()["presented"] >= 10, "and the show goes on")
        record(bool(observer.wait("vitrine/accepted/availability", lambda p: p == b"online", 0)),
               "the right password (a 640 file) connects")
        line = exposed.lines("credentials file")
        record(bool(line) and "others can read or write it (mode 644); chmod o-rwx" in line[0]
               and exposed.status()["count"] >= 1,
               f"a world-readable credentials file is refused and the show plays: {line[0].strip() if line else ''}")
        check = subprocess.run([VITRINE, "check-config", exposed.config], capture_output=True, text=True)
        record(check.returncode == 1 and "chmod o-rwx" in check.stdout + check.stderr,
               f"check-config refuses it too (exit {check.returncode})")
    finally:
        for player in (refused, accepted, exposed):
            player.stop()
        observer.close()


def hostile_payloads(vitrine, work, broker):
    library = make_library(f"{work}/payloads", {"A": [(200, 20, 20), (20, 200, 20)]})
    observer = Observer(broker, "vitrine/#")
    player = Player(vitrine, work, "payloads", library, mqtt_settings(broker, "payloads"))
    topic = "vitrine/payloads"
    try:
        observer.wait(f"{topic}/state", lambda p: state(p).get("slide"), 0, timeout=15)
        before = player.status()

        def peak_kib():
            with open(f"/proc/{player.process.pid}/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
        peak = peak_kib()
        start = time.monotonic()
        # Above the 1024 bytes a command may have: read, refused with a reply and one log line.
        observer.publish(f"{topic}/cmd", b"next " + b"x" * 2000)
        # Above the maximum packet size the player asked for at CONNECT (MQTT 5): the broker drops it, and the
        # player never allocates it.
        observer.publish(f"{topic}/cmd", b"next " + b"x" * (1 << 20))
        generator = random.Random(17)
        for _ in range(200):
            observer.publish(f"{topic}/cmd", bytes(generator.randrange(256) for _ in range(generator.randrange(1, 600))))
        observer.publish("vitrine/all/cmd", b"\x00\xff\xfe" * 100)
        replies = until(lambda: len(observer.since(start, f"{topic}/reply")) >= 202, 10)
        after = player.status()
        errors = [p for _, p in observer.since(start, f"{topic}/reply") if not p.startswith(b"error: ")]
        record(bool(replies) and not errors, f"a 2 KiB command and 201 random payloads are refused with an error "
                                             f"reply ({len(observer.since(start, f'{topic}/reply'))} replies)")
        grown = peak_kib() - peak
        record(len(observer.since(start, f"{topic}/reply")) == 202 and grown < 768,
               f"a 1 MiB message is not sent to the player (its MQTT 5 maximum packet size): no reply for it, and its "
               f"peak memory grew {grown} KiB")
        record(player.process.poll() is None and after["slide"] == before["slide"]
               and after["paused"] == before["paused"] and after["screen"] == "on",
               "nothing else happens: the same slide, not paused, the screen on")
        record(len(player.lines("MQTT: refused a message")) == 1, "the oversized one is one log line")
    finally:
        player.stop()
        observer.close()


def fleet(vitrine, work, broker):
    library = make_library(f"{work}/fleet", {"A": [(200, 20, 20), (20, 200, 20)]})
    observer = Observer(broker, "shop/#")
    players = {name: Player(vitrine, work, name, library,
                            mqtt_settings(broker, name, prefix="shop", groups=groups))
               for name, groups in (("lobby-1", ["lobby"]), ("lobby-2", ["lobby", "ground"]), ("till", []))}
    try:
        for name in players:
            observer.wait(f"shop/{name}/state", lambda p: state(p).get("slide"), 0, timeout=15)

        def paused_set(start):
            paused = set()
            for name in players:
                latest = observer.since(start, f"shop/{name}/state")
                if latest and "user" in state(latest[-1][1]).get("paused", []):
                    paused.add(name)
            return paused
        start = time.monotonic()
        observer.publish("shop/all/cmd", "pause")
        everyone = until(lambda: paused_set(start) == set(players), 2)
        record(bool(everyone), f"`shop/all/cmd pause` pauses all three: {sorted(paused_set(start))}")
        start = time.monotonic()
        observer.publish("shop/all/cmd", "resume")
        until(lambda: all(observer.since(start, f"shop/{name}/state") for name in players), 2)
        start = time.monotonic()
        observer.publish("shop/group/lobby/cmd", "pause")
        until(lambda: paused_set(start) == {"lobby-1", "lobby-2"}, 2)
        # No window for the till: it answers a command sent after the group's, over the same connection, in order,
        # so had the group command reached it, it would have been taken before that answer.
        asked = time.monotonic()
        observer.publish("shop/till/cmd", "status")
        observer.wait("shop/till/reply", lambda p: p.startswith(b"{"), asked)
        statuses = {name: "user" in player.status()["paused"] for name, player in players.items()}
        record(statuses == {"lobby-1": True, "lobby-2": True, "till": False},
               f"`shop/group/lobby/cmd pause` pauses only the lobby: {statuses}")
    finally:
        for player in players.values():
            player.stop()
        observer.close()


def tls(vitrine, work, broker, certificates):
    library = make_library(f"{work}/tls", {"A": [(200, 20, 20)]})
    observer = Observer(broker, "vitrine/#")
    good = {"caFile": f"{certificates}/ca.pem", "certFile": f"{certificates}/client.pem",
            "keyFile": f"{certificates}/client.key"}
    secure = Player(vitrine, work, "secure", library,
                    mqtt_settings(broker, "secure", host="localhost", port=broker.tls_port, tls=good))
    doubtful = Player(vitrine, work, "doubtful", library,
                      mqtt_settings(broker, "doubtful", host="localhost", port=broker.tls_port,
                                    tls=dict(good, caFile=f"{certificates}/other-ca.pem")))
    try:
        online = observer.wait("vitrine/secure/availability", lambda p: p == b"online", 0, timeout=15)
        record(bool(online), "TLS with the test CA and a client certificate connects")
        start = time.monotonic()
        observer.publish("vitrine/secure/cmd", "pause")
        record(bool(observer.wait("vitrine/secure/state", lambda p: "user" in state(p).get("paused", []), start)),
               "and takes commands over it")
        lines = until(lambda: doubtful.lines("MQTT: cannot connect"), 10)
        record(bool(lines) and doubtful.status()["count"] == 1
               and not observer.since(0, "vitrine/doubtful/availability"),
               f"a broker certificate the CA did not sign is refused, the show plays: "
               f"{lines[0].strip() if lines else 'no line'}")
    finally:
        secure.stop()
        doubtful.stop()
        observer.close()


def broker_stopped_while_fast(vitrine, work, broker, seconds):
    """The broker process stopped (SIGSTOP: its sockets stay open and silent, the worst case) while the player
    shows a slide every 0.2 s: no flip may be late because of it. Lateness the machine explains is not the
    player's: a probe process outside it (harness.StallProbe) writes down when it was itself held up, and a slide's
    lateness inside such a window is taken off (CI once failed on one slide of 1500 late by 77 ms on a busy
    machine, with nothing of the player's to blame)."""
    library = make_library(f"{work}/fast", {"A": [(200, 20, 20), (20, 200, 20), (20, 20, 200), (200, 200, 20)]})
    player = Player(vitrine, work, "fast", library, mqtt_settings(broker, "fast", keepAlive=5), interval=0.2,
                    stats=True)
    observer = Observer(broker, "vitrine/fast/#")
    probe = harness.StallProbe()
    try:
        observer.wait("vitrine/fast/availability", lambda p: p == b"online", 0, timeout=15)
        observer.close()

        def lateness(lines):
            return harness.lateness(lines, probe)
        # The reference: the same player with the broker answering, from its first measured slide.
        until(lambda: player.lines("deadline-to-present"), 10)
        skip = len(player.lines("deadline-to-present"))
        # The windows are counted in slides (0.2 s each), waited for with a deadline.
        until(lambda: len(player.lines("deadline-to-present")) >= skip + 100, 40)
        reference = lateness(player.lines("deadline-to-present")[skip:])
        skip = len(player.lines("deadline-to-present"))
        broker.process.send_signal(signal.SIGSTOP)
        until(lambda: len(player.lines("deadline-to-present")) >= skip + int(seconds / 0.2), seconds * 2 + 30)
        broker.process.send_signal(signal.SIGCONT)
        resumed = time.monotonic()
        # The probe reports a window when it wakes from it: give it a moment past the last slide.
        time.sleep(0.05)
        stopped = lateness(player.lines("deadline-to-present")[skip:])
        worst = max((late for late, _ in stopped), default=None)
        own = max((late - held for late, held in stopped), default=None)
        excused = sum(1 for _, held in stopped if held > 0)
        # A flip lands on the panel's next vblank (the headless panel's 60 Hz): up to 16.7 ms after the deadline
        # with nothing else going on. Late because of the broker is beyond that.
        vblank = 1000 / 60
        record(len(stopped) > 0.9 * seconds / 0.2 and own is not None and own - vblank <= 20,
               f"broker stopped {seconds:.0f} s at a 0.2 s interval: {len(stopped)} slides, the latest "
               f"{worst} ms after its deadline in all, {own if own is not None else 0:.1f} ms by the player's own "
               f"doing ({own - vblank if own is not None else 0:.1f} ms beyond the next vblank, 20 ms allowed; "
               f"{excused} slides held up with the probe); with the broker answering: "
               f"{max((late for late, _ in reference), default='-')} ms over {len(reference)} slides")
        gave_up = player.lines("MQTT: lost")
        record(bool(gave_up), f"the silent broker was given up: {gave_up[0].strip() if gave_up else 'never'}")
        again = until(lambda: player.lines("MQTT: connected again"), 90)
        observer = Observer(broker, "vitrine/fast/#")
        online = observer.wait("vitrine/fast/availability", lambda p: p == b"online", 0, timeout=5)
        record(bool(again) and bool(online),
               f"it connects again when the broker goes on ({time.monotonic() - resumed:.1f} s later)")
        observer.close()
    finally:
        probe.stop()
        player.stop()


def overlay_clock_and_texts(vitrine, work, broker):
    """The clock, the date and a Home Assistant sensor over the photo, checked against `vitrine render --overlay`."""
    library = make_library(f"{work}/overlay", {"A": [(200, 20, 20), (20, 20, 200)]})
    frames = f"{work}/overlay-frames"
    size = (480, 270)
    overlay = {"clock": "HH:mm", "date": True, "corner": "top-right",
               "texts": [{"topic": "home/outside", "field": "temperature", "format": "{value} °C", "staleSeconds": 4}]}
    extra = {"overlay": overlay, "transition": "fade", "transitionSeconds": 1, "fit": "contain", "locale": "en",
             "display": {"backend": "headless", "headlessSize": f"{size[0]}x{size[1]}"}}
    observer = Observer(broker, "home/#", name="home")
    observer_replies = Observer(broker, "vitrine/overlay/reply", name="overlay-replies")
    player = Player(vitrine, work, "overlay", library, mqtt_settings(broker, "overlay"), interval=3600, extra=extra,
                    snapshots=frames)
    photos = sorted(f"{library}/A/{name}" for name in os.listdir(f"{library}/A"))

    def lines(name):
        try:
            with open(f"{frames}/{name}") as f:
                return [json.loads(line) for line in f if line.endswith("\n")]
        except OSError:
            return []

    def new_overlay(count, timeout):
        """Waits for overlay snapshot number count + 1: (its image, seconds waited) or (None, seconds)."""
        start = time.monotonic()
        if not until(lambda: len(lines("overlays.jsonl")) > count, timeout):
            return None, time.monotonic() - start
        waited = time.monotonic() - start
        return Image.open(f"{frames}/overlay-{count + 1:06d}.ppm").convert("RGB"), waited

    def minute():
        return time.strftime("%Y-%m-%d %H:%M")

    def render(photo, minute_text, texts=(), fade=None):
        out = f"{work}/overlay-ref.png"
        command = [vitrine, "render", photo, "--config", player.config, "--overlay", "--time", minute_text,
                   "--output", out] + [word for value in texts for word in ("--text", value)]
        if fade:
            command += ["--fade-from", fade[0], "--fade-at", str(fade[1])]
        subprocess.run(command, check=True, capture_output=True)
        return Image.open(out).convert("RGB")

    def same(image, photo, minutes, texts=(), fade=None):
        """Whether `image` is the photo with the overlay at one of `minutes`, pixel for pixel."""
        return image is not None and any(
            not ImageChops.difference(image, render(photo, m, texts, fade)).getbbox() for m in set(minutes))

    def in_corner(box):
        return box is not None and box[0] >= size[0] // 2 and box[3] <= size[1] // 2

    try:
        if not until(lambda: len(lines("presented.jsonl")) >= 1, 15):
            record(False, "overlay: the player showed no photo: " + player.output()[-1500:])
            return
        # The texts' checks take about ten seconds: start them early in a minute, so no clock change falls among
        # them, and not in its first two seconds, when the minute's own redraw may still be on its way.
        until(lambda: 2 <= time.localtime().tm_sec < 40, 65)
        count = len(lines("overlays.jsonl"))
        before = minute()
        observer.publish("home/outside", json.dumps({"temperature": 21.5, "humidity": 80}).encode())
        image, waited = new_overlay(count, 5)
        record(image is not None and waited < 1 and same(image, photos[0], [before, minute()], ["21.5"]),
               f"overlay: a sensor's value is on screen {waited * 1000:.0f} ms after its publish, exactly as "
               f"`render --overlay --text 21.5` draws it")
        observer.publish("home/outside", json.dumps({"temperature": 22}).encode())
        published = time.monotonic()
        image, waited = new_overlay(count + 1, 5)
        record(image is not None and waited < 1 and same(image, photos[0], [before, minute()], ["22"]),
               f"overlay: an update is on screen {waited * 1000:.0f} ms after its publish")
        image, _ = new_overlay(count + 2, 8)
        stale = time.monotonic() - published
        record(image is not None and 3.9 <= stale <= 5.5 and same(image, photos[0], [before, minute()]),
               f"overlay: the value hides {stale:.1f} s after the last publish (staleSeconds 4), the clock stays")
        # Nothing is drawn while the screen is off; on again, the screen shows what is true now.
        flips = player.status()["flips"]
        player.ctl("screen off")
        count = len(lines("overlays.jsonl"))
        observer.publish("home/outside", json.dumps({"temperature": 5}).encode())
        # A negative check without a fixed wait: a command sent after the value is answered after the value was
        # taken (one connection, in order), so no flip for it can still be on its way then.
        asked = time.monotonic()
        observer.publish("vitrine/overlay/cmd", "status")
        answered = observer_replies.wait("vitrine/overlay/reply", lambda p: p.startswith(b"{"), asked)
        record(bool(answered) and player.status()["flips"] == flips and len(lines("overlays.jsonl")) == count,
               "overlay: a value that arrives while the screen is off is not drawn (no flip, after the player "
               "answered a command sent after it)")
        player.ctl("screen on")
        image, waited = new_overlay(count, 5)
        record(same(image, photos[0], [before, minute()], ["5"]),
               f"overlay: the screen on again shows the value that came meanwhile ({waited * 1000:.0f} ms)")
        # That value goes stale too; from then on the corner has the clock and the date.
        image, _ = new_overlay(count + 1, 8)
        record(same(image, photos[0], [before, minute()]), "overlay: and hides it when it goes stale")

        # The clock at each minute, over the same photo, a strip at a time.
        shown = len(lines("presented.jsonl"))
        previous = Image.open(f"{frames}/overlay-{len(lines('overlays.jsonl')):06d}.ppm").convert("RGB")
        for _ in range(2):
            count = len(lines("overlays.jsonl"))
            image, _ = new_overlay(count, 75)
            late = time.time() % 60
            box = ImageChops.difference(previous, image).getbbox() if image else None
            record(image is not None and late < 2 and in_corner(box) and same(image, photos[0], [minute()]),
                   f"overlay: the minute's redraw came {late:.2f} s into {minute()}, changed only {box} of the "
                   f"{size[0]}x{size[1]} screen, and is `render --time '{minute()}'` exactly")
            # Render shares the player's code: Pillow, which does not, must read the same time there.
            if image is not None:
                matches, read, margin = harness.pillow_reads_clock(image, minute()[-5:])
                record(matches, f"overlay: Pillow's DejaVu Sans, glyph by glyph, reads {read} in the corner "
                                f"(expected {minute()[-5:]}; each glyph's nearest other character on average "
                                f"{margin:.2f} behind in IoU)")
            previous = image or previous
        record(len(lines("presented.jsonl")) == shown, "overlay: the photo stayed (a one-hour interval)")

        # A fade: every step carries the clock.
        start = len(lines("presented.jsonl"))
        at = minute()
        player.ctl("next")
        until(lambda: any("fade" not in line for line in lines("presented.jsonl")[start:]), 10)
        steps = [line for line in lines("presented.jsonl")[start:] if "fade" in line]
        checked = [step for step in steps[:: max(1, len(steps) // 3)]][:3]
        good = [step for step in checked
                if same(Image.open(f"{frames}/{step['seq']:06d}.ppm").convert("RGB"), photos[1], [at, minute()],
                        fade=(photos[0], step["fade"]))]
        record(len(steps) >= 3 and len(good) == len(checked),
               f"overlay: {len(good)} of {len(checked)} fade steps sampled ({len(steps)} in all) carry the clock, "
               f"as `render --fade-from --overlay` draws them")

        # A reload that moves the corner and adds a plate: drawn again at once, the sensor's value kept.
        count = len(lines("overlays.jsonl"))
        observer.publish("home/outside", json.dumps({"temperature": 18}).encode())
        until(lambda: len(lines("overlays.jsonl")) > count, 5)
        with open(player.config) as f:
            config = json.load(f)
        config["overlay"].update({"corner": "bottom-left", "look": "plate"})
        config["overlay"]["texts"][0]["staleSeconds"] = 600
        with open(player.config, "w") as f:
            json.dump(config, f)
        count = len(lines("overlays.jsonl"))
        at = minute()
        answer = player.ctl("reload")
        image, waited = new_overlay(count, 5)
        box = ImageChops.difference(image, render(photos[1], at)).getbbox() if image else None
        record(answer == "ok" and image is not None and waited < 1
               and same(image, photos[1], [at, minute()], ["18"]),
               f"overlay: after a reload the corner moves to the bottom left on a plate within "
               f"{waited * 1000:.0f} ms, keeping the sensor's value ({answer}; drawn at {box})")
    finally:
        player.stop()
        observer.close()
        observer_replies.close()


VITRINE = None


def main():
    global VITRINE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=f"{REPO}/.build/release/vitrine")
    args = parser.parse_args()
    VITRINE = os.path.abspath(args.vitrine)
    for tool in ("mosquitto", "mosquitto_passwd", "openssl"):
        if not shutil.which(tool):
            record(False, f"{tool} is not installed (make mqtt-test installs mosquitto and openssl)")
            return 1
    stop_seconds = float(os.environ.get("VITRINE_MQTT_STOP_SECONDS", "25"))
    work = tempfile.mkdtemp(prefix="vitrine-mqtt-")
    brokers = []
    try:
        certificates = f"{work}/certificates"
        os.makedirs(certificates)
        make_certificates(certificates)
        broker = Broker(work, "main", certificates)
        brokers.append(broker)
        broker.start()
        # The overlay's checks wait for minutes to turn and cost little CPU: they run beside the others.
        overlay = threading.Thread(target=overlay_clock_and_texts, args=(VITRINE, work, broker))
        overlay.start()
        # So does the broker of MQTT 3.1.1 only, which spends its time waiting for 5's CONNECT to go unanswered.
        old = threading.Thread(target=broker_of_mqtt_311_only, args=(VITRINE, work))
        old.start()
        commands_act_as_on_the_socket(VITRINE, work, broker)
        retained_and_authority(VITRINE, work, broker)
        retained_during_a_clip(VITRINE, work)
        broker_refusing_mqtt_5(VITRINE, work)
        discovery_follows_the_library(VITRINE, work, broker)
        hostile_payloads(VITRINE, work, broker)
        fleet(VITRINE, work, broker)
        two_screens(VITRINE, work, broker)
        image_topic(VITRINE, work, broker)
        wrong_password_and_credentials(VITRINE, work, broker)
        tls(VITRINE, work, broker, certificates)
        late = Broker(work, "late")
        brokers.append(late)
        broker_down_killed_and_back(VITRINE, work, late)
        overlay.join()
        old.join()
        # The broker's stop runs last and alone, on a broker of its own: lateness measured while other players,
        # brokers and TLS handshakes share the two cores would be theirs, not the stopped broker's (a parallel run
        # once saw a 55 ms slide with nothing of the player's own to blame).
        slow_broker = Broker(work, "slow")
        brokers.append(slow_broker)
        slow_broker.start()
        broker_stopped_while_fast(VITRINE, work, slow_broker, stop_seconds)
    finally:
        for broker in brokers:
            broker.kill()
        shutil.rmtree(work, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
