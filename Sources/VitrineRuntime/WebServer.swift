import CMicroHTTPD
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An HTTP server on the player's loop (GNU libmicrohttpd without a thread of its own): its epoll descriptor is
/// watched with the player's others and `run()` does what is ready, so no request is served while a flip or a
/// decode result waits, and a slow or hostile client costs one bounded connection, never the show.
public final class WebServer {
    public struct Request: Sendable {
        public var method: String
        public var target: String
        /// Names in lowercase.
        public var headers: [String: String]
        public var body: [UInt8]
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

    /// Holds the handler and the answer's bytes until libmicrohttpd has copied them; its address is handed to C.
    private final class Handler {
        let handle: (Request) -> Response
        var body: UnsafeMutableRawPointer?
        var contentType: UnsafeMutablePointer<CChar>?
        var headers: UnsafeMutablePointer<CChar>?

        init(_ handle: @escaping (Request) -> Response) { self.handle = handle }

        func release() {
            free(body)
            free(contentType)
            free(headers)
            body = nil
            contentType = nil
            headers = nil
        }

        deinit { release() }
    }

    private let server: UnsafeMutablePointer<vitrine_http_server>
    private let handler: Handler
    public let descriptor: Int32
    public let port: UInt16

    public init(
        address: String, port: UInt16, limits: Limits = Limits(), handle: @escaping (Request) -> Response
    ) throws(RuntimeError) {
        handler = Handler(handle)
        server = .allocate(capacity: 1)
        server.initialize(
            to: vitrine_http_server(
                daemon: nil, context: Unmanaged.passUnretained(handler).toOpaque(),
                handle: { context, method, url, headers, headersLength, body, bodyLength, answer in
                    guard let context, let answer else { return }
                    let handler = Unmanaged<Handler>.fromOpaque(context).takeUnretainedValue()
                    let request = Request(
                        method: method.map { String(cString: $0) } ?? "GET",
                        target: url.map { String(cString: $0) } ?? "/",
                        headers: WebServer.headers(headers, count: headersLength),
                        body: body.map { Array(UnsafeRawBufferPointer(start: $0, count: bodyLength)) } ?? [])
                    let response = handler.handle(request)
                    handler.release()
                    handler.body = malloc(max(1, response.body.count))
                    response.body.withUnsafeBytes { bytes in
                        if let base = bytes.baseAddress, let target = handler.body {
                            memcpy(target, base, bytes.count)
                        }
                    }
                    handler.contentType = strdup(response.contentType)
                    let extra = response.headers.map { "\($0.0): \($0.1)\n" }.joined()
                    handler.headers = extra.isEmpty ? nil : strdup(extra)
                    answer.pointee = vitrine_http_answer(
                        status: UInt32(response.status), content_type: handler.contentType,
                        body: handler.body, length: response.body.count, headers: handler.headers)
                },
                body_limit: limits.bodyBytes))
        guard
            vitrine_http_start(
                server, address, port, limits.connections, limits.perAddress, limits.idleSeconds,
                limits.memoryPerConnection) == 0
        else {
            let code = errno
            server.deinitialize(count: 1)
            server.deallocate()
            throw RuntimeError("listen for HTTP on \(address):\(port)", errno: code == 0 ? EADDRINUSE : code)
        }
        descriptor = vitrine_http_epoll_descriptor(server)
        self.port = vitrine_http_port(server)
    }

    /// Closes the listening socket and every connection.
    public func stop() {
        guard server.pointee.daemon != nil else { return }
        MHD_stop_daemon(server.pointee.daemon)
        server.pointee.daemon = nil
    }

    deinit {
        stop()
        server.deinitialize(count: 1)
        server.deallocate()
    }

    /// Serves what is ready: call when `descriptor` is readable and when `secondsUntilDue` has passed.
    public func run() {
        guard server.pointee.daemon != nil else { return }
        MHD_run(server.pointee.daemon)
    }

    /// When `run()` is due for a connection's timeout even if nothing arrives; nil for never.
    public var secondsUntilDue: Double? {
        guard server.pointee.daemon != nil else { return nil }
        let milliseconds = vitrine_http_timeout(server)
        return milliseconds < 0 ? nil : Double(milliseconds) / 1000
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
