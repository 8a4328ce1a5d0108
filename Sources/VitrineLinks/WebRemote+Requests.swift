import VitrineCore
import VitrineImage
import VitrineLibrary
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The web remote's requests: who may ask, the routes, and the answers (those that touch files or decode on the
/// web worker).
extension WebRemote {
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

    func begin(_ request: WebServer.Request) -> WebServer.Start {
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
    func uploadStarted(_ pending: WebServer.Pending, _ done: WebWorker.Done) {
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

    func handle(_ request: WebServer.Request) -> WebServer.Reply {
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
