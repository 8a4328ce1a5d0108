import CMicroHTTPD
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An HTTP server on the player's loop (GNU libmicrohttpd without a thread of its own): its epoll descriptor is
/// watched with the player's others and `run()` does what is ready, so no request is served while a flip or a
/// decode result waits, and a slow or hostile client costs one bounded connection, never the show.
public final class WebServer {
    /// A request whose answer was deferred, for `answer(_:_:)`.
    public struct Pending: Hashable, Sendable {
        let address: UInt
        /// A request built outside the server (tests), which nothing can answer later.
        public static let none = Pending(address: 0)
    }

    public struct Request: Sendable {
        public var method: String
        /// The path, percent-decoded.
        public var path: String
        /// The path and query as sent.
        public var target: String
        /// Names in lowercase.
        public var headers: [String: String]
        public var body: [UInt8]
        /// The Content-Length the client announced, nil without one.
        public var contentLength: UInt64?
        /// A streamed body: its file, now the handler's to close and keep or remove, and its size.
        public var upload: Upload?
        public var pending: Pending

        public init(
            method: String, path: String, target: String, headers: [String: String], body: [UInt8] = [],
            contentLength: UInt64? = nil, upload: Upload? = nil, pending: Pending = .none
        ) {
            self.method = method
            self.path = path
            self.target = target
            self.headers = headers
            self.body = body
            self.contentLength = contentLength
            self.upload = upload
            self.pending = pending
        }
    }

    public struct Upload: Sendable {
        public var descriptor: Int32
        public var path: String
        public var bytes: UInt64
    }

    public struct Response: Sendable {
        public var status: Int
        public var contentType: String
        public var body: [UInt8]
        public var headers: [(String, String)]

        public init(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
            self.status = status
            self.contentType = contentType
            self.body = body
            self.headers = headers
        }

        public static func json(_ status: Int, _ text: String) -> Response {
            Response(status: status, contentType: "application/json", body: Array(text.utf8))
        }

        public static func error(_ status: Int, _ message: String) -> Response {
            .json(status, "{\"error\":\(JSONText.quote(message))}")
        }
    }

    /// What to do with a request's body, decided when its headers are in.
    public enum Start {
        /// Gathered in memory up to `Limits.bodyBytes`.
        case gather
        /// Written as it arrives into an open file (owned by the server until `handle`), at most `limit` bytes;
        /// the file is removed when the request ends unfinished. A body past the limit is answered 413, or 507
        /// when `limitIsSpace` (the limit is the disk's free space).
        case stream(descriptor: Int32, path: String, limit: UInt64, limitIsSpace: Bool)
        /// Answered at once, the body unread.
        case refuse(Response)
        /// Decided later with `begin(_:_:)` (opening the file touches a share that may stall, so it is done off the
        /// loop thread); the connection waits, suspended, its body unread.
        case wait
    }

    public enum Reply {
        case now(Response)
        /// Answered later with `answer(_:_:)` (work off the loop thread); the connection waits, suspended.
        case later
    }

    public struct Limits: Sendable {
        /// Connections at once, from everyone and from one address; seconds a connection may idle; buffer bytes per
        /// connection; body bytes per request (uploads are streamed separately).
        public var connections: UInt32 = 32
        public var perAddress: UInt32 = 8
        public var idleSeconds: UInt32 = 10
        public var memoryPerConnection = 64 << 10
        public var bodyBytes = 64 << 10

        public init() {}
    }

    /// Holds the handlers and the answer's bytes until libmicrohttpd has copied them; its address is handed to C.
    private final class Handler {
        let begin: (Request) -> Start
        let handle: (Request) -> Reply
        var memory: [UnsafeMutableRawPointer] = []
        var pending: Set<Pending> = []

        init(begin: @escaping (Request) -> Start, handle: @escaping (Request) -> Reply) {
            self.begin = begin
            self.handle = handle
        }

        func release() {
            for pointer in memory { free(pointer) }
            memory = []
        }

        /// The response as C sees it, valid until the next `release()`.
        func answer(_ response: Response) -> vitrine_http_answer {
            release()
            let body = malloc(max(1, response.body.count))
            response.body.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress, let body { memcpy(body, base, bytes.count) }
            }
            let contentType = strdup(response.contentType)
            let extra = response.headers.map { "\($0.0): \($0.1)\n" }.joined()
            let headers = extra.isEmpty ? nil : strdup(extra)
            memory = [
                body, contentType.map { UnsafeMutableRawPointer($0) }, headers.map { UnsafeMutableRawPointer($0) },
            ]
            .compactMap { $0 }
            return vitrine_http_answer(
                status: UInt32(response.status), content_type: contentType, body: body, length: response.body.count,
                headers: headers, deferred: 0)
        }

        deinit { release() }
    }

    private let server: UnsafeMutablePointer<vitrine_http_server>
    private let handler: Handler
    public let descriptor: Int32
    /// Readable when the thread that writes streamed bodies has let a waiting upload go on: call `run()`. Watched
    /// with `descriptor`, and no longer once `stop()` is called.
    public let writerDescriptor: Int32
    public let port: UInt16

    /// `certificate` and `key` (PEM text) make it HTTPS.
    public init(
        address: String, port: UInt16, limits: Limits = Limits(), tls: (certificate: String, key: String)? = nil,
        begin: @escaping (Request) -> Start = { _ in .gather }, handle: @escaping (Request) -> Reply
    ) throws(RuntimeError) {
        do {
            try LazyLibrary.microhttpd.load()
        } catch {
            throw error.runtimeError
        }
        handler = Handler(begin: begin, handle: handle)
        server = .allocate(capacity: 1)
        server.initialize(
            to: vitrine_http_server(
                daemon: nil, context: Unmanaged.passUnretained(handler).toOpaque(),
                begin: { context, view, start in
                    guard let context, let view, let start else { return }
                    let handler = Unmanaged<Handler>.fromOpaque(context).takeUnretainedValue()
                    switch handler.begin(WebServer.request(view.pointee)) {
                    case .gather:
                        start.pointee.body = VITRINE_HTTP_GATHER
                    case .stream(let descriptor, let path, let limit, let limitIsSpace):
                        start.pointee.limit_is_space = limitIsSpace ? 1 : 0
                        start.pointee.body = VITRINE_HTTP_STREAM
                        start.pointee.descriptor = descriptor
                        handler.release()
                        let copy = strdup(path)
                        handler.memory = copy.map { [UnsafeMutableRawPointer($0)] } ?? []
                        start.pointee.path = UnsafePointer(copy)
                        start.pointee.limit = limit
                    case .refuse(let response):
                        start.pointee.body = VITRINE_HTTP_REFUSE
                        start.pointee.answer = handler.answer(response)
                    case .wait:
                        start.pointee.body = VITRINE_HTTP_WAIT
                        handler.pending.insert(WebServer.request(view.pointee).pending)
                    }
                },
                handle: { context, view, answer in
                    guard let context, let view, let answer else { return }
                    let handler = Unmanaged<Handler>.fromOpaque(context).takeUnretainedValue()
                    let request = WebServer.request(view.pointee)
                    switch handler.handle(request) {
                    case .now(let response):
                        answer.pointee = handler.answer(response)
                    case .later:
                        handler.pending.insert(request.pending)
                        answer.pointee.deferred = 1
                    }
                },
                body_limit: limits.bodyBytes, writer: nil))
        let server = self.server
        let started: Int32
        if let tls {
            started = vitrine_http_start(
                server, address, port, limits.connections, limits.perAddress, limits.idleSeconds,
                limits.memoryPerConnection, tls.certificate, tls.key)
        } else {
            started = vitrine_http_start(
                server, address, port, limits.connections, limits.perAddress, limits.idleSeconds,
                limits.memoryPerConnection, nil, nil)
        }
        guard started == 0 else {
            let code = errno
            server.deinitialize(count: 1)
            server.deallocate()
            throw RuntimeError("listen for HTTP on \(address):\(port)", errno: code == 0 ? EADDRINUSE : code)
        }
        descriptor = vitrine_http_epoll_descriptor(server)
        writerDescriptor = vitrine_http_writer_descriptor(server)
        self.port = vitrine_http_port(server)
    }

    /// Answers a deferred request; one no longer waiting (already answered, or the server stopped) is ignored.
    public func answer(_ pending: Pending, _ response: Response) {
        guard server.pointee.daemon != nil, handler.pending.remove(pending) != nil,
            let id = UnsafeRawPointer(bitPattern: pending.address)
        else { return }
        var answer = handler.answer(response)
        vitrine_http_resume(id, &answer)
        handler.release()
    }

    /// Hands in the decision for a request that waited at its headers (`.wait`): `.stream` or `.refuse`. False
    /// when it is no longer waiting (the client went, the server stopped): a file given is then the caller's.
    @discardableResult
    public func begin(_ pending: Pending, _ start: Start) -> Bool {
        guard server.pointee.daemon != nil, handler.pending.remove(pending) != nil,
            let id = UnsafeRawPointer(bitPattern: pending.address)
        else { return false }
        var decision = vitrine_http_start()
        var path: UnsafeMutablePointer<CChar>?
        defer { free(path) }
        switch start {
        case .stream(let descriptor, let file, let limit, let limitIsSpace):
            path = strdup(file)
            decision.body = VITRINE_HTTP_STREAM
            decision.descriptor = descriptor
            decision.path = UnsafePointer(path)
            decision.limit = limit
            decision.limit_is_space = limitIsSpace ? 1 : 0
        case .refuse(let response):
            decision.body = VITRINE_HTTP_REFUSE
            decision.answer = handler.answer(response)
        case .gather, .wait:
            decision.body = VITRINE_HTTP_REFUSE
            decision.answer = handler.answer(.error(500, "no decision for the request's body"))
        }
        let taken = vitrine_http_begin_later(server, id, &decision) != 0
        handler.release()
        return taken
    }

    /// Requests still waiting for `answer`.
    public var pendingCount: Int { handler.pending.count }

    /// Closes the listening socket and every connection; deferred requests are answered 503 first (libmicrohttpd
    /// must not stop with a connection suspended).
    public func stop() {
        guard server.pointee.daemon != nil else { return }
        for pending in handler.pending {
            answer(pending, .error(503, "the player is stopping"))
        }
        vitrine_http_stop(server)
    }

    deinit {
        stop()
        server.deinitialize(count: 1)
        server.deallocate()
    }

    /// Serves what is ready: call when `descriptor` is readable and when `secondsUntilDue` has passed.
    public func run() {
        guard server.pointee.daemon != nil else { return }
        vitrine_http_writer_service(server, 0)
        MHD_run(server.pointee.daemon)
    }

    /// When `run()` is due for a connection's timeout even if nothing arrives; nil for never.
    public var secondsUntilDue: Double? {
        guard server.pointee.daemon != nil else { return nil }
        let milliseconds = vitrine_http_timeout(server)
        return milliseconds < 0 ? nil : Double(milliseconds) / 1000
    }

    static func request(_ view: vitrine_http_request_view) -> Request {
        Request(
            method: view.method.map { String(cString: $0) } ?? "GET",
            path: view.path.map { String(cString: $0) } ?? "/",
            target: view.target.map { String(cString: $0) } ?? "/",
            headers: headers(view.headers, count: view.headers_length),
            body: view.body.map { Array(UnsafeRawBufferPointer(start: $0, count: view.body_length)) } ?? [],
            contentLength: view.content_length >= 0 ? UInt64(view.content_length) : nil,
            upload: view.descriptor >= 0
                ? Upload(
                    descriptor: view.descriptor, path: view.file.map { String(cString: $0) } ?? "",
                    bytes: view.streamed) : nil,
            pending: Pending(address: UInt(bitPattern: view.id)))
    }

    static func headers(_ text: UnsafePointer<CChar>?, count: Int) -> [String: String] {
        guard let text, count > 0 else { return [:] }
        let lines = UnsafeRawBufferPointer(start: text, count: count).split(
            separator: 0x0A, omittingEmptySubsequences: false)
        var headers: [String: String] = [:]
        var index = 0
        while index + 1 < lines.count {
            let name = String(decoding: lines[index], as: UTF8.self)
            if !name.isEmpty { headers[name] = String(decoding: lines[index + 1], as: UTF8.self) }
            index += 2
        }
        return headers
    }
}
