import VitrineCore
import VitrineImage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The web remote: the page a phone opens and the JSON API under it, served on the player's loop. Every route
/// needs the access token (`WebAccess`); what changes files (uploads, hide, delete) and what decodes (thumbnails)
/// runs on the web worker and is answered when done, so no request holds up a flip.
final class WebRemote {
    enum Source: CaseIterable {
        case server, worker, timer
    }

    /// The player's side, called on the loop thread.
    struct Owner {
        /// The status object, as `vitrine ctl status` prints it.
        var status: () -> String
        /// Answers one command line as the control socket does ("ok" or "error: ...").
        var answer: (String) -> String
        /// The Prometheus metrics text.
        var metrics: () -> String
        /// The category playing.
        var activeCategory: () -> String?
        /// The picture of the slide on screen as last made (nil before the first), and whether a newer one is
        /// being made.
        var slidePicture: () -> (jpeg: [UInt8]?, coming: Bool)
    }

    /// Files the page is made of; nothing else in the folder is served.
    static let pageFiles: [String: (file: String, type: String)] = [
        "/": ("index.html", "text/html; charset=utf-8"),
        "/index.html": ("index.html", "text/html; charset=utf-8"),
        "/app.js": ("app.js", "text/javascript; charset=utf-8"),
        "/style.css": ("style.css", "text/css; charset=utf-8"),
        "/api/openapi.json": ("openapi.json", "application/json"),
    ]

    let settings: WebSettings
    private let server: WebServer
    private let worker: WebWorker
    private let timer: MonotonicTimer
    private let shelf: PhotoShelf
    private let saver: UploadSaver
    private let thumbnails: LibraryThumbnails
    private let tokenPath: String
    private(set) var token: String
    private let pages: String
    /// The page's files as read, by name.
    private var pageCache: [String: [UInt8]] = [:]
    private let secure: Bool
    private let log: EventLog
    var owner = Owner(
        status: { "{}" }, answer: { _ in "error: not ready" }, metrics: { "" }, activeCategory: { nil },
        slidePicture: { (nil, false) })
    private var loop: EventLoop?
    /// Uploads streaming now, by request.
    private var uploads: [WebServer.Pending: UploadSaver.Started] = [:]
    /// Pages asking for the slide while its picture is being made.
    private var slideWaiting: [WebServer.Pending] = []
    /// Makes the screen's rendition of each photo uploaded (nil without a rendition cache).
    var renditions: RenditionMaker?
    /// Called after a photo was added, hidden, shown or trashed: the library changed.
    var libraryChanged: () -> Void = {}

    init(
        settings: WebSettings, library: Library, budget: MemoryBudget, renditionCache: String?, stateFolder: String?,
        log: EventLog
    ) throws(PlayError) {
        self.settings = settings
        self.log = log
        tokenPath = "\(stateFolder ?? library.root + "/.vitrine")/web-token"
        do {
            try FileBytes.createDirectories(FileBytes.directory(of: tokenPath), mode: 0o700)
            let (token, created) = try AccessToken.loadOrCreate(tokenPath)
            self.token = token.value
            if created { log("web remote: a new access token in \(tokenPath)") }
        } catch {
            throw PlayError("web remote: \(error)")
        }
        pages = settings.pages ?? Self.installedPages()
        shelf = PhotoShelf(library: library)
        saver = UploadSaver(
            shelf: shelf, limitBytes: UInt64(settings.uploadLimitMiB) << 20,
            floorBytes: UInt64(settings.freeSpaceFloorMiB) << 20)
        thumbnails = LibraryThumbnails(
            budget: budget, libraryRoot: library.root, renditionCache: renditionCache,
            folder: stateFolder.map { "\($0)/thumbnails" })
        var tls: (certificate: String, key: String)?
        if let certFile = settings.certFile, let keyFile = settings.keyFile {
            do {
                tls = (try FileBytes.readText(certFile), try FileBytes.readText(keyFile))
            } catch {
                throw PlayError("web remote: cannot read \(error.path) (web.certFile/keyFile): \(error.reason)")
            }
        }
        secure = tls != nil
        var limits = WebServer.Limits()
        limits.bodyBytes = 16 << 10
        do {
            worker = try WebWorker()
            timer = try MonotonicTimer()
        } catch {
            throw PlayError("web remote: \(error)")
        }
        var begin: (WebServer.Request) -> WebServer.Start = { _ in .gather }
        var handle: (WebServer.Request) -> WebServer.Reply = { _ in .now(.error(503, "starting")) }
        do {
            server = try WebServer(
                address: settings.address, port: UInt16(settings.port), limits: limits, tls: tls,
                begin: { begin($0) }, handle: { handle($0) })
        } catch {
            throw PlayError("web remote: \(error) (web.address, web.port)")
        }
        begin = { [unowned self] in self.begin($0) }
        handle = { [unowned self] in self.handle($0) }
    }

    var port: UInt16 { server.port }

    /// `/usr/local/share/vitrine/web` beside an installed `/usr/local/bin/vitrine`, else Debian's place.
    static func installedPages() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 {
            let executable = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let beside = FileBytes.directory(of: FileBytes.directory(of: executable)) + "/share/vitrine/web"
            if FileBytes.exists(beside + "/index.html") { return beside }
        }
        return "/usr/share/vitrine/web"
    }

    func start(in loop: EventLoop, token: @escaping (Source) -> UInt64) throws(RuntimeError) {
        self.loop = loop
        try loop.add(server.descriptor, token: token(.server))
        try loop.add(worker.wakeup.descriptor, token: token(.worker))
        try loop.add(timer.descriptor, token: token(.timer))
        log(
            "web remote on \(secure ? "https" : "http")://\(settings.address):\(server.port)/ (pages \(pages)); "
                + "the link with its token is in \(tokenPath)")
        rearm()
    }

    func handle(_ source: Source, now: Double) {
        switch source {
        case .server, .timer:
            server.run()
        case .worker:
            for (pending, done) in worker.take() {
                if let change = done.libraryChange {
                    log("web remote: \(change)")
                    libraryChanged()
                }
                server.answer(pending, done.response)
            }
            server.run()
        }
        rearm()
    }

    /// libmicrohttpd's own timeouts (an idle connection closed) come due even when nothing arrives.
    private func rearm() {
        if let due = server.secondsUntilDue {
            timer.arm(at: MonotonicClock.seconds() + max(0.001, due))
        } else {
            timer.disarm()
        }
    }

    /// The slide's picture is made (or could not be): pages waiting for it get the newest there is.
    func slidePictureMade() {
        let waiting = slideWaiting
        slideWaiting = []
        let jpeg = owner.slidePicture().jpeg
        for pending in waiting {
            server.answer(pending, jpeg.map { LibraryThumbnails.response($0) } ?? .error(404, "no slide"))
        }
        server.run()
        rearm()
    }

    func close() {
        worker.stop()
        server.stop()
        if let loop {
            loop.remove(server.descriptor)
            loop.remove(worker.wakeup.descriptor)
            loop.remove(timer.descriptor)
        }
        loop = nil
    }

    /// A new token: every paired phone must pair again.
    func rotateToken() throws(FileError) -> String {
        token = try AccessToken.rotate(tokenPath).value
        log("web remote: the access token was rotated; phones must scan the new code")
        return token
    }

    /// The page's address with the token, for the pairing code.
    func pairingURL() -> String {
        let host = settings.address == "0.0.0.0" ? Self.networkAddress() ?? "127.0.0.1" : settings.address
        let base = settings.publicURL ?? "\(secure ? "https" : "http")://\(host):\(server.port)"
        return "\(base)/?token=\(token)"
    }

    /// The frame's first IPv4 address on a network (not loopback): where a phone on the same network finds it.
    static func networkAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                current.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0,
                current.pointee.ifa_flags & UInt32(IFF_UP) != 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let found = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var raw = inet.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil
            }
            if found { return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        return nil
    }

    // MARK: Requests

    private func access(_ request: WebServer.Request) -> WebAccess.Decision {
        WebAccess.decide(
            WebAccess.Request(method: request.method, target: request.target, headers: request.headers), token: token)
    }

    private func refusal(_ decision: WebAccess.Decision, _ request: WebServer.Request) -> WebServer.Response? {
        switch decision {
        case .allow: return nil
        case .unauthorized:
            if request.path.hasPrefix("/api/") || request.path == "/metrics" {
                var response = WebServer.Response.error(
                    401, "this needs the frame's access token (Authorization: Bearer, or the page's link)")
                response.headers.append(("WWW-Authenticate", "Bearer realm=\"vitrine\""))
                return response
            }
            return WebServer.Response(
                status: 401, contentType: "text/html; charset=utf-8",
                body: Array(
                    ("<!doctype html><meta name=viewport content=\"width=device-width\"><title>Vitrine</title>"
                        + "<p>This page needs the frame's access link: press Info on the frame (a key, the remote or "
                        + "a long press) and scan the code it shows.</p>").utf8),
                headers: [("WWW-Authenticate", "Bearer realm=\"vitrine\"")])
        case .crossOrigin(let origin):
            return .error(403, "a request from \(origin) may not change the frame (cross-site)")
        }
    }

    private func begin(_ request: WebServer.Request) -> WebServer.Start {
        if let refused = refusal(access(request), request) { return .refuse(refused) }
        guard request.path == "/api/photos", request.method == "POST" else {
            if let length = request.contentLength, length > 16 << 10 {
                return .refuse(.error(413, "the request body is too large (16 KiB at most here)"))
            }
            return .gather
        }
        let query = WebQuery.parse(request.target)
        guard let category = query["category"], let name = query["name"] else {
            return .refuse(.error(400, "an upload needs ?category= and ?name="))
        }
        do {
            let started = try saver.start(category: category, offeredName: name, contentLength: request.contentLength)
            // An upload the client gave up on never reaches `handle`; its file is gone (the server removes it),
            // and so goes its entry here, before the address is reused by another request.
            uploads = uploads.filter { FileBytes.exists($0.value.temporary) }
            uploads[request.pending] = started
            return .stream(descriptor: started.descriptor, path: started.temporary, limit: started.limit)
        } catch {
            return .refuse(error.response)
        }
    }

    private func handle(_ request: WebServer.Request) -> WebServer.Reply {
        let decision = access(request)
        if let refused = refusal(decision, request) { return .now(refused) }
        var reply = route(request)
        if case .allow(setCookie: true) = decision, case .now(var response) = reply {
            response.headers.append(("Set-Cookie", cookie(token)))
            reply = .now(response)
        }
        return reply
    }

    private func cookie(_ value: String) -> String {
        "\(WebAccess.cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000"
            + (secure ? "; Secure" : "")
    }

    private func route(_ request: WebServer.Request) -> WebServer.Reply {
        let query = WebQuery.parse(request.target)
        let method = request.method.uppercased()
        func only(_ allowed: String, _ body: () -> WebServer.Reply) -> WebServer.Reply {
            let methods = allowed.split(separator: ",").map(String.init)
            guard methods.contains(method) || (method == "HEAD" && methods.contains("GET")) else {
                var response = WebServer.Response.error(405, "\(request.path) takes \(allowed)")
                response.headers.append(("Allow", allowed))
                return .now(response)
            }
            return body()
        }
        if let page = Self.pageFiles[request.path] {
            return only("GET") { .now(pageFile(page.file, type: page.type)) }
        }
        switch request.path {
        case "/api/status":
            return only("GET") { .now(.json(200, owner.status())) }
        case "/metrics":
            return only("GET") {
                .now(
                    WebServer.Response(
                        status: 200, contentType: "text/plain; version=0.0.4", body: Array(owner.metrics().utf8)))
            }
        case "/api/command":
            return only("POST") { .now(command(request)) }
        case "/api/slide.jpg":
            return only("GET") { slide(request) }
        case "/api/categories":
            return only("GET") { categories(request) }
        case "/api/photos":
            return only("GET,POST,DELETE") { photos(request, method: method, query: query) }
        case "/api/photos/hide", "/api/photos/show":
            return only("POST") { setHidden(request, hidden: request.path.hasSuffix("hide"), query: query) }
        case "/api/thumbnail":
            return only("GET") { thumbnail(request, query: query) }
        case "/api/token":
            return only("POST") {
                do {
                    let new = try rotateToken()
                    return .now(
                        WebServer.Response(
                            status: 200, contentType: "application/json",
                            body: Array("{\"token\":\(JSONText.quote(new))}".utf8),
                            headers: [("Set-Cookie", cookie(new))]))
                } catch {
                    return .now(.error(500, "\(error)"))
                }
            }
        default:
            return .now(.error(404, "no such page or API: \(request.path)"))
        }
    }

    private func pageFile(_ name: String, type: String) -> WebServer.Response {
        // Read once: every phone's visit asks for the same few files, and the loop thread should not.
        if pageCache[name] == nil { pageCache[name] = try? FileBytes.read("\(pages)/\(name)", limit: 4 << 20) }
        guard let bytes = pageCache[name] else {
            return .error(500, "the page's file \(pages)/\(name) is missing (web.pages)")
        }
        return WebServer.Response(
            status: 200, contentType: type, body: bytes,
            headers: [
                (
                    "Content-Security-Policy",
                    "default-src 'self'; img-src 'self' blob: data:; frame-ancestors 'none'; base-uri 'none'"
                ),
                ("X-Frame-Options", "DENY"), ("Referrer-Policy", "same-origin"),
            ])
    }

    private func command(_ request: WebServer.Request) -> WebServer.Response {
        guard case .object(let object)? = (try? JSONParser.parse(String(decoding: request.body, as: UTF8.self)))?.kind,
            case .string(let line)? = object.first(where: { $0.key == "command" })?.value.kind
        else {
            return .error(400, "the body must be JSON with a command, e.g. {\"command\":\"next\"}")
        }
        guard !line.contains("\n"), !line.contains("\r") else { return .error(400, "one command, one line") }
        let answer = owner.answer(line)
        if answer.hasPrefix("error: ") { return .error(400, String(answer.dropFirst("error: ".count))) }
        return .json(200, "{\"answer\":\(JSONText.quote(answer))}")
    }

    private func slide(_ request: WebServer.Request) -> WebServer.Reply {
        let picture = owner.slidePicture()
        if picture.coming {
            slideWaiting.append(request.pending)
            return .later
        }
        return .now(picture.jpeg.map { LibraryThumbnails.response($0) } ?? .error(404, "nothing is on screen yet"))
    }

    /// Runs `job`, which only reads, on the worker.
    private func later(_ request: WebServer.Request, _ job: @escaping @Sendable () -> WebServer.Response)
        -> WebServer.Reply
    {
        changing(request) { WebWorker.Done(job()) }
    }

    /// Runs `job` on the worker; a full queue is answered at once.
    private func changing(_ request: WebServer.Request, _ job: @escaping WebWorker.Job) -> WebServer.Reply {
        guard worker.submit(request.pending, job) else {
            var response = WebServer.Response.error(429, "the frame is busy; try again in a moment")
            response.headers.append(("Retry-After", "1"))
            return .now(response)
        }
        return .later
    }

    private func categories(_ request: WebServer.Request) -> WebServer.Reply {
        let shelf = self.shelf
        let active = owner.activeCategory()
        return later(request) {
            let categories: [LibraryCategory]
            do {
                categories = try shelf.library.categories()
            } catch {
                return .error(500, "cannot read the library: \(error)")
            }
            var listed = categories
            if !listed.contains(where: \.isRoot) {
                listed.insert(LibraryCategory(name: "", path: shelf.library.root), at: 0)
            }
            let items = listed.compactMap { category -> String? in
                let name = category.name
                let photos = shelf.photos(of: category)
                if name.isEmpty && photos.isEmpty { return nil }
                let hidden = photos.filter(\.hidden).count
                return "{\"name\":\(JSONText.quote(name)),\"photos\":\(photos.count - hidden),\"hidden\":\(hidden),"
                    + "\"active\":\(name == active)}"
            }
            return .json(200, "{\"categories\":[\(items.joined(separator: ","))]}")
        }
    }

    private func photos(_ request: WebServer.Request, method: String, query: [String: String]) -> WebServer.Reply {
        let shelf = self.shelf
        switch method {
        case "POST":
            guard let started = uploads.removeValue(forKey: request.pending), let upload = request.upload else {
                return .now(.error(400, "an upload needs ?category= and ?name= and the photo as the body"))
            }
            let renditions = self.renditions
            let reply = changing(request) {
                var saved: String?
                let response = UploadSaver.finish(started, upload: upload) { path, upright in
                    saved = path
                    // The screen's rendition is made in the background (at idle priority, when the board has room),
                    // so a phone's 12 MP photo plays from a panel-sized JPEG; the decode's need is bounded by the
                    // whole upright picture.
                    guard let renditions, renditions.wouldShrink(upright),
                        let need = upright.xrgbByteCount
                    else { return }
                    renditions.submit(RenditionMaker.Job(original: path, need: need))
                }
                let name = saved.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
                return WebWorker.Done(
                    response,
                    libraryChange: name.map { "\($0) added to \(PhotoShelf.label(started.category))" })
            }
            if case .now = reply {
                Glibc.close(upload.descriptor)
                unlink(upload.path)
            }
            return reply
        case "DELETE":
            guard let category = query["category"], let name = query["name"] else {
                return .now(.error(400, "deleting needs ?category= and ?name="))
            }
            let hidden = query["hidden"] == "1" || query["hidden"] == "true"
            return changing(request) {
                do throws(WebError) {
                    let trashed = try shelf.trash(category: category, name: name, hidden: hidden)
                    return WebWorker.Done(
                        .json(200, "{\"trashed\":\(JSONText.quote(trashed))}"),
                        libraryChange: "\(name) of \(PhotoShelf.label(category)) moved to \(trashed)")
                } catch {
                    return WebWorker.Done(error.response)
                }
            }
        default:
            guard let category = query["category"] else { return .now(.error(400, "listing needs ?category=")) }
            return later(request) {
                do throws(WebError) {
                    let items = try shelf.photos(in: category).map {
                        "{\"name\":\(JSONText.quote($0.name)),\"hidden\":\($0.hidden),\"bytes\":\($0.bytes)}"
                    }
                    return .json(
                        200, "{\"category\":\(JSONText.quote(category)),\"photos\":[\(items.joined(separator: ","))]}")
                } catch {
                    return error.response
                }
            }
        }
    }

    private func setHidden(_ request: WebServer.Request, hidden: Bool, query: [String: String]) -> WebServer.Reply {
        guard let category = query["category"], let name = query["name"] else {
            return .now(.error(400, "this needs ?category= and ?name="))
        }
        let shelf = self.shelf
        return changing(request) {
            do throws(WebError) {
                let saved = try shelf.setHidden(hidden, category: category, name: name)
                return WebWorker.Done(
                    .json(200, "{\"hidden\":\(hidden),\"name\":\(JSONText.quote(saved))}"),
                    libraryChange: "\(name) of \(PhotoShelf.label(category)) \(hidden ? "hidden" : "shown again")")
            } catch {
                return WebWorker.Done(error.response)
            }
        }
    }

    private func thumbnail(_ request: WebServer.Request, query: [String: String]) -> WebServer.Reply {
        guard let category = query["category"], let name = query["name"] else {
            return .now(.error(400, "a thumbnail needs ?category= and ?name="))
        }
        let path: String
        do {
            path = try shelf.file(
                category: category, name: name, hidden: query["hidden"] == "1" || query["hidden"] == "true")
        } catch {
            return .now(error.response)
        }
        if let jpeg = thumbnails.cached(path) { return .now(LibraryThumbnails.response(jpeg)) }
        let thumbnails = self.thumbnails
        return later(request) { thumbnails.make(path) }
    }
}
