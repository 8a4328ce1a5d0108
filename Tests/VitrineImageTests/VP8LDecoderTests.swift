import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineImage

/// Vitrine's row-by-row lossless WebP decoder against libwebp's own decode of the same file, pixel for pixel, for
/// pictures that make libwebp's encoder use each part of the format: the predictor and colour transforms
/// (gradients), subtract green, colour indexing with 1, 2, 4 and 8 bits an index (palettes of 2, 4, 16 and 200
/// colours), the colour cache and backward references (noise and repeats), meta prefix codes (a large varied
/// picture at the most effort), alpha, odd sizes, and a picture larger than the ring, whose copies reach back
/// further than a naive window would hold.
@Suite struct VP8LDecoderTests {
    /// Decodes `bytes` (a lossless WebP) with `VP8LDecoder` as RGBA.
    func decode(_ bytes: [UInt8]) throws -> (rgba: [UInt8], size: Size, features: VP8LFeatures) {
        let folder = try TemporaryFolder()
        let path = try folder.write("photo.webp", bytes)
        let file = try PhotoFile(path: path)
        let header = try file.header()
        guard case .webp(let webp) = header.details, let range = webp.losslessData else {
            throw VP8LError("not read as a still lossless WebP")
        }
        let decoder = try VP8LDecoder(descriptor: file.descriptor, range: range)
        let size = Size(width: decoder.width, height: decoder.height)
        let features = decoder.features
        var rgba = [UInt8](repeating: 0, count: size.pixelCount * 4)
        let row = UnsafeMutablePointer<UInt32>.allocate(capacity: size.width)
        defer { row.deallocate() }
        for y in 0..<size.height {
            try decoder.nextRow(into: row)
            for x in 0..<size.width {
                let argb = row[x]
                let at = (y * size.width + x) * 4
                rgba[at] = UInt8(truncatingIfNeeded: argb >> 16)
                rgba[at + 1] = UInt8(truncatingIfNeeded: argb >> 8)
                rgba[at + 2] = UInt8(truncatingIfNeeded: argb)
                rgba[at + 3] = UInt8(truncatingIfNeeded: argb >> 24)
            }
        }
        return (
            rgba, size,
            VP8LFeatures(transforms: features.transforms, metaCodes: features.metaCodes, cacheBits: features.cacheBits)
        )
    }

    struct VP8LFeatures {
        var transforms: [Int]
        var metaCodes: Bool
        var cacheBits: Int
    }

    @discardableResult
    func expectSameAsLibwebp(
        _ rgba: [UInt8], _ size: Size, method: Int, quality: Float, exact: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> VP8LFeatures {
        let bytes = try ImageFixture.losslessWebP(
            rgba: rgba, size: size, method: method, quality: quality, exact: exact)
        let reference = try ImageFixture.decodeWebP(bytes)
        let ours = try decode(bytes)
        #expect(ours.size == reference.size, sourceLocation: sourceLocation)
        let first = zip(ours.rgba, reference.rgba).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        let location = first.map { "byte \($0) (pixel \($0 / 4))" } ?? "none"
        #expect(
            first == nil, "\(size) method \(method) quality \(quality): first difference at \(location)",
            sourceLocation: sourceLocation)
        return ours.features
    }

    /// A deterministic generator, so a failure repeats.
    struct Noise {
        var state: UInt64
        mutating func next() -> UInt8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    static func gradient(_ size: Size, alpha: Bool, seed: UInt64) -> [UInt8] {
        var noise = Noise(state: seed)
        var rgba: [UInt8] = []
        rgba.reserveCapacity(size.pixelCount * 4)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let wobble = Int(noise.next() % 9)
                rgba.append(UInt8(truncatingIfNeeded: x * 3 + y + wobble))
                rgba.append(UInt8(truncatingIfNeeded: x + y * 2 + wobble / 2))
                rgba.append(UInt8(truncatingIfNeeded: (x ^ y) + wobble))
                rgba.append(alpha ? UInt8(truncatingIfNeeded: 255 - (x + y) / 2) : 255)
            }
        }
        return rgba
    }

    static func palette(_ size: Size, colours: Int, seed: UInt64) -> [UInt8] {
        var noise = Noise(state: seed)
        let table = (0..<colours).map { _ in [noise.next(), noise.next(), noise.next(), 255] }
        var rgba: [UInt8] = []
        for y in 0..<size.height {
            for x in 0..<size.width {
                // Runs of one colour, so the encoder finds both indexing and copies worth its while.
                let index = ((x / 3) * 7 + (y / 2) * 13 + Int(noise.next() % 2)) % colours
                rgba += table[index]
            }
        }
        return rgba
    }

    static func noise(_ size: Size, seed: UInt64) -> [UInt8] {
        var noise = Noise(state: seed)
        return (0..<size.pixelCount * 4).map { index in index % 4 == 3 ? 255 : noise.next() & 0xF0 }
    }

    @Test(arguments: [0, 3, 6])
    func gradientsUseThePredictorAndColourTransforms(method: Int) throws {
        let features = try expectSameAsLibwebp(
            Self.gradient(Size(width: 173, height: 91), alpha: false, seed: 1), Size(width: 173, height: 91),
            method: method, quality: 75)
        #expect(features.transforms.contains(0), "\(features)")
        try expectSameAsLibwebp(
            Self.gradient(Size(width: 64, height: 64), alpha: true, seed: 2), Size(width: 64, height: 64),
            method: method, quality: 100, exact: true)
    }

    @Test(arguments: [2, 3, 4, 11, 16, 17, 200])
    func palettesPackTheirIndices(colours: Int) throws {
        let size = Size(width: 101, height: 37)
        let features = try expectSameAsLibwebp(
            Self.palette(size, colours: colours, seed: UInt64(colours)), size, method: 4, quality: 80)
        #expect(features.transforms.contains(3), "\(features)")
    }

    /// 400 colours at random: too many to index, few enough that a cache of recent colours pays.
    @Test func manyColoursUseTheColourCacheAndCopies() throws {
        let size = Size(width: 150, height: 120)
        var rgba = Self.palette(size, colours: 400, seed: 9)
        // The lower half repeats the upper: long backward references.
        let half = size.pixelCount / 2 * 4
        rgba.replaceSubrange(half..<half * 2, with: rgba[0..<half])
        var cached = false
        for method in [0, 6] {
            cached = try expectSameAsLibwebp(rgba, size, method: method, quality: 100).cacheBits > 0 || cached
        }
        #expect(cached)
    }

    @Test(arguments: [
        Size(width: 1, height: 1), Size(width: 1, height: 77), Size(width: 77, height: 1), Size(width: 257, height: 3),
    ])
    func oddSizes(size: Size) throws {
        try expectSameAsLibwebp(Self.gradient(size, alpha: true, seed: 4), size, method: 5, quality: 90)
        try expectSameAsLibwebp(Self.palette(size, colours: 3, seed: 5), size, method: 5, quality: 90)
    }

    /// 1200x1000 is more than the ring holds (2^20 pixels and a few rows), and the bottom third repeats the top
    /// third, 800,000 pixels back: the ring must still hold what a copy reads. Varied content at the most effort
    /// makes libwebp use meta prefix codes.
    @Test func aPictureLargerThanTheRing() throws {
        let size = Size(width: 1200, height: 1000)
        var rgba = Self.gradient(size, alpha: false, seed: 7)
        let third = size.width * 333 * 4
        let noisy = Self.noise(Size(width: size.width, height: 333), seed: 8)
        rgba.replaceSubrange(third..<third * 2, with: noisy)
        rgba.replaceSubrange(third * 2..<third * 3, with: rgba[0..<third])
        #expect(size.pixelCount > VP8LDecoder.longestDistance + 3 * size.width + VP8LDecoder.longestCopy)
        let features = try expectSameAsLibwebp(rgba, size, method: 6, quality: 100)
        #expect(features.metaCodes, "\(features)")
    }

    /// Between them the fixtures reach every transform: subtract green and the colour transform come with photo-like
    /// content at middling effort.
    @Test func everyTransformIsReached() throws {
        var seen = Set<Int>()
        for (seed, method) in [(11, 2), (12, 4), (13, 6)] {
            let size = Size(width: 96, height: 80)
            seen.formUnion(
                try expectSameAsLibwebp(
                    Self.gradient(size, alpha: false, seed: UInt64(seed)), size, method: method, quality: 75
                ).transforms)
            seen.formUnion(
                try expectSameAsLibwebp(
                    Self.palette(size, colours: 40, seed: UInt64(seed)), size, method: method, quality: 75
                ).transforms)
        }
        #expect(seen == [0, 1, 2, 3], "\(seen)")
    }

    /// A file cut short is refused naming why; no read past the chunk.
    @Test func aTruncatedFileIsRefused() throws {
        let size = Size(width: 120, height: 90)
        let bytes = try ImageFixture.losslessWebP(
            rgba: Self.noise(size, seed: 3), size: size, method: 4, quality: 80)
        let folder = try TemporaryFolder()
        let path = try folder.write("cut.webp", Array(bytes.prefix(bytes.count * 2 / 3)))
        #expect {
            _ = try FrameRenderer(budget: MemoryBudget(limit: 64 << 20)).render(
                path, options: RenderOptions(canvas: Size(width: 120, height: 90)))
        } throws: { error in
            let text = (error as? ImageError)?.description ?? ""
            return text.hasPrefix("\(path): ") && text.contains("truncated")
        }
    }

    /// The need is the ring and a few rows, and the prefix codes' bound, whatever the picture's size: a 12 MP
    /// lossless WebP is charged about 12.5 MiB where libwebp needs its whole ARGB picture (46 MiB) and the file.
    @Test func theNeedIsTheRingNotThePicture() throws {
        let size = Size(width: 4032, height: 3024)
        let ours = VP8LDecoder.workspaceBytes(width: size.width, pixels: size.pixelCount)
        #expect(ours < 5 << 20)
        #expect(ours > (1 << 20) * 4)
        let bytes = try ImageFixture.losslessWebP(
            rgba: Self.noise(Size(width: 8, height: 8), seed: 1), size: Size(width: 8, height: 8), method: 0,
            quality: 50)
        let folder = try TemporaryFolder()
        let header = try PhotoFile(path: try folder.write("small.webp", bytes)).header()
        guard case .webp(var webp) = header.details else {
            Issue.record("not read as a WebP")
            return
        }
        #expect(webp.decodesRowByRow)
        webp.size = size
        #expect(webp.decoderWorkspaceBytes < 13 << 20)
        webp.losslessData = nil
        #expect(webp.decoderWorkspaceBytes > size.pixelCount * 4)
    }
}
