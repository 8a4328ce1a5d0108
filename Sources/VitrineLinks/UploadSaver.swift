import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An upload from the page, from its headers to its file in the category. The body is streamed into a hidden
/// temporary file in the category itself (the library and its watcher skip dot files, and the final rename stays
/// on one filesystem); the photo appears under its name only once its content is known to be a photo and it is on
/// the disk, so the player never sees half a file and a failed upload leaves nothing behind.
struct UploadSaver: Sendable {
    struct Started: Sendable {
        /// The temporary file, open for writing. A bare number because C holds it while the body streams (the
        /// server's writer thread writes into it); `finish` owns it again and closes it, and so does whoever drops
        /// an upload that never started streaming.
        var descriptor: Int32
        var temporary: String
        var folder: String
        var category: String
        var name: String
        var limit: UInt64
        /// The limit is the room left above the free-space floor, not the upload limit: past it is 507.
        var limitIsSpace: Bool
    }

    let shelf: PhotoShelf
    let limitBytes: UInt64
    let floorBytes: UInt64

    /// What the headers alone refuse, with nothing read from the library: an announced size over the limit (answered
    /// at once, the body unread, so a 2 GiB upload costs nothing).
    func refusalAtHeaders(offeredName: String, contentLength: UInt64?) -> WebError? {
        guard let contentLength, contentLength > limitBytes else { return nil }
        return WebError(
            413,
            "\(JSONText.quote(offeredName)) is \(Self.mib(contentLength)); the frame takes photos of "
                + "up to \(Self.mib(limitBytes)) (web.uploadLimitMiB)")
    }

    /// Checks what the headers tell (category, name, announced size, free space) and opens the temporary file.
    func start(category: String, offeredName: String, contentLength: UInt64?) throws(WebError) -> Started {
        let folder = try shelf.folder(of: category)
        let name: String
        switch UploadName.safe(offeredName, taken: { FileBytes.exists("\(folder)/\($0)") }) {
        case .success(let safe): name = safe
        case .failure(let refusal):
            throw WebError(refusal == .noFreeName(offeredName) ? 409 : 400, "\(refusal)")
        }
        if let refusal = refusalAtHeaders(offeredName: offeredName, contentLength: contentLength) { throw refusal }
        let free: UInt64
        do {
            free = UInt64(try FileSystemSpace.of(folder).free)
        } catch {
            throw WebError(500, "cannot read the free space of \(folder): \(error.reason)")
        }
        let room = free > floorBytes ? free - floorBytes : 0
        if (contentLength ?? 1) > room {
            throw WebError(
                507,
                "the frame's disk has \(Self.mib(free)) free and keeps \(Self.mib(floorBytes)) "
                    + "(web.freeSpaceFloorMiB): no room for \(JSONText.quote(offeredName))")
        }
        let temporary = "\(folder)/.upload-\((try? AccessToken.randomHex(bytes: 6)) ?? "\(getpid())").part"
        let file = Descriptor(taking: open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644))
        guard file.number >= 0 else {
            throw WebError(500, "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        return Started(
            descriptor: file.release(), temporary: temporary, folder: folder, category: category, name: name,
            limit: min(limitBytes, room), limitIsSpace: room < limitBytes)
    }

    /// What an upload is held to: the player's limits.
    struct Check: Sendable {
        var budget: MemoryBudget
        var maxMegapixels: Double
    }

    /// On the web worker: the body is all in the temporary file. Its content must be a photo the player shows
    /// (a name's extension that lies is corrected: a PNG sent as `x.jpg` is kept as `x.png`); it is synced, then
    /// given its name without replacing anything.
    /// `saved` is told the photo's path and upright size once it is in the library.
    static func finish(
        _ started: Started, upload: WebServer.Upload,
        check: Check = Check(budget: MemoryBudget(limit: 64 << 20), maxMegapixels: 100),
        saved tell: (String, Size) -> Void = { _, _ in }
    ) -> WebServer.Response {
        var kept = false
        defer { if !kept { unlink(upload.path) } }
        let file = Descriptor(taking: upload.descriptor)
        let synced = fsync(file.number)
        let syncError = errno
        // Synced (or refused for it): what close says adds nothing.
        file.close()
        guard synced == 0 else {
            return .error(500, "cannot sync \(upload.path): \(String(cString: strerror(syncError)))")
        }
        guard upload.bytes > 0 else { return .error(400, "\(JSONText.quote(started.name)) is empty") }
        let header: ImageHeader
        do throws(ImageError) {
            let renderer = FrameRenderer(budget: check.budget)
            header = try renderer.header(of: upload.path)
            // Decoded small, as the player will decode it: a photo it would skip (too many pixels, truncated,
            // damaged) is refused now with the reason, not accepted and then never shown. One that does not fit
            // the budget at this moment is the player's to shrink (renditions), not the phone's problem.
            do throws(ImageError) {
                _ = try renderer.render(
                    upload.path,
                    options: RenderOptions(canvas: Size(width: 64, height: 64), maxMegapixels: check.maxMegapixels),
                    header: header)
            } catch {
                if case .overBudget = error.reason {} else { throw error }
            }
        } catch {
            return .error(415, "\(JSONText.quote(started.name)) is not a photo the frame can show: \(error.reasonText)")
        }
        let name = renamed(started.name, for: header.format)
        let saved: String
        do throws(WebError) {
            saved = try PhotoShelf.move(upload.path, toFolder: started.folder, name: name)
        } catch {
            return error.response
        }
        kept = true
        tell("\(started.folder)/\(saved)", header.displayedSize)
        return .json(
            201,
            "{\"category\":\(JSONText.quote(started.category)),\"name\":\(JSONText.quote(saved)),"
                + "\"bytes\":\(upload.bytes)}")
    }

    /// `name` with the extension its content calls for, when the one it has names another format.
    static func renamed(_ name: String, for format: ImageFormat) -> String {
        guard let dot = name.lastIndex(of: ".") else { return name }
        let suffix = name[name.index(after: dot)...].lowercased()
        let fitting: [String]
        switch format {
        case .jpeg: fitting = ["jpg", "jpeg"]
        case .png: fitting = ["png"]
        case .webp: fitting = ["webp"]
        case .heif: fitting = ["heic", "heif", "hif"]
        case .avif: fitting = ["avif"]
        case .clip: fitting = ["mp4", "mov", "m4v", "mkv", "webm"]
        }
        return fitting.contains(suffix) ? name : "\(name[..<dot]).\(fitting[0])"
    }

    static func mib(_ bytes: UInt64) -> String {
        bytes >= 1 << 30 ? "\(bytes >> 30) GiB" : bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }
}
