import Testing
import VitrineCore

@testable import VitrineRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Real HTTP over loopback against libmicrohttpd driven as the player drives it: its epoll descriptor polled and
/// `run()` called on this thread, the client on another.
struct WebServerTests {
    /// Sends `request` to the server and returns the raw answer; `server` is served here meanwhile.
    static func exchange(_ server: WebServer, _ request: [UInt8], timeout: Double = 5) -> String {
        let answer = Locked<[UInt8]?>(nil)
        let port = server.port
        let client = JoinableThread {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            var received: [UInt8] = []
            if connected == 0 {
                _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { break }
                    received += chunk[0..<count]
                }
            }
            close(socket)
            answer.withLock { $0 = received }
        }
        let deadline = MonotonicClock.seconds() + timeout
        while answer.withLock({ $0 }) == nil && MonotonicClock.seconds() < deadline {
            var ready = pollfd(fd: server.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&ready, 1, 20)
            server.run()
        }
        client.join()
        return String(decoding: answer.withLock { $0 } ?? [], as: UTF8.self)
    }

    @Test func aRequestIsHandedOverWholeAndAnswered() throws {
        let seen = Locked<WebServer.Request?>(nil)
        let server = try WebServer(address: "127.0.0.1", port: 0) { request in
            seen.withLock { $0 = request }
            return WebServer.Response(
                status: 200, contentType: "application/json", body: Array("{\"ok\":true}".utf8),
                headers: [("Set-Cookie", "vitrine_token=t; HttpOnly; SameSite=Strict")])
        }
        defer { server.stop() }
        #expect(server.port > 0)
        let body = "next"
        let answer = Self.exchange(
            server,
            Array(
                ("POST /api/command?x=1 HTTP/1.1\r\nHost: frame.lan\r\nAuthorization: Bearer abc\r\n"
                    + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)").utf8))
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        #expect(answer.contains("Set-Cookie: vitrine_token=t; HttpOnly; SameSite=Strict"))
        #expect(answer.contains("Cache-Control: no-store"))
        #expect(answer.hasSuffix("{\"ok\":true}"))
        let request = try #require(seen.withLock { $0 })
        #expect(request.method == "POST")
        #expect(request.target == "/api/command")
        #expect(request.headers["authorization"] == "Bearer abc")
        #expect(request.headers["host"] == "frame.lan")
        #expect(request.body == Array(body.utf8))
    }

    @Test func aBodyOverTheLimitIsRefusedUnread() throws {
        var limits = WebServer.Limits()
        limits.bodyBytes = 1024
        let handled = Locked(0)
        let server = try WebServer(address: "127.0.0.1", port: 0, limits: limits) { _ in
            handled.withLock { $0 += 1 }
            return .json(200, "{}")
        }
        defer { server.stop() }
        let body = String(repeating: "x", count: 5000)
        let answer = Self.exchange(
            server,
            Array(
                ("POST /api/command HTTP/1.1\r\nHost: frame.lan\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n"
                    + body).utf8))
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(80))")
        #expect(handled.withLock { $0 } == 0)
    }

    @Test func aPortInUseIsOneClearError() throws {
        let first = try WebServer(address: "127.0.0.1", port: 0) { _ in .json(200, "{}") }
        defer { first.stop() }
        #expect(throws: RuntimeError.self) {
            _ = try WebServer(address: "127.0.0.1", port: first.port) { _ in .json(200, "{}") }
        }
    }
}
