import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The sources' syncs while the player plays: each runs as `vitrine sync --once --report --source NAME`, a process
/// of its own at idle priority, one at a time, when its `SourceMachine` says it is due. The loop reads the reports
/// from a pipe and the end from a pidfd; it never touches the network or the cache, and learns of new photos from
/// the library's watcher like any other. A process of its own keeps libcurl, TLS and a transfer's buffers out of
/// the player's memory (a 512 MB board's budget), and a server that hangs cannot hold the show.
final class SourceSyncs {
    private(set) var machines: [SourceMachine]
    private let sources: [SourceSettings]
    private let arguments: (SourceSettings) -> [String]
    private let loop: EventLoop
    private let log: EventLog
    private let timer: MonotonicTimer
    /// Starts the processes: posix_spawn reads the binary and waits for the exec, which the loop must not.
    private let starter: Worker<Result<ChildProcess, RuntimeError>>
    private var registered: LoopSources
    private var running: Running?
    /// Syncs asked to stop that may not have ended yet: reaped when the next is due, handed over at `close`.
    private var stopping: [ChildProcess] = []

    private struct Running {
        var index: Int
        var child: ChildProcess?
        var buffer: [UInt8] = []
        var output: EventLoop.Source?
        var end: EventLoop.Source?
    }

    /// The executable the player runs from: the same binary, even after an upgrade replaced its file on disk.
    static let executable = "/proc/self/exe"
    /// A report line longer than this is not one; the rest of it is dropped.
    static let longestLine = 64 << 10

    /// `rendition`: the panel's rendition canvas and fit, for sources that keep renditions.
    init(
        sources: [SourceSettings], configPath: String, libraryRoot: String, rendition: (canvas: Size, fit: Fit),
        loop: EventLoop, log: EventLog, now: Double
    ) throws(RuntimeError) {
        self.sources = sources
        machines = sources.map { SourceMachine(name: $0.name, interval: $0.interval, now: now) }
        arguments = { source in
            [
                "sync", "--once", "--report", "--source", source.name, "--config", configPath, "--library",
                libraryRoot, "--rendition", rendition.canvas.description, "--fit", rendition.fit.rawValue,
            ]
        }
        self.loop = loop
        self.log = log
        timer = try MonotonicTimer()
        // A process started after `close` (its start was under way) is asked to stop at once; nothing follows it.
        starter = try Worker(.inOrder(limit: 1)) { result in
            if case .success(let child) = result { child.signal(SIGTERM) }
        }
        registered = LoopSources(loop)
        try registered.add(timer.descriptor) { [unowned self] _ in
            timer.acknowledge()
            startDue(now: MonotonicClock.seconds())
        }
        try registered.add(starter.wakeup.descriptor) { [unowned self] _ in
            for result in starter.take() { started(result, now: MonotonicClock.seconds()) }
        }
    }

    func start(now: Double) { startDue(now: now) }

    /// Every source syncs as soon as it can (`ctl sync`).
    func syncSoon(now: Double) {
        for index in machines.indices { machines[index].syncSoon(now: now) }
        startDue(now: now)
    }

    private func startDue(now: Double) {
        stopping.removeAll { $0.reap() != nil }
        if running == nil, let index = machines.indices.first(where: { machines[$0].isDue(now: now) }) {
            machines[index].started(now: now)
            running = Running(index: index)
            let executable = Self.executable
            let words = arguments(sources[index])
            let submitted = starter.submit { _ in
                Result { () throws(RuntimeError) in try ChildProcess.spawn(executable, words) }
            }
            if !submitted {
                // The starter stopped (the player is closing): nothing runs, and the source says why.
                say(machines[index].ended(now: now, how: "the player could not start it"))
                running = nil
            }
        }
        let next = machines.filter { $0.running == nil }.map(\.nextSync).min()
        if running == nil, let next { timer.arm(at: next) } else { timer.disarm() }
    }

    private func started(_ result: Result<ChildProcess, RuntimeError>, now: Double) {
        guard var current = running else { return }
        switch result {
        case .failure(let error):
            say(machines[current.index].ended(now: now, how: "\(error)"))
            running = nil
            startDue(now: now)
        case .success(let child):
            current.child = child
            do {
                current.output = try loop.add(child.output) { [unowned self] _ in
                    readReports(now: MonotonicClock.seconds())
                }
                current.end = try loop.add(child.endWatch) { [unowned self] _ in ended(now: MonotonicClock.seconds()) }
            } catch {
                // Without the loop watching it the sync cannot be followed: it is stopped and tried again later.
                child.signal(SIGTERM)
                stopping.append(child)
                say(machines[current.index].ended(now: now, how: "\(error)"))
                loop.remove(current.output)
                running = nil
                startDue(now: now)
                return
            }
            running = current
        }
    }

    private func readReports(now: Double) {
        guard var current = running, let child = current.child else { return }
        let open = child.read(into: &current.buffer)
        var lines: [String] = []
        while let newline = current.buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: current.buffer[..<newline], as: UTF8.self))
            current.buffer.removeSubrange(...newline)
        }
        if current.buffer.count > Self.longestLine { current.buffer.removeAll() }
        if !open {
            loop.remove(current.output)
            current.output = nil
        }
        running = current
        for line in lines {
            guard let report = SyncReport.parse(line) else { continue }
            say(machines[current.index].report(report, now: now))
        }
    }

    private func ended(now: Double) {
        guard let child = running?.child, let how = child.reap() else { return }
        readReports(now: now)
        guard let current = running else { return }
        loop.remove(current.output)
        loop.remove(current.end)
        running = nil
        say(machines[current.index].ended(now: now, how: how))
        startDue(now: now)
    }

    private func say(_ messages: [SourceMachine.Message]) {
        for message in messages { log(message.isWarning ? .warning : .info, message.text) }
    }

    /// Stops following the syncs and asks the one that runs to stop (it resumes from its part file next time).
    /// Returns it (and any other asked to stop), to be reaped once ended: it is not waited for here, as a process writing to a stalled
    /// disk may take its time and the loop must not.
    func close() -> [ChildProcess] {
        registered.removeAll()
        starter.stop()
        guard let current = running else { return stopping }
        running = nil
        loop.remove(current.output)
        loop.remove(current.end)
        current.child?.signal(SIGTERM)
        return stopping + (current.child.map { [$0] } ?? [])
    }

    /// `[{"name":"family","state":"syncing","done":3,"total":200,...}]` for `status` and the web remote.
    func statusJSON(now: Double) -> String {
        let entries = machines.map { machine in
            var fields = [
                "\"name\":\(JSONText.quote(machine.name))",
                "\"state\":\(JSONText.quote(machine.running == nil ? machine.state.name : "syncing"))",
                "\"summary\":\(JSONText.quote(machine.summary(now: now)))",
                "\"since_seconds\":\(JSONText.number((now - machine.since).rounded()))",
                "\"last_sync_seconds\":\(machine.lastSuccess.map { JSONText.number((now - $0).rounded()) } ?? "null")",
                "\"failures\":\(machine.failures)",
                "\"photos_fetched\":\(machine.photosFetched)",
                "\"bytes_fetched\":\(machine.bytesFetched + (machine.running?.bytes ?? 0))",
            ]
            if let progress = machine.running, !progress.listing {
                fields += ["\"done\":\(progress.done)", "\"total\":\(progress.total)"]
            }
            return "{" + fields.joined(separator: ",") + "}"
        }
        return "[" + entries.joined(separator: ",") + "]"
    }

    /// What the screen says while the library has no photo: where they are to come from, and why not yet.
    func notice(now: Double) -> String? {
        guard !machines.isEmpty else { return nil }
        return machines.map { machine in
            if let running = machine.running {
                return running.listing
                    ? "Looking for photos on \(machine.name)'s server"
                    : "Fetching photos from \(machine.name): \(running.done) of \(running.total)"
            }
            switch machine.state {
            case .starting: return "Looking for photos on \(machine.name)'s server"
            case .inSync: return "\(machine.name) has no photos yet"
            case .failed(let failure):
                switch failure.kind {
                case .offline: return "Waiting for photos: \(machine.name)'s server is offline"
                case .busy: return "Waiting for photos: \(machine.name)'s server is busy"
                case .refused: return "\(machine.name)'s server refused the login"
                case .badAnswer, .local, .settings: return "Photos from \(machine.name) cannot be fetched (see the log)"
                }
            }
        }.joined(separator: " · ")
    }
}
