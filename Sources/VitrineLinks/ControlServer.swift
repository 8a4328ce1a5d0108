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
    /// The listening socket; nil once closed.
    private var listening: Descriptor?
    /// A connected client: its socket, what it sent that is not a whole line yet, the answers the socket has not
    /// taken yet, and when it last sent or took something. Its socket is closed when it is forgotten.
    private final class Client {
        let socket: Descriptor
        var input: [UInt8] = []
        var output: [UInt8] = []
        var lastActive: Double
        /// The client shut its side: nothing more to read, but its answers are still written.
        var readClosed = false
        var watchedEvents = EventLoop.readable
        /// Its registration in the loop; nil while it is watched for nothing.
        var source: EventLoop.Source?

        init(socket: consuming Descriptor, lastActive: Double) {
            self.socket = socket
            self.lastActive = lastActive
        }
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
        let socket = try SystemCall.open("create the control socket", path: path) {
            Glibc.socket(
                AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        }
        // A socket file left by a player that was killed: remove it unless another player still answers on it.
        // Anything else at that path (a mistyped path naming a user's file) is left alone.
        var status = stat()
        if lstat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFSOCK {
            throw RuntimeError(
                "use it as the control socket: it is not a socket (left as it is)", path: path, errno: EEXIST)
        }
        if FileBytes.exists(path) {
            let probe = Descriptor(taking: Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0))
            if probe.number >= 0 && vitrine_unix_connect_or_bind(probe.number, path, 0) == 0 {
                throw RuntimeError("listen: another player is running there", path: path, errno: EADDRINUSE)
            }
            // Gone already (another player starting at the same moment removed it) is what was wanted.
            unlink(path)
        }
        // Bound under a name beside it and renamed once listening: a client that waits for the path to appear
        // (a script, a test) could otherwise connect between bind and listen and be refused. A name something other
        // than a socket has (a user's file) is passed over for the next; a path too long for the extra characters
        // is bound where it is.
        var staging = path
        for suffix in ["~", "~1", "~2", "~3"] where path.utf8.count + suffix.utf8.count < 108 {
            let candidate = path + suffix
            if lstat(candidate, &status) != 0 {
                staging = candidate
                break
            }
            if status.st_mode & S_IFMT == S_IFSOCK {
                unlink(candidate)
                staging = candidate
                break
            }
        }
        try SystemCall.run("bind the control socket", path: path) {
            vitrine_unix_connect_or_bind(socket.number, staging, 1)
        }
        do {
            // The socket's group (the service's) may send commands; nobody else.
            try SystemCall.run("set the control socket's permissions", path: path) { chmod(staging, 0o660) }
            try SystemCall.run("listen on the control socket", path: path) { listen(socket.number, 8) }
            if staging != path {
                try SystemCall.run("put the control socket in place", path: path) { rename(staging, path) }
            }
        } catch {
            unlink(staging)
            throw error
        }
        listening = .some(socket)
    }

    /// Watches the socket, its timers and, as they come, its clients in `loop`; each line is answered with
    /// `answer`.
    public func attach(to loop: EventLoop, answer: @escaping (String) -> String) throws(RuntimeError) {
        self.loop = loop
        self.answer = answer
        guard let descriptor = listening?.number else { return }
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
        guard listening != nil else { return }
        listening = nil
        var status = stat()
        if lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
    }

    /// Accepts waiting clients and starts watching them.
    public func accept(now: Double) {
        guard let descriptor = listening?.number else { return }
        while true {
            let socket = Descriptor(taking: Glibc.accept(descriptor, nil, nil))
            guard socket.number >= 0 else { break }
            let client = socket.number
            // accept4 needs _GNU_SOURCE, which Glibc's module is built without; set the flags afterwards. They
            // cannot fail on a descriptor just accepted (EBADF is the only error F_GETFL/F_SETFL/F_SETFD give).
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            if clients.count >= Self.maximumClients,
                let idlest = clients.min(by: { $0.value.lastActive < $1.value.lastActive })?.key
            {
                forget(idlest)
            }
            let state = Client(socket: socket, lastActive: now)
            if let loop {
                // A client that cannot be watched is closed with `state`.
                guard
                    let source = try? loop.add(
                        client,
                        { [unowned self] _ in
                            serve(client, now: MonotonicClock.seconds())
                        })
                else { continue }
                state.source = source
            }
            clients[client] = state
        }
        armIdleTimer()
    }

    /// Reads a client's lines and answers them with `answer`, at most `linesPerWake` of them; writes what it can
    /// of the answers waiting. A client with whole lines left is served again from `more`; one that is done or
    /// misbehaved is closed and no longer watched.
    public func serve(_ client: Int32, now: Double) {
        guard let state = clients[client] else { return }
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
            _ = flush(state, now: now)
            forget(client)
            return
        }
        guard flush(state, now: now) else {
            forget(client)
            return
        }
        // A client that hung up mid-line leaves nothing behind; one that shut its side after whole lines still
        // gets every answer (`printf 'status\n' | socat - UNIX:...` reads them after its write side is shut).
        if state.readClosed && state.output.isEmpty && !state.input.contains(0x0A) {
            forget(client)
            return
        }
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
    private func flush(_ state: Client, now: Double) -> Bool {
        while !state.output.isEmpty {
            let written = state.output.withUnsafeBytes {
                Glibc.send(state.socket.number, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
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
        guard let state = clients[client], let loop else { return }
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
    }

    /// Stops watching the client and lets its socket go (closed once nothing holds the client any more).
    private func forget(_ client: Int32) {
        loop?.remove(clients[client]?.source)
        clients[client] = nil
    }
}
