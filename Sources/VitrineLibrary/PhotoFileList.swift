import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The photo files of one category while it is read: their paths inside the category packed in one buffer, then
/// sorted and grouped into slides (an original `NAME.jpg` and its renditions `NAME@WxH.jpg` share a name).
struct PhotoFileList {
    private struct Record {
        var start: UInt32
        var length: UInt16
        /// The slide name's length: the path without the extension and the rendition size.
        var nameLength: UInt16
        /// A rendition's size from its name; 0 by 0 for an original.
        var width: Int32
        var height: Int32
        /// A rendition made in the background, in the rendition cache rather than the library.
        var cached = false
    }

    private var text: [UInt8] = []
    private var records: [Record] = []

    var count: Int { records.count }

    /// One photo file: `prefix` is its folder inside the category (`2024/`, or empty), `fileName` its name.
    /// `cached` files are from the rendition cache: only renditions count there.
    mutating func add(prefix: [UInt8], fileName: String, cached: Bool = false) {
        let length = prefix.count + fileName.utf8.count
        // Longer than any path Linux opens (PATH_MAX is 4096), or past 4 GiB of names: not a photo of this world.
        guard length <= Int(UInt16.max), text.count + length < Int(UInt32.max) else { return }
        var record = Record(start: UInt32(text.count), length: UInt16(length), nameLength: 0, width: 0, height: 0)
        if let parts = Library.renditionParts(of: fileName), parts.size.width <= Int(Int32.max),
            parts.size.height <= Int(Int32.max)
        {
            record.nameLength = UInt16(prefix.count + parts.name.utf8.count)
            record.width = Int32(parts.size.width)
            record.height = Int32(parts.size.height)
            record.cached = cached
        } else if cached {
            return
        } else {
            let stem = fileName.utf8.lastIndex(of: UInt8(ascii: ".")).map { fileName.utf8[..<$0].count }
            record.nameLength = UInt16(prefix.count + (stem ?? fileName.utf8.count))
        }
        text.append(contentsOf: prefix)
        text.append(contentsOf: fileName.utf8)
        records.append(record)
    }

    private func name(_ record: Record) -> ArraySlice<UInt8> {
        text[Int(record.start)..<Int(record.start) + Int(record.nameLength)]
    }

    private func path(_ record: Record) -> ArraySlice<UInt8> {
        text[Int(record.start)..<Int(record.start) + Int(record.length)]
    }

    /// The slides, in natural order of their names. Two originals of one name (`a.jpg` and `a.jpeg`): the first in
    /// natural order of the file names counts. Renditions from the cache (in `cacheFolder`, mirroring the category)
    /// join a slide only when it has a file in the library and they are not older than its original.
    func catalog(category: LibraryCategory, cacheFolder: String? = nil) -> SlideCatalog {
        var order = records.indices.map { Int32($0) }
        order.sort { first, second in
            let (a, b) = (records[Int(first)], records[Int(second)])
            let (nameA, nameB) = (name(a), name(b))
            if !nameA.elementsEqual(nameB) { return NaturalOrder.less(bytes: nameA, nameB) }
            if (a.width == 0) != (b.width == 0) { return a.width == 0 }
            // A photo and a clip of one name are a Live Photo (IMG_1234.HEIC and IMG_1234.MOV): the photo is shown.
            let (clipA, clipB) = (isClip(a), isClip(b))
            if clipA != clipB { return clipB }
            return NaturalOrder.less(bytes: path(a), path(b))
        }
        var catalog = SlideCatalog(category: category.name, folder: category.path)
        catalog.reserveCapacity(entries: records.count, textBytes: text.count)
        var start = 0
        while start < order.count {
            let first = records[Int(order[start])]
            var end = start + 1
            while end < order.count, name(records[Int(order[end])]).elementsEqual(name(first)) { end += 1 }
            var group = order[start..<end].map { records[Int($0)] }
            start = end
            // A cached rendition of a photo that went, or one made before the photo was replaced, is passed over.
            guard group.contains(where: { !$0.cached }) else { continue }
            let original = group.first { $0.width == 0 }
            let file = { (record: Record) in
                "\(record.cached ? cacheFolder ?? category.path : category.path)/"
                    + String(decoding: path(record), as: UTF8.self)
            }
            if group.contains(where: \.cached) {
                let originalTime = original.map(file).flatMap(Self.modificationTime)
                group.removeAll { record in
                    record.cached && (Self.modificationTime(file(record)) ?? 0) < (originalTime ?? 0)
                }
            }
            let renditions = group.filter { $0.width > 0 }
            // Renditions named as `vitrine renditions` names them, beside their photo, pack into the catalog.
            if renditions.allSatisfy({ !$0.cached && isCanonicalRendition($0) }) {
                catalog.appendInNameOrder(
                    name: name(first),
                    tail: original.map {
                        text[Int($0.start) + Int($0.nameLength)..<Int($0.start) + Int($0.length)]
                    },
                    renditions: renditions.map { Size(width: Int($0.width), height: Int($0.height)) })
                continue
            }
            let slideName = String(decoding: name(first), as: UTF8.self)
            catalog.appendInNameOrder(
                Slide(
                    id: SlideID(category: category.name, name: slideName), original: original.map(file),
                    renditions: renditions.map {
                        Slide.Rendition(path: file($0), size: Size(width: Int($0.width), height: Int($0.height)))
                    }))
        }
        return catalog
    }

    private func isClip(_ record: Record) -> Bool {
        Library.isClipName(String(decoding: path(record).suffix(5), as: UTF8.self))
    }

    /// Whether a rendition's file name is exactly `NAME@WxH.jpg` (the name it can be found again by).
    private func isCanonicalRendition(_ record: Record) -> Bool {
        path(record).elementsEqual(name(record) + Array("@\(record.width)x\(record.height).jpg".utf8))
    }

    /// A file's modification time in nanoseconds; nil when it cannot be looked at.
    static func modificationTime(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }
}
