import CLinux
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The control socket: a Unix stream socket, one command per line, one answer line per command. Clients never
/// block the player: reads take what is there, answers that cannot be written at once drop the client, lines
/// longer than `ControlCommand.maximumLineBytes` are refused and the client dropped.
public final class ControlServer {
    public let path: String
    public let descriptor: Int32
    private var clients: [Int32: [UInt8]] = [:]
    /// More clients than this at once are turned away; a kiosk has one or two.
    static let maximumClients = 16
    /// Lines handled per client per wake-up, so one flooding client cannot hold the loop.
    static let linesPerWake = 32

    /// The default path: `$XDG_RUNTIME_DIR/vitrine.sock`, else `/run/vitrine/vitrine.sock`.
    public static func defaultPath() -> String {
        if let runtime = getenv("XDG_RUNTIME_DIR"), !String(cString: runtime).isEmpty {
            return "\(String(cString: runtime))/vitrine.sock"
        }
        return "/run/vitrine/vitrine.sock"
    }

    public init(path: String) throws(RuntimeError) {
        self.path = path
        let folder = FileBytes.directory(of: path)
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

    /// Closes every connection and removes the socket file.
    public func close() {
        for client in clients.keys { Self.closeDescriptor(client) }
        clients = [:]
        Self.closeDescriptor(descriptor)
        var status = stat()
        if lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
    }

    /// Accepts waiting clients; returns their descriptors for the event loop to watch.
    public func accept() -> [Int32] {
        var accepted: [Int32] = []
        while true {
            let client = Glibc.accept(descriptor, nil, nil)
            guard client >= 0 else { break }
            // accept4 needs _GNU_SOURCE, which Glibc's module is built without; set the flags afterwards.
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            if clients.count >= Self.maximumClients {
                send("error: too many clients\n", to: client)
                Self.closeDescriptor(client)
                continue
            }
            clients[client] = []
            accepted.append(client)
        }
        return accepted
    }

    public func owns(_ client: Int32) -> Bool { clients[client] != nil }

    /// Reads a client's complete lines and answers each with `answer`. Returns false when the client is gone
    /// (hung up, misbehaved or could not take its answer); the caller stops watching it.
    public func serve(_ client: Int32, answer: (String) -> String) -> Bool {
        guard var buffer = clients[client] else { return false }
        var chunk = [UInt8](repeating: 0, count: 4096)
        var hungUp = false
        while buffer.count <= ControlCommand.maximumLineBytes {
            let count = chunk.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer += chunk[0..<count]
            } else {
                hungUp = count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
                break
            }
        }
        var handled = 0
        while let newline = buffer.firstIndex(of: 0x0A), handled < Self.linesPerWake {
            let line = String(decoding: buffer[..<newline], as: UTF8.self)
            buffer.removeSubrange(...newline)
            handled += 1
            guard send(answer(line) + "\n", to: client) else { return drop(client) }
        }
        if buffer.count > ControlCommand.maximumLineBytes {
            send("error: line longer than \(ControlCommand.maximumLineBytes) bytes\n", to: client)
            return drop(client)
        }
        // A client that disconnects mid-line leaves nothing behind.
        if hungUp { return drop(client) }
        clients[client] = buffer
        return true
    }

    private func drop(_ client: Int32) -> Bool {
        clients[client] = nil
        Self.closeDescriptor(client)
        return false
    }

    private static func closeDescriptor(_ descriptor: Int32) { _ = Glibc.close(descriptor) }

    @discardableResult
    private func send(_ text: String, to client: Int32) -> Bool {
        var bytes = Array(text.utf8)
        let written = Glibc.send(client, &bytes, bytes.count, Int32(MSG_NOSIGNAL))
        return written == bytes.count
    }
}
