import CLinux
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The control socket: a Unix stream socket, one command per line, one answer line per command, in order, however
/// the lines arrive (one per write or a hundred in one). Clients never block the player: reads take what is there,
/// answers a slow reader has not taken wait in its own buffer (and no more of its lines are read meanwhile), lines
/// longer than `ControlCommand.maximumLineBytes` are refused and the client dropped, and clients that stay silent are
/// closed after `idleSeconds`. When every slot is taken, the client idle longest makes room for a new one, so idle
/// connections can never lock `vitrine ctl` out.
public final class ControlServer {
    public let path: String
    public let descriptor: Int32
    /// A connected client: what it sent that is not a whole line yet, the answers the socket has not taken yet,
    /// and when it last sent or took something.
    private struct Client {
        var input: [UInt8] = []
        var output: [UInt8] = []
        var lastActive: Double
        /// The client shut its side: nothing more to read, but its answers are still written.
        var readClosed = false
        var watchedEvents = EventLoop.readable
        /// Its registration in the loop; nil while it is watched for nothing.
        var source: EventLoop.Source?
    }

    private var clients: [Int32: Client] = [:]
    private var loop: EventLoop?
    private var answer: (String) -> String = { _ in "" }
    private var sources: [EventLoop.Source] = []
    /// Closes clients that have been idle for `idleSeconds`.
    public let idleTimer: MonotonicTimer
    /// Signalled while a client has whole lines left after its turn (`linesPerWake`): its socket may have nothing
    /// more to read, so epoll alone would never bring the rest.
    public let more: Wakeup
    /// More clients than this at once are not kept: the one idle longest makes room for a new one.
    static let maximumClients = 16
    /// Lines handled per client per wake-up, so one flooding client cannot hold the loop.
    static let linesPerWake = 32
    /// A client that sends nothing and takes nothing for this long is closed.
    public static let idleSeconds = 60.0
    /// Answers waiting for a slow reader; past this no more of its lines are read until it takes them.
    static let outputLimit = 64 << 10

    /// The default path: `$XDG_RUNTIME_DIR/vitrine.sock`, else `/run/vitrine/vitrine.sock`.
    public static func defaultPath() -> String {
        if let runtime = getenv("XDG_RUNTIME_DIR"), !String(cString: runtime).isEmpty {
            return "\(String(cString: runtime))/vitrine.sock"
        }
        return "/run/vitrine/vitrine.sock"
    }

    public init(path: String) throws(RuntimeError) {
        self.path = path
        do {
            idleTimer = try MonotonicTimer()
            more = try Wakeup()
        } catch {
            throw RuntimeError("make the control socket's timers", path: path, errno: error.errno)
        }
        let folder = PathText.directory(of: path)
        do {
            try FileBytes.createDirectories(folder)
        } catch {
            throw RuntimeError("create the socket folder", path: error.path, errno: error.errno)
        }
        descriptor = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .last("create the control socket", path: path) }
        // A socket file left by a player that was killed: remove it unless another player still answers on it.
        // Anything else at that path (a mistyped path naming a user's file) is left alone.
        var status = stat()
        if lstat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFSOCK {
            Self.closeDescriptor(descriptor)
            throw RuntimeError(
                "use it as the control socket: it is not a socket (left as it is)", path: path, errno: EEXIST)
        }
        if FileBytes.exists(path) {
            let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            let live = probe >= 0 && vitrine_unix_connect_or_bind(probe, path, 0) == 0
            if probe >= 0 { Self.closeDescriptor(probe) }
            if live {
                Self.closeDescriptor(descriptor)
                throw RuntimeError("listen: another player is running there", path: path, errno: EADDRINUSE)
            }
            unlink(path)
        }
        guard vitrine_unix_connect_or_bind(descriptor, path, 1) == 0 else {
            let failure = RuntimeError.last("bind the control socket", path: path)
            Self.closeDescriptor(descriptor)
            throw failure
        }
        chmod(path, 0o660)
        guard listen(descriptor, 8) == 0 else {
            let failure = RuntimeError.last("listen on the control socket", path: path)
            Self.closeDescriptor(descriptor)
            unlink(path)
            throw failure
        }
    }

    /// Watches the socket, its timers and, as they come, its clients in `loop`; each line is answered with
    /// `answer`.
    public func attach(to loop: EventLoop, answer: @escaping (String) -> String) throws(RuntimeError) {
        self.loop = loop
        self.answer = answer
        sources = [
            try loop.add(descriptor) { [unowned self] _ in accept(now: MonotonicClock.seconds()) },
            try loop.add(idleTimer.descriptor) { [unowned self] _ in timerFired(now: MonotonicClock.seconds()) },
            try loop.add(more.descriptor) { [unowned self] _ in serveWaiting(now: MonotonicClock.seconds()) },
        ]
    }

    /// Closes every connection and removes the socket file.
    public func close() {
        for client in clients.keys { forget(client) }
        for source in sources { loop?.remove(source) }
        sources = []
        Self.closeDescriptor(descriptor)
        var status = stat()
        if lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
    }

    /// Accepts waiting clients and starts watching them.
    public func accept(now: Double) {
        while true {
            let client = Glibc.accept(descriptor, nil, nil)
            guard client >= 0 else { break }
            // accept4 needs _GNU_SOURCE, which Glibc's module is built without; set the flags afterwards.
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            if clients.count >= Self.maximumClients,
                let idlest = clients.min(by: { $0.value.lastActive < $1.value.lastActive })?.key
            {
                forget(idlest)
            }
            var state = Client(lastActive: now)
            if let loop {
                do {
                    state.source = try loop.add(client) { [unowned self] _ in
                        serve(client, now: MonotonicClock.seconds())
                    }
                } catch {
                    Self.closeDescriptor(client)
                    continue
                }
            }
            clients[client] = state
        }
        armIdleTimer()
    }

    /// Reads a client's lines and answers them with `answer`, at most `linesPerWake` of them; writes what it can
    /// of the answers waiting. A client with whole lines left is served again from `more`; one that is done or
    /// misbehaved is closed and no longer watched.
    public func serve(_ client: Int32, now: Double) {
        guard var state = clients[client] else { return }
        var chunk = [UInt8](repeating: 0, count: 4096)
        // Nothing more is read from a client whose answers pile up: the socket's own buffer then holds it back.
        while !state.readClosed,
            state.input.count <= ControlCommand.maximumLineBytes && state.output.count < Self.outputLimit
        {
            let count = chunk.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            if count > 0 {
                state.input += chunk[0..<count]
                state.lastActive = now
                // A big write is taken in turns: lines are answered between reads, so the buffer stays small.
                if state.input.count > 16 << 10 { break }
            } else {
                state.readClosed = count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
                break
            }
        }
        var handled = 0
        while handled < Self.linesPerWake, state.output.count < Self.outputLimit,
            let newline = state.input.firstIndex(of: 0x0A)
        {
            let line = String(decoding: state.input[..<newline], as: UTF8.self)
            state.input.removeSubrange(...newline)
            handled += 1
            state.output += Array((answer(line) + "\n").utf8)
        }
        if state.input.count > ControlCommand.maximumLineBytes, !state.input.contains(0x0A) {
            state.output += Array("error: line longer than \(ControlCommand.maximumLineBytes) bytes\n".utf8)
            _ = flush(client, &state, now: now)
            forget(client)
            return
        }
        guard flush(client, &state, now: now) else {
            forget(client)
            return
        }
        // A client that hung up mid-line leaves nothing behind; one that shut its side after whole lines still
        // gets every answer (`printf 'status\n' | socat - UNIX:...` reads them after its write side is shut).
        if state.readClosed && state.output.isEmpty && !state.input.contains(0x0A) {
            forget(client)
            return
        }
        clients[client] = state
        watch(client)
        if state.input.contains(0x0A) && state.output.count < Self.outputLimit { more.signal() }
        armIdleTimer()
    }

    /// Serves every client that has whole lines left from an earlier turn.
    public func serveWaiting(now: Double) {
        more.drain()
        for client in clients.keys.sorted() where clients[client]?.input.contains(0x0A) == true {
            serve(client, now: now)
        }
    }

    /// Closes the clients that have been idle too long.
    public func timerFired(now: Double) {
        idleTimer.acknowledge()
        for (client, state) in clients where now - state.lastActive >= Self.idleSeconds { forget(client) }
        armIdleTimer()
    }

    private func armIdleTimer() {
        guard let oldest = clients.values.map(\.lastActive).min() else {
            idleTimer.disarm()
            return
        }
        idleTimer.arm(at: oldest + Self.idleSeconds)
    }

    /// Writes what the socket takes of the answers waiting; false when the client cannot take any more (gone).
    private func flush(_ client: Int32, _ state: inout Client, now: Double) -> Bool {
        while !state.output.isEmpty {
            let written = state.output.withUnsafeBytes {
                Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                state.output.removeFirst(written)
                state.lastActive = now
            } else {
                return written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
            }
        }
        return true
    }

    /// Watches for reading until the client shuts its side (an end of file stays readable, which would wake the
    /// loop for nothing), and for writing only while answers wait.
    private func watch(_ client: Int32) {
        guard var state = clients[client], let loop else { return }
        let events = (state.readClosed ? 0 : EventLoop.readable) | (state.output.isEmpty ? 0 : EventLoop.writable)
        guard events != state.watchedEvents else { return }
        do {
            // Watched for nothing, it leaves the loop: a hang-up is reported whatever the events asked for.
            if events == 0 {
                loop.remove(state.source)
                state.source = nil
            } else if let source = state.source {
                try loop.change(source, events: events)
            } else {
                state.source = try loop.add(client, events: events) { [unowned self] _ in
                    serve(client, now: MonotonicClock.seconds())
                }
            }
        } catch {
            forget(client)
            return
        }
        state.watchedEvents = events
        clients[client] = state
    }

    private func forget(_ client: Int32) {
        loop?.remove(clients[client]?.source)
        clients[client] = nil
        Self.closeDescriptor(client)
    }

    private static func closeDescriptor(_ descriptor: Int32) { _ = Glibc.close(descriptor) }
}
