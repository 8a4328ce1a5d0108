import VitrineCore
import VitrineImage
import VitrineLibrary
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The web remote: the page a phone opens and the JSON API under it, served on the player's loop. Every route
/// needs the access token (`WebAccess`); what changes files (uploads, hide, delete) and what decodes (thumbnails)
/// runs on the web worker and is answered when done, so no request holds up a flip.
package final class WebRemote {
    private enum Source {
        case server, worker, timer
    }

    /// The player's side, called on the loop thread. Where each screen has a show, `output` names one (nil: the
    /// first screen's, with every output's under `outputs` in the status); an output that is not there is an
    /// error naming those that are.
    package struct Owner {
        /// The status object, as `vitrine ctl status` (or `ctl --output NAME status`) prints it.
        var status: (_ output: String?) -> Result<String, OutputUnknown>
        /// Answers one command line as the control socket does ("ok" or "error: ...").
        var answer: (String) -> String
        /// The Prometheus metrics text.
        var metrics: () -> String
        /// The category playing, and the categories the show plays from where its output names some.
        var activeCategory: (_ output: String?) -> Result<(active: String?, only: [String]?), OutputUnknown>
        /// The picture of the slide on screen as last made (nil before the first), and whether a newer one is
        /// being made.
        var slidePicture: (_ output: String?) -> Result<(jpeg: [UInt8]?, coming: Bool), OutputUnknown>

        package init(
            status: @escaping (String?) -> Result<String, OutputUnknown>, answer: @escaping (String) -> String,
            metrics: @escaping () -> String,
            activeCategory: @escaping (String?) -> Result<(active: String?, only: [String]?), OutputUnknown>,
            slidePicture: @escaping (String?) -> Result<(jpeg: [UInt8]?, coming: Bool), OutputUnknown>
        ) {
            self.status = status
            self.answer = answer
            self.metrics = metrics
            self.activeCategory = activeCategory
            self.slidePicture = slidePicture
        }
    }

    /// Files the page is made of; nothing else in the folder is served.
    static let pageFiles: [String: (file: String, type: String)] = [
        "/": ("index.html", "text/html; charset=utf-8"),
        "/index.html": ("index.html", "text/html; charset=utf-8"),
        "/app.js": ("app.js", "text/javascript; charset=utf-8"),
        "/style.css": ("style.css", "text/css; charset=utf-8"),
        "/api/openapi.json": ("openapi.json", "application/json"),
    ]

    package private(set) var settings: WebSettings
    private let server: WebServer
    private let worker: WebWorker
    private let timer: MonotonicTimer
    private let shelf: PhotoShelf
    private var saver: UploadSaver
    private let thumbnails: LibraryThumbnails
    private let tokenPath: String
    private(set) var token: String
    private var pages: String
    /// The page's files as read, by name.
    private var pageCache: [String: [UInt8]] = [:]
    private let secure: Bool
    private let log: EventLog
    /// Uploads are refused above this, as the player would refuse them.
    private var maxMegapixels: Double
    /// The player's budget: an upload's check decode is charged to it, so it never takes the show's memory.
    private let budget: MemoryBudget
    /// An output the player does not have, with the names of those it has.
    package struct OutputUnknown: Error, CustomStringConvertible {
        package var name: String
        package var have: [String]

        package init(name: String, have: [String]) {
            self.name = name
            self.have = have
        }

        package var description: String {
            "no output named \(JSONText.quote(name)) (have: \(have.map(JSONText.quote).joined(separator: ", ")))"
        }
    }

    package var owner = Owner(
        status: { _ in .success("{}") }, answer: { _ in "error: not ready" }, metrics: { "" },
        activeCategory: { _ in .success((nil, nil)) }, slidePicture: { _ in .success((nil, false)) })
    private var sources: LoopSources?
    /// Apart from the others: the writer thread closes it when it is done, which may be after `stop()`.
    private var writerSource: EventLoop.Source?
    /// Uploads streaming now, by request.
    private var uploads: [WebServer.Pending: UploadSaver.Started] = [:]
    /// Pages asking for the slide while its picture is being made.
    private var slideWaiting: [(pending: WebServer.Pending, output: String?)] = []
    /// Makes the screen's rendition of each photo uploaded (nil without a rendition cache).
    package var renditions: RenditionMaker?
    /// Called after a photo was added, hidden, shown or trashed: the library changed.
    package var libraryChanged: (_ placed: String?) -> Void = { _ in }

    package init(
        settings: WebSettings, library: Library, budget: MemoryBudget, renditionCache: String?, stateFolder: String?,
        maxMegapixels: Double = 100, log: EventLog
    ) throws(PlayError) {
        self.settings = settings
        self.log = log
        self.maxMegapixels = maxMegapixels
        self.budget = budget
        // Never in the library: a library is often a shared folder, and the token is the key to the frame.
        tokenPath = "\(stateFolder ?? Self.userStateFolder())/web-token"
        do {
            try FileBytes.createDirectories(PathText.directory(of: tokenPath), mode: 0o700)
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
            let beside = PathText.directory(of: PathText.directory(of: executable)) + "/share/vitrine/web"
            if FileBytes.exists(beside + "/index.html") { return beside }
        }
        return "/usr/share/vitrine/web"
    }

    package func start(in loop: EventLoop) throws(RuntimeError) {
        var sources = LoopSources(loop)
        for (descriptor, source) in [
            (server.descriptor, Source.server), (worker.wakeup.descriptor, .worker), (timer.descriptor, .timer),
        ] {
            try sources.add(descriptor) { [unowned self] _ in handle(source, now: MonotonicClock.seconds()) }
        }
        self.sources = sources
        writerSource = try loop.add(server.writerDescriptor) { [unowned self] _ in
            handle(.server, now: MonotonicClock.seconds())
        }
        log(
            "web remote on \(secure ? "https" : "http")://\(settings.address):\(server.port)/ (pages \(pages)); "
                + "the link with its token is in \(tokenPath)")
        let shelf = self.shelf
        _ = worker.submit(.none) {
            let removed = shelf.removeLeftoverUploads()
            return WebWorker.Done(
                .json(200, "{}"),
                libraryChange: removed.isEmpty
                    ? nil
                    : "removed \(removed.count) unfinished upload(s) left by a crash: \(removed.joined(separator: ", "))"
            )
        }
        rearm()
    }

    private func handle(_ source: Source, now: Double) {
        switch source {
        case .server, .timer:
            server.run()
        case .worker:
            for (pending, done) in worker.take() {
                if done.upload != nil {
                    uploadStarted(pending, done)
                    continue
                }
                if let change = done.libraryChange {
                    log("web remote: \(change)")
                    libraryChanged(done.placed)
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
    package func slidePictureMade() {
        let waiting = slideWaiting
        slideWaiting = []
        for (pending, output) in waiting {
            guard case .success(let picture) = owner.slidePicture(output), !picture.coming else {
                slideWaiting.append((pending, output))
                continue
            }
            server.answer(pending, picture.jpeg.map { LibraryThumbnails.response($0) } ?? .error(404, "no slide"))
        }
        server.run()
        rearm()
    }

    package func close() {
        // The writer's descriptor first: the writer closes it when it is done, which may be after `stop()`.
        sources?.loop.remove(writerSource)
        writerSource = nil
        worker.stop()
        server.stop()
        sources?.removeAll()
        sources = nil
    }

    /// Whether `new` can be taken by the running server: it listens where it did, with the same certificate.
    package func canTake(_ new: WebSettings) -> Bool {
        new.address == settings.address && new.port == settings.port && new.certFile == settings.certFile
            && new.keyFile == settings.keyFile
    }

    /// Takes reloaded settings that `canTake`: limits, pages, the public address and what phones may ask. The
    /// server and its connections stay (a reload asked through the remote itself gets its answer).
    package func take(_ new: WebSettings, maxMegapixels: Double) {
        settings = new
        self.maxMegapixels = maxMegapixels
        saver = UploadSaver(
            shelf: shelf, limitBytes: UInt64(new.uploadLimitMiB) << 20, floorBytes: UInt64(new.freeSpaceFloorMiB) << 20)
        pages = new.pages ?? Self.installedPages()
        pageCache = [:]
    }

    /// Where a player run without a state directory (not as the service) keeps its token: the XDG state folder.
    static func userStateFolder() -> String {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") {
            return "\(state)/vitrine"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? ""
        return "\(home.isEmpty ? "/tmp" : home)/.local/state/vitrine"
    }

    /// A new token: every paired phone must pair again.
    package func rotateToken() throws(FileError) -> String {
        token = try AccessToken.rotate(tokenPath).value
        log("web remote: the access token was rotated; phones must scan the new code")
        return token
    }

    /// The page's address with the token, for the pairing code.
    package func pairingURL() -> String {
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
        // The category's folder, the free space and the new file are the library's: on the worker, while the
        // connection waits unread, so a share that stopped answering holds this upload and nothing else.
        let saver = self.saver
        let contentLength = request.contentLength
        if let refusal = saver.refusalAtHeaders(offeredName: name, contentLength: contentLength) {
            return .refuse(refusal.response)
        }
        let known = uploads.mapValues(\.temporary)
        let accepted = worker.submit(request.pending) {
            // An upload the client gave up on never reaches `handle`; its file is gone (the server removes it),
            // and so goes its entry, before the address is reused by another request.
            let gone = known.filter { !FileBytes.exists($0.value) }.map(\.key)
            var done: WebWorker.Done
            do throws(WebError) {
                done = WebWorker.Done(.json(200, "{}"))
                done.upload = .started(
                    try saver.start(category: category, offeredName: name, contentLength: contentLength))
            } catch {
                done = WebWorker.Done(error.response)
                done.upload = .refused
            }
            done.goneUploads = gone
            return done
        }
        return accepted ? .wait : .refuse(.error(503, "the frame is busy; try again in a moment"))
    }

    /// An upload's file is open (or refused) on the worker: the waiting connection goes on.
    private func uploadStarted(_ pending: WebServer.Pending, _ done: WebWorker.Done) {
        for gone in done.goneUploads { uploads[gone] = nil }
        switch done.upload {
        case .started(let started):
            let decision = WebServer.Start.stream(
                descriptor: started.descriptor, path: started.temporary, limit: started.limit,
                limitIsSpace: started.limitIsSpace)
            if server.begin(pending, decision) {
                uploads[pending] = started
            } else {
                // The client went meanwhile: nobody will write or remove the file but this, on the worker.
                _ = worker.submit(.none) {
                    Descriptor(taking: started.descriptor).close()
                    unlink(started.temporary)
                    return WebWorker.Done(.json(200, "{}"))
                }
            }
        case .refused, nil:
            server.begin(pending, .refuse(done.response))
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
            return only("GET") {
                switch owner.status(query["output"]) {
                case .success(let status): return .now(.json(200, status))
                case .failure(let unknown): return .now(.error(404, "\(unknown)"))
                }
            }
        case "/metrics":
            return only("GET") {
                .now(
                    WebServer.Response(
                        status: 200, contentType: "text/plain; version=0.0.4", body: Array(owner.metrics().utf8)))
            }
        case "/api/command":
            return only("POST") { command(request) }
        case "/api/slide.jpg":
            return only("GET") { slide(request, output: query["output"]) }
        case "/api/categories":
            return only("GET") { categories(request, output: query["output"]) }
        case "/api/photos":
            return only("GET,POST,DELETE") { photos(request, method: method, query: query) }
        case "/api/photos/hide", "/api/photos/show":
            return only("POST") { setHidden(request, hidden: request.path.hasSuffix("hide"), query: query) }
        case "/api/thumbnail":
            return only("GET") { thumbnail(request, query: query) }
        case "/api/token":
            return only("POST") {
                guard settings.commands.permits(.rotateToken) else {
                    return .now(
                        .error(
                            403, "token rotate is not allowed here (web.commands is \"\(settings.commands.rawValue)\")")
                    )
                }
                return newToken()
            }
        default:
            return .now(.error(404, "no such page or API: \(request.path)"))
        }
    }

    /// A new token, answered with its cookie so the phone that asked stays paired.
    private func newToken() -> WebServer.Reply {
        do {
            let new = try rotateToken()
            return .now(
                WebServer.Response(
                    status: 200, contentType: "application/json",
                    body: Array("{\"answer\":\"ok\",\"token\":\(JSONText.quote(new))}".utf8),
                    headers: [("Set-Cookie", cookie(new))]))
        } catch {
            return .now(.error(500, "\(error)"))
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

    private func command(_ request: WebServer.Request) -> WebServer.Reply {
        guard case .object(let object)? = (try? JSONParser.parse(String(decoding: request.body, as: UTF8.self)))?.kind,
            case .string(let line)? = object.first(where: { $0.key == "command" })?.value.kind
        else {
            return .now(.error(400, "the body must be JSON with a command, e.g. {\"command\":\"next\"}"))
        }
        guard !line.contains("\n"), !line.contains("\r") else { return .now(.error(400, "one command, one line")) }
        // The phone that rotates the token must get the new cookie, or it locks itself out.
        if ControlCommand.parse(line) == .rotateToken, settings.commands.permits(.rotateToken) { return newToken() }
        let answer = owner.answer(line)
        if answer.hasPrefix("error: ") {
            let reason = String(answer.dropFirst("error: ".count))
            return .now(.error(answer.contains("is not allowed here") ? 403 : 400, reason))
        }
        return .now(.json(200, "{\"answer\":\(JSONText.quote(answer))}"))
    }

    private func slide(_ request: WebServer.Request, output: String?) -> WebServer.Reply {
        let picture: (jpeg: [UInt8]?, coming: Bool)
        switch owner.slidePicture(output) {
        case .success(let made): picture = made
        case .failure(let unknown): return .now(.error(404, "\(unknown)"))
        }
        if picture.coming {
            slideWaiting.append((request.pending, output))
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

    private func categories(_ request: WebServer.Request, output: String?) -> WebServer.Reply {
        let shelf = self.shelf
        let active: String?
        let only: [String]?
        switch owner.activeCategory(output) {
        case .success(let categories): (active, only) = categories
        case .failure(let unknown): return .now(.error(404, "\(unknown)"))
        }
        return later(request) {
            let categories: [LibraryCategory]
            do {
                categories = try shelf.library.categories()
            } catch {
                return .error(500, "cannot read the library: \(error)")
            }
            var listed = categories.filter { only?.contains($0.name) ?? true }
            if only == nil, !listed.contains(where: \.isRoot) {
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
            let check = UploadSaver.Check(budget: budget, maxMegapixels: maxMegapixels)
            let reply = changing(request) {
                var saved: String?
                let response = UploadSaver.finish(started, upload: upload, check: check) { path, upright in
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
                    libraryChange: name.map { "\($0) added to \(PhotoShelf.label(started.category))" }, placed: saved)
            }
            if case .now = reply {
                Descriptor(taking: upload.descriptor).close()
                unlink(upload.path)
            }
            return reply
        case "DELETE":
            guard let category = query["category"], let name = query["name"] else {
                return .now(.error(400, "deleting needs ?category= and ?name="))
            }
            let hidden = query["hidden"] == "1" || query["hidden"] == "true"
            let thumbnails = self.thumbnails
            return changing(request) {
                do throws(WebError) {
                    let source = try shelf.file(category: category, name: name, hidden: hidden)
                    let trashed = try shelf.trash(category: category, name: name, hidden: hidden)
                    thumbnails.forget(source)
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
        let hidden = query["hidden"] == "1" || query["hidden"] == "true"
        let shelf = self.shelf
        let thumbnails = self.thumbnails
        // All of it on the worker, the lookup too: finding the file reads the library, which may be a share that
        // stopped answering.
        return later(request) {
            do throws(WebError) {
                return thumbnails.make(try shelf.file(category: category, name: name, hidden: hidden))
            } catch {
                return error.response
            }
        }
    }
}
