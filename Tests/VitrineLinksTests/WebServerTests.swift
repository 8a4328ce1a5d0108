import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineLinks

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Real HTTP over loopback against libmicrohttpd driven as the player drives it: its epoll descriptor polled and
/// `run()` called on this thread, the client on another.
struct WebServerTests {
    /// Sends `request` to the server and returns the raw answer; `server` is served here meanwhile.
    static func exchange(
        _ server: WebServer, _ request: [UInt8], timeout: Double = 5, step: () -> Void = {}
    ) -> String {
        let answer = Locked<[UInt8]?>(nil)
        let port = server.port
        let client = JoinableThread {
            let received = Loopback.roundTrip(port: port, request)
            answer.withLock { $0 = received }
        }
        let deadline = MonotonicClock.seconds() + timeout
        while answer.withLock({ $0 }) == nil && MonotonicClock.seconds() < deadline {
            var ready = pollfd(fd: server.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&ready, 1, 20)
            server.run()
            step()
            server.run()
        }
        client.join()
        return String(decoding: answer.withLock { $0 } ?? [], as: UTF8.self)
    }

    @Test func aRequestIsHandedOverWholeAndAnswered() throws {
        let seen = Locked<WebServer.Request?>(nil)
        let server = try WebServer(address: "127.0.0.1", port: 0) { request in
            seen.withLock { $0 = request }
            return .now(
                WebServer.Response(
                    status: 200, contentType: "application/json", body: Array("{\"ok\":true}".utf8),
                    headers: [("Set-Cookie", "vitrine_token=t; HttpOnly; SameSite=Strict")]))
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
        #expect(request.path == "/api/command")
        #expect(request.target == "/api/command?x=1")
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
            return .now(.json(200, "{}"))
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
        let first = try WebServer(address: "127.0.0.1", port: 0) { _ in .now(.json(200, "{}")) }
        defer { first.stop() }
        #expect(throws: RuntimeError.self) {
            _ = try WebServer(address: "127.0.0.1", port: first.port) { _ in .now(.json(200, "{}")) }
        }
    }

    /// An upload whose file is opened off the loop (the library may be a share that stalls): the connection
    /// waits at its headers, unread, until the decision comes; then the body streams, or the refusal is answered
    /// without reading it.
    @Test(arguments: [false, true])
    func aRequestWaitsAtItsHeadersForItsDecision(refused: Bool) throws {
        let temporary = try TemporaryFolder()
        let folder = temporary.path
        let path = folder + "/.upload"
        let waiting = Locked<WebServer.Pending?>(nil)
        let received = Locked<[UInt8]?>(nil)
        let server = try WebServer(
            address: "127.0.0.1", port: 0,
            begin: { request in
                waiting.withLock { $0 = request.pending }
                return .wait
            },
            handle: { request in
                guard let upload = request.upload else { return .now(.error(400, "no upload")) }
                close(upload.descriptor)
                received.withLock { $0 = (try? FileBytes.read(upload.path)) ?? [] }
                unlink(upload.path)
                return .now(.json(201, "{}"))
            })
        defer { server.stop() }
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let head = Array(
            "POST /api/photos HTTP/1.1\r\nHost: frame.lan\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                .utf8)
        var turns = 0
        let answer = Self.exchange(server, head + body) {
            turns += 1
            // A few turns of the loop first: nothing may happen while the decision is out.
            guard turns == 5, let pending = waiting.withLock({ $0 }) else { return }
            #expect(received.withLock { $0 } == nil)
            if refused {
                #expect(server.begin(pending, .refuse(.error(507, "no room"))))
            } else {
                let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
                #expect(
                    server.begin(
                        pending, .stream(descriptor: descriptor, path: path, limit: 1 << 20, limitIsSpace: false)))
            }
        }
        if refused {
            #expect(answer.hasPrefix("HTTP/1.1 507"), "\(answer.prefix(80))")
            #expect(received.withLock { $0 } == nil)
        } else {
            #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(80))")
            #expect(received.withLock { $0 } == body)
        }
        #expect(!FileBytes.exists(path))
    }

    @Test func aStreamedBodyGoesToTheFileAndTheHandlerGetsIt() throws {
        let temporary = try TemporaryFolder()
        let folder = temporary.path
        let path = folder + "/.upload"
        let received = Locked<(bytes: UInt64, content: [UInt8])?>(nil)
        let server = try WebServer(
            address: "127.0.0.1", port: 0,
            begin: { _ in
                .stream(
                    descriptor: open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600), path: path, limit: 1 << 20,
                    limitIsSpace: false)
            },
            handle: { request in
                guard let upload = request.upload else { return .now(.error(400, "no upload")) }
                close(upload.descriptor)
                let content = (try? FileBytes.read(upload.path)) ?? []
                unlink(upload.path)
                received.withLock { $0 = (upload.bytes, content) }
                return .now(.json(201, "{}"))
            })
        defer { server.stop() }
        // More than the 64 KiB gathered in memory: the stream is what takes it.
        let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let head = Array(
            "POST /api/photos HTTP/1.1\r\nHost: frame.lan\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                .utf8)
        let answer = Self.exchange(server, head + body)
        #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(80))")
        let got = try #require(received.withLock { $0 })
        #expect(got.bytes == UInt64(body.count))
        #expect(got.content == body)
    }

    /// Past the upload limit is 413; past the disk's room (the limit is the free space) is 507, as for a sized
    /// upload, whether the body is sized or chunked.
    @Test(arguments: [(false, "413"), (true, "507")])
    func aStreamOverItsLimitIsRefusedAndItsFileRemoved(limitIsSpace: Bool, status: String) throws {
        let temporary = try TemporaryFolder()
        let folder = temporary.path
        let path = folder + "/.upload"
        let handled = Locked(0)
        let server = try WebServer(
            address: "127.0.0.1", port: 0,
            begin: { _ in
                .stream(
                    descriptor: open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600), path: path, limit: 1000,
                    limitIsSpace: limitIsSpace)
            },
            handle: { _ in
                handled.withLock { $0 += 1 }
                return .now(.json(201, "{}"))
            })
        defer { server.stop() }
        let body = [UInt8](repeating: 7, count: 50_000)
        let head = Array(
            "POST /api/photos HTTP/1.1\r\nHost: frame.lan\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                .utf8)
        let answer = Self.exchange(server, head + body)
        #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(answer.prefix(80))")
        #expect(handled.withLock { $0 } == 0)
        #expect(!FileBytes.exists(path))
    }

    @Test func aRefusalAtTheHeadersIsAnsweredWithoutTheBody() throws {
        let server = try WebServer(
            address: "127.0.0.1", port: 0, begin: { _ in .refuse(.error(401, "no token")) },
            handle: { _ in .now(.json(200, "{}")) })
        defer { server.stop() }
        let answer = Self.exchange(
            server,
            Array(
                "POST /x HTTP/1.1\r\nHost: frame.lan\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789".utf8)
        )
        #expect(answer.hasPrefix("HTTP/1.1 401"), "\(answer.prefix(80))")
        #expect(answer.hasSuffix("{\"error\":\"no token\"}"))
    }

    @Test func aDeferredAnswerComesWhenItIsGiven() throws {
        let waiting = Locked<WebServer.Pending?>(nil)
        let server = try WebServer(address: "127.0.0.1", port: 0) { request in
            waiting.withLock { $0 = request.pending }
            return .later
        }
        defer { server.stop() }
        let answer = Locked<String?>(nil)
        let port = server.port
        let client = JoinableThread {
            let text = Self.get(port: port, "GET /later HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            answer.withLock { $0 = text }
        }
        var answeredAt: Double?
        let deadline = MonotonicClock.seconds() + 5
        while answer.withLock({ $0 }) == nil && MonotonicClock.seconds() < deadline {
            var ready = pollfd(fd: server.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&ready, 1, 20)
            server.run()
            if answeredAt == nil, let pending = waiting.withLock({ $0 }) {
                #expect(server.pendingCount == 1)
                answeredAt = MonotonicClock.seconds()
                server.answer(pending, .json(200, "{\"late\":true}"))
                // A second answer to the same request is ignored.
                server.answer(pending, .json(500, "{}"))
            }
        }
        client.join()
        let text = try #require(answer.withLock { $0 })
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text.prefix(80))")
        #expect(text.hasSuffix("{\"late\":true}"))
        #expect(server.pendingCount == 0)
    }

    /// One request on a fresh connection, read to its end.
    static func get(port: UInt16, _ request: String) -> String {
        String(decoding: Loopback.roundTrip(port: port, Array(request.utf8)), as: UTF8.self)
    }
}
