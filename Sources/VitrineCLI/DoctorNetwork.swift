import CLinux
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What `vitrine doctor` asks of the network and the journal. It runs at a shell, not in the player's loop, so it
/// may wait (each connection at most `timeout` seconds).
enum DoctorNetwork {
    /// Nil when `host:port` takes a TCP connection within `timeout` seconds, else why not, in words.
    static func reach(host: String, port: Int, timeout: Double = 3) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        // URLs write an IPv6 address in brackets; getaddrinfo takes it bare.
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(bare, String(port), &hints, &list)
        guard status == 0, let list else {
            return "the name \(host) is not known here (\(String(cString: gai_strerror(status))))"
        }
        defer { freeaddrinfo(list) }
        var reason = "it has no address"
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            let socket = Descriptor(
                taking: Glibc.socket(
                    current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                    current.pointee.ai_protocol))
            guard socket.number >= 0 else {
                reason = String(cString: strerror(errno))
                continue
            }
            _ = fcntl(socket.number, F_SETFL, fcntl(socket.number, F_GETFL) | O_NONBLOCK)
            if connect(socket.number, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return nil }
            guard errno == EINPROGRESS else {
                reason = String(cString: strerror(errno)).lowercased()
                continue
            }
            var waiting = pollfd(fd: socket.number, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&waiting, 1, Int32(timeout * 1000))
            guard ready > 0 else {
                reason = "no answer within \(Int(timeout)) s"
                continue
            }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket.number, SOL_SOCKET, SO_ERROR, &failure, &length)
            if failure == 0 { return nil }
            reason = String(cString: strerror(failure)).lowercased()
        }
        return reason
    }

    /// The service's error lines in the journal since the last boot, newest last (at most `count`); nil when
    /// there is no journalctl to ask.
    static func journalErrors(count: Int) -> [String]? {
        output(
            of: "journalctl",
            [
                "--quiet", "--no-pager", "--boot", "--unit", "vitrine.service", "--priority", "err", "--lines",
                String(count), "--output", "cat",
            ]
        ).map { $0.split(separator: "\n").map(String.init) }
    }

    /// What a program in /usr/bin or /bin prints, trimmed; nil when it is not there. At most 10 s: an answer
    /// that slow is not waited for.
    static func output(of program: String, _ arguments: [String]) -> String? {
        let places: [String] = ["/usr/bin/\(program)", "/bin/\(program)"]
        guard let path = places.first(where: { access($0, X_OK) == 0 }),
            let child = try? ChildProcess.spawn(path, arguments)
        else { return nil }
        var output: [UInt8] = []
        let deadline = MonotonicClock.seconds() + 10
        while child.read(into: &output), MonotonicClock.seconds() < deadline {
            var waiting = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            _ = poll(&waiting, 1, 200)
        }
        child.signal(SIGKILL)
        _ = child.reap()
        var text = String(decoding: output, as: UTF8.self)
        while text.last?.isWhitespace == true { text.removeLast() }
        return text
    }
}
