import CCurl
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One libcurl handle for one source's server: its connection is kept between a sync's requests, and every
/// request says the login, the CA, the time it may stall and the bandwidth it may take.
final class HTTPSession {
    private let handle: UnsafeMutableRawPointer
    private let source: SourceSettings
    private let login: LoginFile?
    /// Shared by every file of the sync, so the limit holds across them.
    private let limiter: RateLimiter?
    /// C strings curl reads during a request; kept alive here until the next.
    private var strings: [UnsafeMutablePointer<CChar>] = []

    /// Bodies of error answers are read and dropped; past this the connection is dropped instead.
    static let maximumErrorBody = 1 << 20
    /// A folder listing larger than this is refused (PropfindParser also counts its entries).
    static let maximumListing: Int64 = 64 << 20

    init(source: SourceSettings, login: LoginFile?) throws(SyncError) {
        do {
            try LazyLibrary.curl.load()
        } catch {
            throw SyncError(.settings, source.location.description, error.description)
        }
        Self.initializeOnce()
        guard let handle = curl_easy_init() else {
            throw SyncError(.local, source.location.description, "cannot make a libcurl handle", errno: ENOMEM)
        }
        self.handle = handle
        self.source = source
        self.login = login
        limiter = source.bandwidthKiBps.map { RateLimiter(bytesPerSecond: Double($0) * 1024) }
    }

    deinit {
        curl_easy_cleanup(handle)
        for string in strings { free(string) }
    }

    private static let initialized = Locked(false)

    /// curl_global_init is not thread-safe: the first session makes it, under a lock.
    private static func initializeOnce() {
        initialized.withLock { done in
            if !done { _ = curl_global_init(3) }  // CURL_GLOBAL_DEFAULT: SSL
            done = true
        }
    }

    private static let propfindBody = """
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/>\
        <d:getetag/></d:prop></d:propfind>
        """

    /// Lists one folder (`PROPFIND` with `Depth: 1`: an infinite depth is refused by most servers and could be
    /// the whole share).
    func list(_ url: String) throws(SyncError) -> [PropfindParser.Response] {
        let parser = try PropfindParser()
        let transfer = Transfer(sink: .listing(parser), expectedStatus: [207])
        try prepare(url, transfer: transfer, headers: ["Depth: 1", "Content-Type: application/xml; charset=utf-8"])
        set(CURLOPT_CUSTOMREQUEST, "PROPFIND")
        set(CURLOPT_POSTFIELDS, Self.propfindBody)
        try perform(url, transfer: transfer)
        guard parser.feed(UnsafeRawBufferPointer(start: nil, count: 0), isFinal: true) else {
            throw SyncError(.badAnswer, url, "the folder listing \(parser.failure ?? "is not well-formed XML")")
        }
        return parser.responses
    }

    /// Fetches `url` into `descriptor` from byte `offset` (a download cut off before resumes there, if the file
    /// is still what `validator` says: an ETag or an HTTP date). Refuses more than `expected` bytes in all.
    /// Returns the file's size on disk afterwards.
    func fetch(_ url: String, into descriptor: Int32, from offset: Int64, expected: Int64, validator: String?)
        throws(SyncError) -> Int64
    {
        let transfer = Transfer(
            sink: .file(descriptor: descriptor, written: offset, expected: expected), expectedStatus: [200, 206])
        transfer.limiter = limiter
        transfer.requestedOffset = offset
        var headers: [String] = []
        if offset > 0, let validator { headers.append("If-Range: \(validator)") }
        try prepare(url, transfer: transfer, headers: headers)
        if offset > 0 { set(CURLOPT_RANGE, "\(offset)-") }
        try perform(url, transfer: transfer)
        guard case .file(_, let written, _) = transfer.sink else { return 0 }
        return written
    }

    private func set(_ option: CURLoption, _ text: String) {
        guard let copy = strdup(text) else { return }
        strings.append(copy)
        _ = vitrine_curl_set_pointer(handle, option, copy)
    }

    private func prepare(_ url: String, transfer: Transfer, headers: [String]) throws(SyncError) {
        curl_easy_reset(handle)
        for string in strings { free(string) }
        strings.removeAll()
        set(CURLOPT_URL, url)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        set(CURLOPT_USERAGENT, "Vitrine/\(VitrineVersion.string)")
        _ = vitrine_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = vitrine_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 1)
        _ = vitrine_curl_set_long(handle, CURLOPT_MAXREDIRS, 5)
        let timeout = max(Int(source.timeout.rounded()), 1)
        _ = vitrine_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, timeout)
        // A link that stalls (Wi-Fi gone, a NAS asleep) is given up after `timeout` seconds below one byte a second.
        _ = vitrine_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = vitrine_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, timeout)
        if let caFile = source.caFile { set(CURLOPT_CAINFO, caFile) }
        if let user = login?.user ?? source.shareToken {
            _ = vitrine_curl_set_long(handle, CURLOPT_HTTPAUTH, 1)  // CURLAUTH_BASIC, what every server here takes
            set(CURLOPT_USERNAME, user)
            set(CURLOPT_PASSWORD, login?.password ?? "")
        }
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        _ = vitrine_curl_set_data_function(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            guard let data, let context else { return 0 }
            return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().receive(data, size * count)
        }
        _ = vitrine_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = vitrine_curl_set_data_function(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            guard let data, let context else { return 0 }
            return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().header(data, size * count)
        }
        _ = vitrine_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
        for header in headers {
            guard let list = curl_slist_append(transfer.headerList, header) else {
                throw SyncError(.local, url, "cannot make a request header", errno: ENOMEM)
            }
            transfer.headerList = list
        }
        if let list = transfer.headerList { _ = vitrine_curl_set_pointer(handle, CURLOPT_HTTPHEADER, list) }
    }

    private func perform(_ url: String, transfer: Transfer) throws(SyncError) {
        let code = withExtendedLifetime(transfer) { curl_easy_perform(handle) }
        var status = 0
        _ = vitrine_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if let refusal = transfer.refusal { throw SyncError(.badAnswer, url, refusal) }
        if let failure = transfer.localFailure { throw failure }
        switch status {
        case 401, 403:
            throw SyncError(.refused, url, "the server refused the login (HTTP \(status))")
        case 429, 503:
            throw SyncError(.busy(retryAfter: transfer.retryAfter), url, "the server is busy (HTTP \(status))")
        case 500...599:
            throw SyncError(.busy(retryAfter: transfer.retryAfter), url, "the server failed (HTTP \(status))")
        default:
            break
        }
        guard code == CURLE_OK else {
            let reason = String(cString: curl_easy_strerror(code))
            switch code {
            case CURLE_TOO_MANY_REDIRECTS:
                throw SyncError(.badAnswer, url, "the server redirects in a loop (\(reason))")
            case CURLE_PEER_FAILED_VERIFICATION:
                throw SyncError(
                    .settings, url,
                    "the server's certificate is not trusted (\(reason)); name its CA in the source's caFile")
            case CURLE_SSL_CACERT_BADFILE:
                throw SyncError(.settings, url, "the source's caFile cannot be read (\(reason))")
            default:
                throw SyncError(.offline, url, reason)
            }
        }
        guard transfer.expectedStatus.contains(status) else {
            throw SyncError(.badAnswer, url, "the server answered HTTP \(status)")
        }
        if case .file(_, let written, let expected) = transfer.sink, written != expected {
            throw SyncError(.badAnswer, url, "the server sent \(written) bytes where its listing said \(expected)")
        }
    }
}

/// What one request collects: filled from curl's callbacks, on the thread that called `curl_easy_perform`.
private final class Transfer {
    enum Sink {
        case listing(PropfindParser)
        case file(descriptor: Int32, written: Int64, expected: Int64)
    }

    var sink: Sink
    let expectedStatus: Set<Int>
    var status = 0
    var retryAfter: Int64?
    var requestedOffset: Int64 = 0
    var limiter: RateLimiter?
    /// Freed with the transfer (curl_slist_append returns the same head for every append after the first).
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// Why the answer's body was refused (a file larger than listed, bad XML, a listing too large).
    var refusal: String?
    var localFailure: SyncError?
    private var received: Int64 = 0
    private var discarded = 0

    init(sink: Sink, expectedStatus: Set<Int>) {
        self.sink = sink
        self.expectedStatus = expectedStatus
    }

    deinit { curl_slist_free_all(headerList) }

    func header(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            // Each answer of a redirect chain starts with its status line.
            status = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            retryAfter = nil
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...]
            if name == "retry-after" {
                retryAfter = HTTPDate.retryAfter(value, now: Int64(time(nil))).map { min($0, 86400) }
            } else if name == "content-range", status == 206 {
                // "bytes 100-199/1000": the answer must start where the file left off.
                let start = value.split(whereSeparator: { $0 == " " || $0 == "-" }).dropFirst().first
                if start.flatMap({ Int64($0) }) != requestedOffset {
                    refusal = "the server resumed at another byte than asked (Content-Range:\(value.dropLast(2)))"
                    return 0
                }
            }
        }
        return count
    }

    func receive(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        guard expectedStatus.contains(status) else {
            // An error page or a redirect's body: read past it, not kept.
            discarded += count
            return discarded <= HTTPSession.maximumErrorBody ? count : 0
        }
        switch sink {
        case .listing(let parser):
            received += Int64(count)
            guard received <= HTTPSession.maximumListing else {
                refusal = "the folder listing is larger than \(HTTPSession.maximumListing >> 20) MiB"
                return 0
            }
            guard parser.feed(UnsafeRawBufferPointer(start: data, count: count), isFinal: false) else {
                refusal = "the folder listing \(parser.failure ?? "is not well-formed XML")"
                return 0
            }
            return count
        case .file(let descriptor, var written, let expected):
            if status == 200, written > 0, received == 0 {
                // The file changed since the part was fetched (If-Range failed): the whole file comes again.
                guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
                    localFailure = SyncError(.local, "download", "cannot restart the partial file", errno: errno)
                    return 0
                }
                written = 0
            }
            received += Int64(count)
            guard written <= expected - Int64(count) else {
                refusal = "the file is larger than the \(expected) bytes its listing said"
                return 0
            }
            var done = 0
            while done < count {
                let result = write(descriptor, data + done, count - done)
                if result < 0 {
                    if errno == EINTR { continue }
                    localFailure = SyncError(.local, "download", "cannot write the file", errno: errno)
                    return 0
                }
                done += result
            }
            written += Int64(count)
            sink = .file(descriptor: descriptor, written: written, expected: expected)
            // Sleeping here holds curl's reads, so the socket's window fills and the server sends no faster.
            limiter?.account(count)
            return count
        }
    }
}
