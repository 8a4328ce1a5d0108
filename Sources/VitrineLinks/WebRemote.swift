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
    let server: WebServer
    let worker: WebWorker
    private let timer: MonotonicTimer
    let shelf: PhotoShelf
    var saver: UploadSaver
    let thumbnails: LibraryThumbnails
    private let tokenPath: String
    private(set) var token: String
    var pages: String
    /// The page's files as read, by name.
    var pageCache: [String: [UInt8]] = [:]
    let secure: Bool
    private let log: EventLog
    /// Uploads are refused above this, as the player would refuse them.
    var maxMegapixels: Double
    /// The player's budget: an upload's check decode is charged to it, so it never takes the show's memory.
    let budget: MemoryBudget
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
    var uploads: [WebServer.Pending: UploadSaver.Started] = [:]
    /// Pages asking for the slide while its picture is being made.
    var slideWaiting: [(pending: WebServer.Pending, output: String?)] = []
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
}
