import VitrineCore

/// The item structure of a HEIF or AVIF file, read from its `meta` box by Vitrine itself (ISO/IEC 23008-12 and
/// 14496-12): the items and which are hidden, the primary item, the references between items (a grid's tiles, a
/// thumbnail's master), each item's properties in association order, and where each item's data is. libheif 1.15
/// reads the same boxes but gives no way to reach a grid's tiles, which a bounded decode needs, nor to tell which
/// item it chose to show.
public struct HEIFContainer: Equatable, Sendable {
    public struct Item: Equatable, Sendable {
        public var id: UInt32
        /// `hvc1`, `av01`, `grid`, `iden`, `Exif`, `mime`, `jpeg`, ...
        public var type: String
        public var hidden: Bool
        /// The file offset of the `infe` byte that holds the hidden flag.
        public var flagsOffset: Int
    }

    public struct Reference: Equatable, Sendable {
        /// `dimg` (a derived image's inputs), `thmb` (a thumbnail of), `auxl`, `cdsc`, ...
        public var type: String
        public var from: UInt32
        public var to: [UInt32]
    }

    public enum Property: Equatable, Sendable {
        case ispe(Size)
        /// Anti-clockwise turns by 90 degrees.
        case irot(Int)
        /// The mirroring axis bit: libheif swaps top and bottom for 0, left and right for 1.
        case imir(Int)
        case clap(CleanAperture)
        case nclx(primaries: Int, transfer: Int, matrix: Int, fullRange: Bool)
        /// `hvcC` or `av1C`: the chroma format (0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4) and luma bit depth.
        case codec(String, chroma: Int, bitDepth: Int)
        case other(String)
    }

    /// A `clap` box's fractions: the size of the clean aperture and its centre's offset from the image's centre.
    public struct CleanAperture: Equatable, Sendable {
        public var width: Fraction
        public var height: Fraction
        public var horizontalOffset: Fraction
        public var verticalOffset: Fraction
    }

    public struct Fraction: Equatable, Sendable {
        public var numerator: Int
        public var denominator: Int
    }

    public struct Location: Equatable, Sendable {
        /// 0: in the file (offsets from its start), 1: in the `idat` box.
        public var constructionMethod: Int
        public var extents: [Extent]
    }

    public struct Extent: Equatable, Sendable {
        public var offset: Int
        public var length: Int
    }

    public var primary: UInt32
    public var items: [UInt32: Item]
    public var references: [Reference]
    public var properties: [Property]
    /// Each item's properties as indices into `properties`, in the order the `ipma` box lists them.
    public var associations: [UInt32: [Int]]
    public var locations: [UInt32: Location]
    /// Where the `idat` box's payload is in the file.
    public var itemData: Range<Int>?

    /// Bounds against crafted files: the meta box of a 200 MP phone photo with 768 tiles is 39 KB.
    static let largestMetaBox = 16 << 20
    static let mostBoxes = 1 << 16

    /// Items `item` refers to by `type` (a grid's tiles in their order, for `dimg`).
    public func referenced(from item: UInt32, type: String) -> [UInt32] {
        references.first { $0.from == item && $0.type == type }?.to ?? []
    }

    public func properties(of item: UInt32) -> [Property] {
        (associations[item] ?? []).compactMap { properties.indices.contains($0) ? properties[$0] : nil }
    }

    /// Where item `item`'s data is in the file, extent by extent, each checked to lie inside the item data box
    /// when it is built there; nil when it has no location. Throws for data built any other way (from other
    /// items) and for an empty or impossible extent.
    func fileRanges(of item: UInt32, fail: BoxFailure) throws(ImageError) -> [Range<Int>]? {
        guard let location = locations[item], !location.extents.isEmpty else { return nil }
        var ranges: [Range<Int>] = []
        for extent in location.extents {
            var start = extent.offset
            switch location.constructionMethod {
            case 0: break
            case 1:
                guard let data = itemData, extent.length <= data.count, extent.offset <= data.count - extent.length
                else { throw fail("item \(item)'s data lies outside the item data box") }
                start = data.lowerBound + extent.offset
            default: throw fail("item \(item) is built by method \(location.constructionMethod)")
            }
            guard extent.length > 0, start <= Int.max - extent.length else {
                throw fail("item \(item) has an empty data extent")
            }
            ranges.append(start..<start + extent.length)
        }
        return ranges
    }

    public func size(of item: UInt32) -> Size? {
        for case .ispe(let size) in properties(of: item) { return size }
        return nil
    }

    /// Reads the container through `read(offset, count)`, which returns at most `count` bytes (fewer at the end).
    public static func parse(
        file: String, format: ImageFormat, read: (Int, Int) throws(ImageError) -> [UInt8]
    ) throws(ImageError) -> HEIFContainer {
        let fail = BoxFailure(file: file, format: format)
        var position = 0
        for _ in 0..<mostBoxes {
            let head = try read(position, 16)
            guard head.count >= 8 else { break }
            var box = BoxReader(bytes: head, fail: fail)
            var size = try box.integer(4)
            let type = try box.fourCC()
            var headerBytes = 8
            if size == 1 {
                size = try box.integer(8)
                headerBytes = 16
            }
            if size == 0 { size = Int.max - position }
            guard size >= headerBytes else { throw fail("box '\(type)' at byte \(position) has size \(size)") }
            if type == "meta" {
                guard size <= largestMetaBox else { throw fail("meta box of \(size) bytes") }
                let bytes = try read(position, size)
                guard bytes.count == size else { throw fail("the meta box is truncated") }
                return try parseMeta(bytes, offset: position, headerBytes: headerBytes, fail: fail)
            }
            guard position <= Int.max - size else { break }
            position += size
        }
        throw fail("no meta box")
    }

    private static func parseMeta(
        _ bytes: [UInt8], offset: Int, headerBytes: Int, fail: BoxFailure
    ) throws(ImageError) -> HEIFContainer {
        var container = HEIFContainer(
            primary: 0, items: [:], references: [], properties: [], associations: [:], locations: [:], itemData: nil)
        var primary: UInt32?
        // The meta box is a full box: four bytes of version and flags before its children.
        for child in try children(bytes, from: headerBytes + 4, to: bytes.count, fail: fail) {
            var box = BoxReader(bytes: bytes, position: child.payload, end: child.end, fail: fail)
            switch child.type {
            case "pitm":
                let version = try box.integer(1)
                try box.skip(3)
                primary = UInt32(try box.integer(version == 0 ? 2 : 4))
            case "iinf":
                let version = try box.integer(1)
                try box.skip(3)
                _ = try box.integer(version == 0 ? 2 : 4)
                for entry in try children(bytes, from: box.position, to: child.end, fail: fail)
                where entry.type == "infe" {
                    let item = try parseItem(bytes, entry, fileOffset: offset, fail: fail)
                    container.items[item.id] = item
                }
            case "iref":
                let version = try box.integer(1)
                try box.skip(3)
                for reference in try children(bytes, from: box.position, to: child.end, fail: fail) {
                    var entry = BoxReader(bytes: bytes, position: reference.payload, end: reference.end, fail: fail)
                    let idBytes = version == 0 ? 2 : 4
                    let from = UInt32(try entry.integer(idBytes))
                    let count = try entry.integer(2)
                    var to: [UInt32] = []
                    for _ in 0..<count { to.append(UInt32(try entry.integer(idBytes))) }
                    container.references.append(Reference(type: reference.type, from: from, to: to))
                }
            case "iprp":
                for part in try children(bytes, from: child.payload, to: child.end, fail: fail) {
                    if part.type == "ipco" {
                        for property in try children(bytes, from: part.payload, to: part.end, fail: fail) {
                            container.properties.append(try parseProperty(bytes, property, fail: fail))
                        }
                    } else if part.type == "ipma" {
                        try parseAssociations(bytes, part, into: &container.associations, fail: fail)
                    }
                }
            case "iloc":
                container.locations = try parseLocations(&box, fail: fail)
            case "idat":
                container.itemData = offset + child.payload..<offset + child.end
            default:
                break
            }
        }
        guard let primary else { throw fail("no primary item (pitm box)") }
        guard container.items[primary] != nil else { throw fail("the primary item \(primary) is not listed") }
        container.primary = primary
        return container
    }

    private struct Child {
        var type: String
        var payload: Int
        var end: Int
    }

    private static func children(
        _ bytes: [UInt8], from start: Int, to end: Int, fail: BoxFailure
    ) throws(ImageError) -> [Child] {
        var found: [Child] = []
        var position = start
        while position + 8 <= end {
            guard found.count < mostBoxes else { throw fail("more than \(mostBoxes) boxes") }
            var box = BoxReader(bytes: bytes, position: position, end: end, fail: fail)
            var size = try box.integer(4)
            let type = try box.fourCC()
            if size == 1 { size = try box.integer(8) }
            if size == 0 { size = end - position }
            guard size >= box.position - position, size <= end - position else {
                throw fail("box '\(type)' at byte \(position) of the meta box has size \(size)")
            }
            found.append(Child(type: type, payload: box.position, end: position + size))
            position += size
        }
        return found
    }

    private static func parseItem(
        _ bytes: [UInt8], _ entry: Child, fileOffset: Int, fail: BoxFailure
    ) throws(ImageError) -> Item {
        var box = BoxReader(bytes: bytes, position: entry.payload, end: entry.end, fail: fail)
        let version = try box.integer(1)
        guard version >= 2 else { throw fail("item info entry version \(version) (only 2 and 3 name an item type)") }
        let flags = try box.integer(3)
        let id = UInt32(try box.integer(version == 2 ? 2 : 4))
        try box.skip(2)
        let type = try box.fourCC()
        return Item(id: id, type: type, hidden: flags & 1 != 0, flagsOffset: fileOffset + entry.payload + 3)
    }

    private static func parseProperty(
        _ bytes: [UInt8], _ property: Child, fail: BoxFailure
    ) throws(ImageError) -> Property {
        var box = BoxReader(bytes: bytes, position: property.payload, end: property.end, fail: fail)
        switch property.type {
        case "ispe":
            try box.skip(4)
            return .ispe(Size(width: try box.integer(4), height: try box.integer(4)))
        case "irot": return .irot(try box.integer(1) & 3)
        case "imir": return .imir(try box.integer(1) & 1)
        case "clap":
            var values: [Int] = []
            for index in 0..<8 {
                let value = try box.integer(4)
                // Offsets are signed; sizes and denominators are not.
                values.append(index == 4 || index == 6 ? Int(Int32(truncatingIfNeeded: value)) : value)
            }
            return .clap(
                CleanAperture(
                    width: Fraction(numerator: values[0], denominator: values[1]),
                    height: Fraction(numerator: values[2], denominator: values[3]),
                    horizontalOffset: Fraction(numerator: values[4], denominator: values[5]),
                    verticalOffset: Fraction(numerator: values[6], denominator: values[7])))
        case "colr":
            let kind = try box.fourCC()
            if kind == "nclx" {
                let primaries = try box.integer(2)
                let transfer = try box.integer(2)
                let matrix = try box.integer(2)
                return .nclx(
                    primaries: primaries, transfer: transfer, matrix: matrix, fullRange: try box.integer(1) & 0x80 != 0)
            }
            return .other("colr \(kind)")
        case "hvcC":
            try box.skip(16)
            let chroma = try box.integer(1) & 3
            return .codec("hvcC", chroma: chroma, bitDepth: (try box.integer(1) & 7) + 8)
        case "av1C":
            try box.skip(2)
            let bits = try box.integer(1)
            let depth = bits & 0x40 == 0 ? 8 : bits & 0x20 == 0 ? 10 : 12
            // monochrome, then subsampling x and y.
            let chroma = bits & 0x10 != 0 ? 0 : bits & 0x0C == 0x0C ? 1 : bits & 0x08 != 0 ? 2 : 3
            return .codec("av1C", chroma: chroma, bitDepth: depth)
        default: return .other(property.type)
        }
    }

    private static func parseAssociations(
        _ bytes: [UInt8], _ part: Child, into associations: inout [UInt32: [Int]], fail: BoxFailure
    ) throws(ImageError) {
        var box = BoxReader(bytes: bytes, position: part.payload, end: part.end, fail: fail)
        let version = try box.integer(1)
        let flags = try box.integer(3)
        let count = try box.integer(4)
        for _ in 0..<count {
            let item = UInt32(try box.integer(version < 1 ? 2 : 4))
            let associated = try box.integer(1)
            var indices = associations[item] ?? []
            for _ in 0..<associated {
                // The top bit says "essential"; the rest is a 1-based index into ipco, 0 meaning none.
                let index = flags & 1 != 0 ? try box.integer(2) & 0x7FFF : try box.integer(1) & 0x7F
                if index > 0 { indices.append(index - 1) }
            }
            associations[item] = indices
        }
    }

    private static func parseLocations(
        _ box: inout BoxReader, fail: BoxFailure
    ) throws(ImageError) -> [UInt32: Location] {
        let version = try box.integer(1)
        guard version <= 2 else { throw fail("item location box version \(version)") }
        try box.skip(3)
        let sizes = try box.integer(2)
        let (offsetSize, lengthSize) = (sizes >> 12 & 15, sizes >> 8 & 15)
        let (baseSize, indexSize) = (sizes >> 4 & 15, version == 0 ? 0 : sizes & 15)
        for size in [offsetSize, lengthSize, baseSize, indexSize] where ![0, 4, 8].contains(size) {
            throw fail("item location field of \(size) bytes")
        }
        let count = try box.integer(version < 2 ? 2 : 4)
        var locations: [UInt32: Location] = [:]
        var totalExtents = 0
        for _ in 0..<count {
            let item = UInt32(try box.integer(version < 2 ? 2 : 4))
            let method = version == 0 ? 0 : try box.integer(2) & 15
            try box.skip(2)
            let base = try box.integer(baseSize)
            let extentCount = try box.integer(2)
            // Extents with no fields take no bytes: bound them, or a crafted box spins through billions.
            totalExtents += extentCount
            guard totalExtents <= 1 << 20, offsetSize + lengthSize + indexSize > 0 || extentCount <= 1 else {
                throw fail("item location box with \(totalExtents) extents")
            }
            var extents: [Extent] = []
            for _ in 0..<extentCount {
                try box.skip(indexSize)
                let offset = try box.integer(offsetSize)
                let length = try box.integer(lengthSize)
                guard base <= Int.max / 2, offset <= Int.max / 2 else {
                    throw fail("item \(item) lies beyond any file")
                }
                extents.append(Extent(offset: base + offset, length: length))
            }
            locations[item] = Location(constructionMethod: method, extents: extents)
        }
        return locations
    }
}

/// Makes the error for a box that breaks the format's rules, naming the file.
struct BoxFailure {
    var file: String
    var format: ImageFormat

    func callAsFunction(_ what: String) -> ImageError { ImageError(file: file, reason: .damaged(format, what)) }
}

/// Big-endian fields of a box, each read checked against the box's end.
struct BoxReader {
    let bytes: [UInt8]
    var position: Int
    let end: Int
    let fail: BoxFailure

    init(bytes: [UInt8], position: Int = 0, end: Int? = nil, fail: BoxFailure) {
        self.bytes = bytes
        self.position = position
        self.end = min(end ?? bytes.count, bytes.count)
        self.fail = fail
    }

    mutating func integer(_ count: Int) throws(ImageError) -> Int {
        guard count <= end - position else { throw fail("a box ends inside its fields") }
        var value = 0
        for byte in bytes[position..<position + count] {
            guard value <= Int.max >> 8 else { throw fail("a box field beyond any file") }
            value = value << 8 | Int(byte)
        }
        position += count
        return value
    }

    mutating func fourCC() throws(ImageError) -> String {
        guard end - position >= 4 else { throw fail("a box ends inside its fields") }
        defer { position += 4 }
        return String(decoding: bytes[position..<position + 4], as: UTF8.self)
    }

    mutating func skip(_ count: Int) throws(ImageError) {
        guard count <= end - position else { throw fail("a box ends inside its fields") }
        position += count
    }
}
