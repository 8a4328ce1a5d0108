import CLinux
import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `vitrine play` as systemd runs it (deploy/vitrine.service): readiness and watchdog pings on `$NOTIFY_SOCKET`,
/// syslog priorities on a journal stream, warnings said once, and a metrics file for node_exporter.
@Suite(.serialized) struct ServiceEndToEndTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
        for (name, color) in [("a.jpg", JPEGFixture.red), ("b.jpg", JPEGFixture.blue)] {
            let size = Size(width: 160, height: 96)
            try folder.write(
                "library/\(name)", try JPEGFixture.encode(rgb: JPEGFixture.solid(color, size: size), size: size))
        }
        try folder.write("library/broken.jpg", Array("not a jpeg at all".utf8))
        // Stray bytes before a marker: libjpeg warns and decodes it whole, so it is shown (and the warning said once).
        let size = Size(width: 160, height: 96)
        let green = try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.green, size: size), size: size)
        if let dqt = JPEGFixture.offset(ofMarker: 0xDB, in: green) {
            try folder.write("library/c-junk.jpg", Array(green[..<dqt]) + [1, 2, 3] + Array(green[dqt...]))
        }
        try folder.write(
            "vitrine.json",
            text: """
                {"library": "library", "deviceTable": "\(repositoryRoot)/Config/devices.json", "interval": 0.1,
                 "transition": "none", "display": {"backend": "headless", "headlessSize": "160x96"},
                 "controlSocket": "control.sock", "metricsFile": "metrics/vitrine.prom", "metricsInterval": 1}
                """)
        mkdir("\(folder.path)/metrics", 0o755)
    }

    /// A datagram socket bound where the player will send its notifications.
    final class NotifyListener {
        let descriptor: Int32
        let path: String

        init(path: String) throws {
            self.path = path
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0, vitrine_unix_connect_or_bind(descriptor, path, 1) == 0 else {
                throw FileError(path: path, operation: "bind a datagram socket", errno: errno)
            }
        }

        deinit { close(descriptor) }

        /// Messages that arrive within `seconds`, each with its arrival time (CLOCK_MONOTONIC).
        func receive(for seconds: Double, until stop: (String) -> Bool = { _ in false }) -> [(Double, String)] {
            var messages: [(Double, String)] = []
            let end = MonotonicClock.seconds() + seconds
            var buffer = [UInt8](repeating: 0, count: 4096)
            while MonotonicClock.seconds() < end {
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 50) > 0 else { continue }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { continue }
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                messages.append((MonotonicClock.seconds(), text))
                if stop(text) { break }
            }
            return messages
        }
    }

    /// Starts the player with standard error on `log` and the environment systemd would give it.
    func spawn(log: String, environment extra: [String]) throws -> pid_t {
        let binary = vitrineBinary
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_APPEND, 0o644)
        let arguments = [binary, "play", "--config", "\(folder.path)/vitrine.json"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var inherited: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if !["NOTIFY_SOCKET=", "WATCHDOG_", "JOURNAL_STREAM="].contains(where: { text.hasPrefix($0) }) {
                inherited.append(text)
            }
            index += 1
        }
        var envp: [UnsafeMutablePointer<CChar>?] = (inherited + extra).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, binary, &actions, nil, &argv, &envp)
        guard status == 0 else { throw FileError(path: binary, operation: "spawn", errno: status) }
        return pid
    }

    static func metric(_ name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func tellsSystemdItIsReadyAndAliveLogsForTheJournalAndWritesMetrics() throws {
        let listener = try NotifyListener(path: "\(folder.path)/notify.sock")
        let log = "\(folder.path)/journal.log"
        try folder.write("journal.log", [])
        var status = stat()
        #expect(stat(log, &status) == 0)
        // The player sees its standard error is this very file, as it would see journald's stream.
        let pid = try spawn(
            log: log,
            environment: [
                "NOTIFY_SOCKET=\(listener.path)", "WATCHDOG_USEC=400000",
                "JOURNAL_STREAM=\(status.st_dev):\(status.st_ino)",
            ])
        let started = MonotonicClock.seconds()
        let messages = listener.receive(for: 3.0)
        kill(pid, SIGTERM)
        let last = listener.receive(for: 5.0) { $0.contains("STOPPING=1") }
        var exit: Int32 = 0
        waitpid(pid, &exit, 0)
        #expect(exit == 0)

        // READY once, after the first picture, with a status line; then a watchdog ping every 0.2 s.
        let ready = messages.filter { $0.1.contains("READY=1") }
        #expect(ready.count == 1)
        #expect(ready.first?.1.contains("STATUS=playing \(folder.path)/library") == true)
        let pings = messages.filter { $0.1 == "WATCHDOG=1" }.map(\.0)
        #expect(pings.count >= 8, "\(pings.count) pings in 3 s")
        let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 < 0.4 }, "a gap reached the watchdog timeout: \(gaps)")
        #expect(pings.first.map { $0 - started < 2.0 } == true)
        #expect(last.contains { $0.1.contains("STOPPING=1") })

        // One line per event, each with its syslog priority; the broken photo's warning is said once although the
        // show went round many times.
        let lines = try FileBytes.readText(log).split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let prefix = Array(line.utf8.prefix(3))
            #expect(
                prefix.count == 3 && prefix[0] == 0x3C && (0x33...0x36).contains(prefix[1]) && prefix[2] == 0x3E,
                "\(line)")
        }
        let skipped = lines.filter { $0.contains("skipped \(folder.path)/library/broken.jpg") }
        #expect(skipped.count == 1)
        #expect(skipped.first?.hasPrefix("<4>") == true)
        #expect(lines.contains { $0.hasPrefix("<5>stopping (signal 15)") })
        let warned = lines.filter { $0.contains("\(folder.path)/library/c-junk.jpg: shown despite libjpeg's warning") }
        #expect(warned.count == 1 && warned.first?.hasPrefix("<4>") == true, "\(warned)")
        #expect(!lines.contains { $0.contains("skipped \(folder.path)/library/c-junk.jpg") })

        // The metrics file: written whole (no temporary left), the last time at exit.
        let metrics = try FileBytes.readText("\(folder.path)/metrics/vitrine.prom")
        #expect(!FileBytes.exists("\(folder.path)/metrics/.vitrine.prom.tmp"))
        let shown = Self.metric("vitrine_slides_shown_total", in: metrics) ?? 0
        #expect(shown >= 10, "slides shown \(shown)")
        #expect((Self.metric("vitrine_files_skipped_total", in: metrics) ?? 0) >= 1)
        let decodes = Self.metric("vitrine_decode_seconds_count", in: metrics) ?? 0
        #expect(decodes >= shown - 2)
        #expect(Self.metric("vitrine_decode_seconds_bucket{le=\"+Inf\"}", in: metrics) == decodes)
        let resident = Self.metric("vitrine_resident_memory_bytes", in: metrics) ?? 0
        #expect(resident > 1_000_000)
        // The frames at least are anonymous; the binary's and libraries' pages are not.
        let anonymous = Self.metric("vitrine_anonymous_memory_bytes", in: metrics) ?? 0
        #expect(anonymous > 1_000_000 && anonymous < resident, "anonymous \(anonymous) of \(resident)")
        #expect((Self.metric("vitrine_memory_budget_bytes", in: metrics) ?? 0) >= 8_388_608)
        #expect(Self.metric("vitrine_paused", in: metrics) == 0)
        #expect(Self.metric("vitrine_screen_on", in: metrics) == 1)
        #expect(Self.metric("vitrine_pause_reason{reason=\"user\"}", in: metrics) == 0)
    }

    @Test(.enabled(if: vitrineBinaryRuns, "the vitrine executable is not built (swift build builds it)"))
    func withoutAServiceManagerNothingIsSentAndLinesNameTheProgram() throws {
        let log = "\(folder.path)/plain.log"
        try folder.write("plain.log", [])
        // A JOURNAL_STREAM inherited from a login session names another stream: lines stay plain.
        let pid = try spawn(log: log, environment: ["JOURNAL_STREAM=1:1"])
        usleep(1_500_000)
        kill(pid, SIGTERM)
        var exit: Int32 = 0
        waitpid(pid, &exit, 0)
        #expect(exit == 0)
        let lines = try FileBytes.readText(log).split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines { #expect(line.hasPrefix("vitrine: "), "\(line)") }
    }
}
