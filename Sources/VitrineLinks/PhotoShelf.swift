import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The library as the web remote changes it: photos listed, hidden (moved into the category's `.hidden` folder,
/// which the library skips like every dot folder), shown again, and deleted by moving them into the library's
/// `.trash` folder, never unlinked; uploads land here too. Names from a request are only ever looked up, never
/// joined blindly: a category must be one the library has, and a photo name must be a path inside it with no `..`
/// and no dot folder.
struct PhotoShelf: Sendable {
    struct Photo: Sendable, Equatable {
        var name: String
        var hidden: Bool
        var bytes: Int
    }

    static let hiddenFolder = ".hidden"
    static let trashFolder = ".trash"
    /// Nested folders followed when listing a category (the library's own limit).
    static let maximumDepth = 8

    let library: Library

    /// Removes the hidden files of uploads a crash or a power cut interrupted (`.upload-*.part` in a category's
    /// folder or the root, where uploads stream); returns their paths. Run when the remote starts, on its worker:
    /// no upload is under way then, and nothing else would ever remove them.
    func removeLeftoverUploads() -> [String] {
        let folders = [library.root] + ((try? library.categories()) ?? []).filter { !$0.isRoot }.map(\.path)
        var removed: [String] = []
        for folder in folders {
            for name in (try? Folder.hiddenFileNames(in: folder)) ?? []
            where name.hasPrefix(".upload-") && name.hasSuffix(".part") {
                if unlink("\(folder)/\(name)") == 0 { removed.append("\(folder)/\(name)") }
            }
        }
        return removed
    }

    /// The folder of the category named `name` ("" is the library root's own photos).
    func folder(of name: String) throws(WebError) -> String {
        let categories: [LibraryCategory]
        do {
            categories = try library.categories()
        } catch {
            throw WebError(500, "cannot read the library \(library.root): \(error)")
        }
        if name.isEmpty { return library.root }
        guard let category = categories.first(where: { $0.name == name }) else {
            throw WebError(404, "no category \(JSONText.quote(name)) in the library")
        }
        return category.path
    }

    /// Why a photo name from a request is not a file inside its category, or nil.
    static func nameProblem(_ name: String) -> String? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        if name.isEmpty || parts.contains(where: { $0.isEmpty || $0.hasPrefix(".") }) || name.contains("\0") {
            return "\(JSONText.quote(name)) is not a photo in a category (no empty part, .., or dot folder)"
        }
        return nil
    }

    /// The photo's file: in the category or, for a hidden one, in its `.hidden` folder.
    func file(category: String, name: String, hidden: Bool) throws(WebError) -> String {
        try file(category: category, in: try folder(of: category), name: name, hidden: hidden)
    }

    /// The same in the category's `folder`, already looked up.
    private func file(category: String, in folder: String, name: String, hidden: Bool) throws(WebError) -> String {
        if let problem = Self.nameProblem(name) { throw WebError(400, problem) }
        if category.isEmpty, !hidden, name.contains("/") {
            throw WebError(404, "\(JSONText.quote(name)) is in a category of its own, not the library's root")
        }
        let path = hidden ? "\(folder)/\(Self.hiddenFolder)/\(name)" : "\(folder)/\(name)"
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Library.isPhotoName(lastPart(name))
        else {
            throw WebError(
                404, "no \(hidden ? "hidden " : "")photo \(JSONText.quote(name)) in \(Self.label(category))")
        }
        return path
    }

    static func label(_ category: String) -> String {
        category.isEmpty ? "the library's root" : "category \(JSONText.quote(category))"
    }

    /// The photos of a category, shown ones first, each list in natural order.
    func photos(in category: String) throws(WebError) -> [Photo] {
        photos(of: LibraryCategory(name: category, path: try folder(of: category)))
    }

    /// The same for a category from the library's list (its folder known).
    func photos(of category: LibraryCategory) -> [Photo] {
        // The root category is the root's own files: its subfolders are categories of their own.
        let depth = category.name.isEmpty ? Self.maximumDepth : 0
        var photos: [Photo] = []
        walk(category.path, prefix: "", depth: depth, hidden: false, into: &photos)
        walk("\(category.path)/\(Self.hiddenFolder)", prefix: "", depth: depth, hidden: true, into: &photos)
        return photos
    }

    private func walk(_ folder: String, prefix: String, depth: Int, hidden: Bool, into photos: inout [Photo]) {
        guard let names = try? Library.photoNames(in: folder) else { return }
        // As the show counts slides: a rendition (NAME@WxH.jpg) beside its original is that photo, not another.
        let originals = Set(names.filter { Library.renditionParts(of: $0) == nil }.map(Self.stem))
        for name in names where !(Library.renditionParts(of: name).map { originals.contains($0.name) } ?? false) {
            var status = stat()
            let size = stat("\(folder)/\(name)", &status) == 0 ? Int(status.st_size) : 0
            photos.append(Photo(name: prefix + name, hidden: hidden, bytes: size))
        }
        guard depth < Self.maximumDepth, let folders = try? Folder.folderNames(in: folder) else { return }
        for sub in folders.sorted(by: NaturalOrder.less) {
            walk("\(folder)/\(sub)", prefix: "\(prefix)\(sub)/", depth: depth + 1, hidden: hidden, into: &photos)
        }
    }

    /// Moves a photo into the `.hidden` folder of its category (or back); its name stays, or gets a suffix
    /// when one is already there.
    func setHidden(_ hidden: Bool, category: String, name: String) throws(WebError) -> String {
        let folder = try folder(of: category)
        let source = try file(category: category, in: folder, name: name, hidden: !hidden)
        let target = hidden ? "\(folder)/\(Self.hiddenFolder)/\(name)" : "\(folder)/\(name)"
        let saved = try Self.move(source, toFolder: PathText.directory(of: target), name: lastPart(name))
        Self.moveRenditions(of: source, toFolder: PathText.directory(of: target))
        return saved
    }

    /// Moves a photo into `LIBRARY/.trash/CATEGORY/`, keeping its folders; returns its path there, relative to the
    /// library.
    func trash(category: String, name: String, hidden: Bool) throws(WebError) -> String {
        let source = try file(category: category, name: name, hidden: hidden)
        let relative = category.isEmpty ? name : "\(category)/\(name)"
        let target = "\(library.root)/\(Self.trashFolder)/\(relative)"
        let saved = try Self.move(source, toFolder: PathText.directory(of: target), name: lastPart(name))
        Self.moveRenditions(of: source, toFolder: PathText.directory(of: target))
        return String(PathText.directory(of: target).dropFirst(library.root.count + 1)) + "/" + saved
    }

    static func stem(_ name: String) -> String {
        name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
    }

    /// A photo's renditions beside it (NAME@WxH.jpg, which `vitrine renditions` writes) go where it went: hidden or
    /// trashed with it, or the show would go on playing the photo from its rendition. Their names are kept
    /// exactly (the `@` marks them) and nothing is replaced; one that cannot move stays.
    static func moveRenditions(of original: String, toFolder folder: String) {
        let from = PathText.directory(of: original)
        let stem = stem(original.split(separator: "/").last.map(String.init) ?? original)
        for name in (try? Library.photoNames(in: from)) ?? [] where Library.renditionParts(of: name)?.name == stem {
            let source = "\(from)/\(name)", target = "\(folder)/\(name)"
            if link(source, target) == 0 {
                unlink(source)
            } else if errno != EEXIST, !FileBytes.exists(target) {
                rename(source, target)
            }
        }
    }

    private func lastPart(_ name: String) -> String {
        name.split(separator: "/").last.map(String.init) ?? name
    }

    /// Moves `source` into `folder` under `name`, or `name (2)`... when taken, never over a file; returns the
    /// name used. A hard link is the no-clobber move where the filesystem has them; FAT and exFAT (SD cards,
    /// USB sticks) do not, and get a check then a rename (the web worker is the only mover).
    static func move(_ source: String, toFolder folder: String, name: String) throws(WebError) -> String {
        do throws(FileError) {
            try FileBytes.createDirectories(folder)
        } catch {
            throw WebError(error)
        }
        var refused: WebError?
        let chosen = UploadName.safe(name) { candidate in
            let target = "\(folder)/\(candidate)"
            if link(source, target) == 0 {
                unlink(source)
                return false
            }
            switch errno {
            case EEXIST: return true
            case EPERM, ENOTSUP, EOPNOTSUPP, EMLINK, ENOSYS:
                if FileBytes.exists(target) { return true }
                if rename(source, target) == 0 { return false }
                refused = WebError(500, "cannot move \(source) to \(target): \(String(cString: strerror(errno)))")
                return false
            default:
                refused = WebError(500, "cannot move \(source) to \(target): \(String(cString: strerror(errno)))")
                return false
            }
        }
        if let refused { throw refused }
        switch chosen {
        case .success(let saved):
            Self.syncFolder(folder)
            Self.syncFolder(PathText.directory(of: source))
            return saved
        case .failure(let refusal): throw WebError(409, "\(refusal)")
        }
    }

    static func syncFolder(_ folder: String) {
        // Best effort: the photo is whole under its name already; this makes the name itself survive a power cut,
        // and a folder that cannot be synced (a share that does not support it) has nothing better to offer.
        let folderFile = Descriptor(taking: open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        guard folderFile.number >= 0 else { return }
        _ = fsync(folderFile.number)
        folderFile.close()
    }
}
