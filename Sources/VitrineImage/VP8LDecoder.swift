import VitrineCore

/// A lossless WebP (VP8L, RFC 9649) decoded row by row in bounded memory. libwebp keeps the whole picture as ARGB
/// while it decodes a lossless image (4 bytes a pixel, 48 MiB for a 12 MP photo, whatever size it is asked to
/// scale to), because a backward reference may copy from any pixel before. Here the entropy-coded pixels are kept
/// in a ring as long as the longest distance the format can express (2^20 pixels, 4 MiB) plus a few rows, and each
/// row is run through the inverse transforms as soon as it is complete.
package final class VP8LDecoder {
    package let width: Int
    package let height: Int
    package let hasAlpha: Bool
    private var reader: VP8LBitReader
    private let transforms: [VP8LTransform]
    private let image: VP8LImage
    private var row = 0

    /// The longest backward distance a VP8L bitstream can code (the largest distance prefix value, less the 120
    /// two-dimensional codes).
    static let longestDistance = (1 << 20) - 120
    static let longestCopy = 4096

    /// The bytes the decode holds for an image `width` pixels wide of `pixels` pixels, besides its prefix codes
    /// (bounded by `mostCodeEntries`): the ring, the predictor's row, the file buffer.
    static func workspaceBytes(width: Int, pixels: Int) -> Int {
        let ring = min(pixels, longestDistance + 3 * width + longestCopy)
        return Int.saturatingSum(ring.saturatingTimes(4), width.saturatingTimes(4 * 2), VP8LBitReader.bufferBytes)
    }

    /// Prefix codes are bounded to this many table entries (4 bytes each, 8 MiB), which the budget is charged: a
    /// 12 MP photo libwebp's encoder wrote with meta codes had 60,000 to 165,000.
    static let mostCodeEntries = 2 << 20

    /// Reads the header, transforms and prefix codes of the VP8L bitstream at `range` of the file `descriptor`.
    package init(descriptor: Int32, range: Range<Int>) throws(VP8LError) {
        var reader = VP8LBitReader(descriptor: descriptor, range: range)
        guard reader.read(8) == 0x2F else { throw VP8LError("no VP8L signature") }
        width = reader.read(14) + 1
        height = reader.read(14) + 1
        hasAlpha = reader.read(1) == 1
        guard reader.read(3) == 0 else { throw VP8LError("VP8L version other than 0") }
        var transforms: [VP8LTransform] = []
        var codedWidth = width
        var entries = 0
        while reader.read(1) == 1 {
            let kind = reader.read(2)
            guard !transforms.contains(where: { $0.kind == kind }) else { throw VP8LError("a transform given twice") }
            let transform = try VP8LTransform(
                kind: kind, width: codedWidth, height: height, reader: &reader, codeEntries: &entries)
            codedWidth = transform.codedWidth
            transforms.append(transform)
        }
        self.transforms = transforms
        let ring = min(
            codedWidth * height,
            (Self.longestDistance + 3 * codedWidth + Self.longestCopy + codedWidth - 1) / codedWidth * codedWidth)
        image = try VP8LImage(
            reader: &reader, width: codedWidth, height: height, topLevel: true, capacity: ring, codeEntries: &entries)
        self.reader = reader
        guard !reader.overran else { throw VP8LError("the file ends inside the header (truncated)") }
    }

    /// What the bitstream uses, for tests that a fixture reaches a part of the format: the transforms in order,
    /// whether the picture has meta prefix codes, its colour cache bits.
    var features: (transforms: [Int], metaCodes: Bool, cacheBits: Int) {
        (transforms.map(\.kind), image.hasMetaCodes, image.colorCacheBits)
    }

    /// Decodes the next row into `output`, `width` pixels of ARGB (in memory B, G, R, A: Vitrine's BGRA).
    package func nextRow(into output: UnsafeMutablePointer<UInt32>) throws(VP8LError) {
        let y = row
        try nextCodedRow(into: output)
        finish(row: y, pixels: output)
    }

    /// Entropy-decodes the next row into `output` as coded (`codedWidth` pixels, before the inverse transforms);
    /// `finish` then makes it the picture's row. The two may run on different threads, each in row order.
    func nextCodedRow(into output: UnsafeMutablePointer<UInt32>) throws(VP8LError) {
        guard row < height else { throw VP8LError("no row \(row) in a picture \(height) high") }
        try image.decode(until: (row + 1) * image.width, reader: &reader)
        if reader.overran { throw VP8LError("the file ends before the picture does (truncated)") }
        output.update(from: image.row(row), count: image.width)
        row += 1
    }

    /// Runs coded row `row` (in `pixels`, room for `width`) through the inverse transforms, in place.
    func finish(row: Int, pixels: UnsafeMutablePointer<UInt32>) {
        for transform in transforms.reversed() {
            transform.invert(row: row, input: UnsafePointer(pixels), output: pixels)
        }
    }
}

/// One entropy-coded image (RFC 9649, 5): the picture itself (with meta prefix codes) or one of the small images a
/// transform or the meta codes carry. Pixels go into a ring of `capacity` pixels (a whole number of rows, so every
/// row is in one piece), each into the colour cache as it is made.
final class VP8LImage {
    let width: Int
    let height: Int
    let pixels: UnsafeMutablePointer<UInt32>
    private let capacity: Int
    /// Every prefix code's table, one after another; `starts` says where each group's five begin.
    private let tables: UnsafeMutablePointer<UInt32>
    private let starts: UnsafeMutablePointer<Int>
    private let metaBits: Int
    private let metaWidth: Int
    private let meta: UnsafeMutablePointer<UInt16>?
    private let cacheBits: Int
    private let cache: UnsafeMutablePointer<UInt32>
    private(set) var position = 0

    init(
        reader: inout VP8LBitReader, width: Int, height: Int, topLevel: Bool, capacity: Int, codeEntries: inout Int
    ) throws(VP8LError) {
        self.width = width
        self.height = height
        self.capacity = capacity
        var cacheBits = 0
        if reader.read(1) == 1 {
            cacheBits = reader.read(4)
            guard (1...11).contains(cacheBits) else { throw VP8LError("a colour cache of \(cacheBits) bits") }
        }
        self.cacheBits = cacheBits
        var groupCount = 1
        var metaIndices: [UInt16] = []
        if topLevel && reader.read(1) == 1 {
            metaBits = reader.read(3) + 2
            metaWidth = (width + (1 << metaBits) - 1) >> metaBits
            let metaHeight = (height + (1 << metaBits) - 1) >> metaBits
            let codes = try VP8LImage.whole(
                reader: &reader, width: metaWidth, height: metaHeight, codeEntries: &codeEntries)
            metaIndices = codes.map { UInt16(truncatingIfNeeded: $0 >> 8) }
            groupCount = Int(metaIndices.max() ?? 0) + 1
        } else {
            metaBits = 0
            metaWidth = 0
        }
        let alphabets = [256 + 24 + (cacheBits > 0 ? 1 << cacheBits : 0), 256, 256, 256, 40]
        var groups: [VP8LPrefixCode] = []
        groups.reserveCapacity(groupCount * 5)
        for _ in 0..<groupCount {
            for alphabet in alphabets {
                let code = try VP8LPrefixCode.read(&reader, alphabet: alphabet)
                codeEntries += code.entryCount
                guard codeEntries <= VP8LDecoder.mostCodeEntries else {
                    throw VP8LError("prefix codes beyond \(VP8LDecoder.mostCodeEntries) entries")
                }
                groups.append(code)
            }
            guard !reader.overran else { throw VP8LError("the file ends inside the prefix codes (truncated)") }
        }
        // Nothing is allocated before the last throw: an initializer that throws never reaches `deinit`.
        if metaIndices.isEmpty {
            meta = nil
        } else {
            let indices = UnsafeMutablePointer<UInt16>.allocate(capacity: metaIndices.count)
            indices.initialize(from: metaIndices, count: metaIndices.count)
            meta = indices
        }
        tables = .allocate(capacity: max(1, groups.reduce(0) { $0 + $1.entryCount }))
        starts = .allocate(capacity: groups.count)
        var offset = 0
        for (index, code) in groups.enumerated() {
            starts[index] = offset
            code.copy(into: tables + offset)
            offset += code.entryCount
        }
        pixels = .allocate(capacity: max(1, capacity))
        cache = .allocate(capacity: 1 << cacheBits)
        cache.initialize(repeating: 0, count: 1 << cacheBits)
    }

    deinit {
        pixels.deallocate()
        cache.deallocate()
        tables.deallocate()
        starts.deallocate()
        meta?.deallocate()
    }

    var hasMetaCodes: Bool { meta != nil }
    var colorCacheBits: Int { cacheBits }

    /// A small image decoded whole (a transform's or the meta codes' own).
    static func whole(reader: inout VP8LBitReader, width: Int, height: Int, codeEntries: inout Int)
        throws(VP8LError) -> [UInt32]
    {
        let image = try VP8LImage(
            reader: &reader, width: width, height: height, topLevel: false, capacity: width * height,
            codeEntries: &codeEntries)
        try image.decode(until: width * height, reader: &reader)
        return Array(UnsafeBufferPointer(start: image.pixels, count: width * height))
    }

    /// Row `y`, once decoded (and while the ring still holds it).
    func row(_ y: Int) -> UnsafeMutablePointer<UInt32> { pixels + (y * width) % capacity }

    /// Decodes pixels until at least `target` are made (a backward reference may make a few more).
    func decode(until target: Int, reader: inout VP8LBitReader) throws(VP8LError) {
        let total = width * height
        let end = min(target, total)
        var position = self.position
        var slot = position % capacity
        let cacheShift = UInt32(32 - cacheBits)
        let hasCache = cacheBits > 0
        @inline(__always) func emit(_ argb: UInt32) {
            pixels[slot] = argb
            slot += 1
            if slot == capacity { slot = 0 }
            position += 1
            if hasCache { cache[Int((argb &* 0x1E35_A7BD) >> cacheShift)] = argb }
        }
        var group = tables
        var red = tables
        var blue = tables
        var alpha = tables
        var distances = tables
        @inline(__always) func select(_ index: Int) {
            let first = index * 5
            (group, red, blue) = (tables + starts[first], tables + starts[first + 1], tables + starts[first + 2])
            (alpha, distances) = (tables + starts[first + 3], tables + starts[first + 4])
        }
        select(0)
        while position < end {
            if let meta {
                let (y, x) = position.quotientAndRemainder(dividingBy: width)
                select(Int(meta[(y >> metaBits) * metaWidth + (x >> metaBits)]))
            }
            let green = VP8LPrefixCode.decode(group, &reader)
            if green < 256 {
                let red = VP8LPrefixCode.decode(red, &reader)
                let blue = VP8LPrefixCode.decode(blue, &reader)
                let alpha = VP8LPrefixCode.decode(alpha, &reader)
                emit(UInt32(alpha) << 24 | UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue))
            } else if green < 280 {
                let length = Self.prefixValue(green - 256, &reader)
                let code = Self.prefixValue(VP8LPrefixCode.decode(distances, &reader), &reader)
                let distance = Self.distance(code, width: width)
                // The ring holds every distance the format can code, and the row in use besides.
                guard distance <= position, distance <= capacity else {
                    throw VP8LError("a backward reference \(distance) pixels back at pixel \(position)")
                }
                guard length <= total - position else { throw VP8LError("a copy past the end of the picture") }
                var source = slot - distance
                if source < 0 { source += capacity }
                for _ in 0..<length {
                    emit(pixels[source])
                    source += 1
                    if source == capacity { source = 0 }
                }
            } else {
                let index = green - 280
                guard hasCache, index < 1 << cacheBits else { throw VP8LError("a colour cache symbol out of range") }
                emit(cache[index])
            }
            if reader.overran { break }
        }
        self.position = position
    }

    /// A length or distance prefix code's value (RFC 9649, 5.2.2).
    @inline(__always) static func prefixValue(_ symbol: Int, _ reader: inout VP8LBitReader) -> Int {
        if symbol < 4 { return symbol + 1 }
        let extra = (symbol - 2) >> 1
        return ((2 + (symbol & 1)) << extra) + reader.read(extra) + 1
    }

    /// The first 120 distance codes name nearby pixels in two dimensions: (rows up << 4) | (8 - columns left).
    static let nearby: [UInt8] = [
        0x18, 0x07, 0x17, 0x19, 0x28, 0x06, 0x27, 0x29, 0x16, 0x1A, 0x26, 0x2A, 0x38, 0x05, 0x37, 0x39, 0x15, 0x1B,
        0x36, 0x3A, 0x25, 0x2B, 0x48, 0x04, 0x47, 0x49, 0x14, 0x1C, 0x35, 0x3B, 0x46, 0x4A, 0x24, 0x2C, 0x58, 0x45,
        0x4B, 0x34, 0x3C, 0x03, 0x57, 0x59, 0x13, 0x1D, 0x56, 0x5A, 0x23, 0x2D, 0x44, 0x4C, 0x55, 0x5B, 0x33, 0x3D,
        0x68, 0x02, 0x67, 0x69, 0x12, 0x1E, 0x66, 0x6A, 0x22, 0x2E, 0x54, 0x5C, 0x43, 0x4D, 0x65, 0x6B, 0x32, 0x3E,
        0x78, 0x01, 0x77, 0x79, 0x53, 0x5D, 0x11, 0x1F, 0x64, 0x6C, 0x42, 0x4E, 0x76, 0x7A, 0x21, 0x2F, 0x75, 0x7B,
        0x31, 0x3F, 0x63, 0x6D, 0x52, 0x5E, 0x00, 0x74, 0x7C, 0x41, 0x4F, 0x10, 0x20, 0x62, 0x6E, 0x30, 0x73, 0x7D,
        0x51, 0x5F, 0x40, 0x72, 0x7E, 0x61, 0x6F, 0x50, 0x71, 0x7F, 0x60, 0x70,
    ]

    @inline(__always) static func distance(_ code: Int, width: Int) -> Int {
        if code > 120 { return code - 120 }
        let packed = Int(nearby[code - 1])
        return max(1, (packed >> 4) * width + 8 - (packed & 0xF))
    }
}
