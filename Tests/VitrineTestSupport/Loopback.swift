#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Talking to a server the test runs on 127.0.0.1, and waiting for a condition with a deadline.
public enum Loopback {
    /// Sends `request` over a new loopback connection and reads the answer until the server closes it (or nothing
    /// comes for `timeoutSeconds`); empty when nothing listens.
    public static func roundTrip(port: UInt16, _ request: [UInt8], timeoutSeconds: Int? = nil) -> [UInt8] {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        if let timeoutSeconds {
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return [] }
        _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        return received
    }

    /// A loopback port nothing listens on now (the system's choice for port 0).
    public static func freePort() -> UInt16 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(socket, $0, length)
                return getsockname(socket, $0, &length)
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Whether `condition` holds within `seconds`, asked every 20 ms.
    public static func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
        for _ in 0..<Int(seconds * 50) {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}
