import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

/// A photo tagged Display P3 (as every recent iPhone's is) shown as the colours it means, not its numbers as if
/// they were sRGB. The expected colour is worked out by hand from the P3 and sRGB definitions: P3 (200, 100, 50)
/// decoded with the sRGB curve is linear (0.5771, 0.1274, 0.0319); P3-to-sRGB's matrix (1.2249 -0.2247 0 /
/// -0.0420 1.0419 0 / -0.0197 -0.0786 1.0983) makes it (0.6783, 0.1085, 0.0137); encoded again, (215, 93, 31).
@Suite struct ColorManagementTests {
    let folder: TemporaryFolder
    static let size = Size(width: 64, height: 48)
    static let numbers = RGBColor(red: 200, green: 100, blue: 50)
    static let meant = RGBColor(red: 215, green: 93, blue: 31)

    init() throws {
        folder = try TemporaryFolder()
    }

    static var solidRGB: [UInt8] {
        [UInt8]((0..<size.pixelCount).flatMap { _ in [numbers.red, numbers.green, numbers.blue] })
    }

    func render(_ name: String, _ bytes: [UInt8], managed: Bool = true) throws -> UInt32 {
        let path = try folder.write(name, bytes)
        var options = RenderOptions(canvas: Self.size)
        options.colorManagement = managed
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 64 << 20))
        return try renderer.render(path, options: options).frame.pixel(x: 32, y: 24)
    }

    @Test func aDisplayP3PNGShowsTheColoursItMeans() throws {
        let p3 = try ImageFixture.displayP3Profile()
        let tagged = try ImageFixture.png(samples: Self.solidRGB, size: Self.size, color: .rgb, icc: p3)
        let untagged = try ImageFixture.png(samples: Self.solidRGB, size: Self.size, color: .rgb)
        let shown = try render("p3.png", tagged)
        #expect(FrameRendererTests.close(shown, Self.meant, tolerance: 2), "\(FrameRendererTests.channels(shown))")
        #expect(FrameRendererTests.close(try render("plain.png", untagged), Self.numbers, tolerance: 1))
        // Off, the tagged photo looks like the untagged one.
        #expect(FrameRendererTests.close(try render("p3-off.png", tagged, managed: false), Self.numbers, tolerance: 1))
    }

    @Test func aDisplayP3JPEGShowsTheColoursItMeans() throws {
        let jpeg = try JPEGFixture.encode(rgb: Self.solidRGB, size: Self.size, quality: 100)
        let tagged = JPEGFixture.inserting(ImageFixture.iccSegments(try ImageFixture.displayP3Profile()), into: jpeg)
        let shown = try render("p3.jpg", tagged)
        #expect(FrameRendererTests.close(shown, Self.meant, tolerance: 3), "\(FrameRendererTests.channels(shown))")
        #expect(FrameRendererTests.close(try render("p3-off.jpg", tagged, managed: false), Self.numbers, tolerance: 3))
    }

    /// A photo tagged sRGB (most phone JPEGs, and PNGs saved from them) needs no conversion: its transform is
    /// recognised as one that changes nothing and skipped; a wide-gamut one is not.
    @Test func anSRGBProfileIsRecognisedAsChangingNothing() throws {
        let srgb = try #require(ColorTransform(.icc(try ImageFixture.sRGBProfile())))
        #expect(srgb.isIdentity)
        let p3 = try #require(ColorTransform(.icc(try ImageFixture.displayP3Profile())))
        #expect(!p3.isIdentity)
        let tagged = try ImageFixture.png(
            samples: Self.solidRGB, size: Self.size, color: .rgb, icc: try ImageFixture.sRGBProfile())
        #expect(FrameRendererTests.close(try render("srgb.png", tagged), Self.numbers, tolerance: 1))
    }

    @Test func aProfileSplitOverSeveralSegmentsIsJoined() throws {
        // A profile padded past one segment's 65,519 bytes (a private tag LittleCMS ignores would do the same).
        var profile = try ImageFixture.displayP3Profile()
        let declared = profile.count + 70_000
        profile[0...3] = [
            UInt8(declared >> 24), UInt8(declared >> 16 & 0xFF), UInt8(declared >> 8 & 0xFF), UInt8(declared & 0xFF),
        ]
        profile += [UInt8](repeating: 0, count: 70_000)
        let segments = ImageFixture.iccSegments(profile)
        let jpeg = try JPEGFixture.encode(rgb: Self.solidRGB, size: Self.size, quality: 100)
        let tagged = JPEGFixture.inserting(segments, into: jpeg)
        let header = try FrameRenderer(budget: MemoryBudget(limit: 64 << 20)).header(
            of: try folder.write("two.jpg", tagged))
        #expect(header.jpeg?.iccChunks.count == 2)
        let shown = try render("two-segments.jpg", tagged)
        #expect(FrameRendererTests.close(shown, Self.meant, tolerance: 3), "\(FrameRendererTests.channels(shown))")
    }

    @Test func aProfileThatCannotBeReadLeavesThePhotoAsDecoded() throws {
        let jpeg = try JPEGFixture.encode(rgb: Self.solidRGB, size: Self.size, quality: 100)
        let junk = JPEGFixture.inserting(ImageFixture.iccSegments([UInt8](repeating: 7, count: 300)), into: jpeg)
        #expect(FrameRendererTests.close(try render("junk.jpg", junk), Self.numbers, tolerance: 3))
    }

    @Test func nclxDescriptionsOfSRGBNeedNoTransform() {
        let bt709 = [0.64, 0.33, 0.30, 0.60, 0.15, 0.06, 0.3127, 0.3290]
        #expect(ColorProfile.nclx(primaries: 1, transfer: 13, xy: bt709) == nil)
        #expect(ColorProfile.nclx(primaries: 2, transfer: 2, xy: []) == nil)
        // HDR curves are shown as they are.
        #expect(ColorProfile.nclx(primaries: 9, transfer: 16, xy: bt709) == nil)
        let p3 = [0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290]
        guard case .primaries(let xy, let type, _) = ColorProfile.nclx(primaries: 12, transfer: 13, xy: p3) else {
            Issue.record("P3 nclx made no profile")
            return
        }
        #expect(xy == p3 && type == 4)
        #expect(
            ColorTransform(
                .primaries(xy: p3, curveType: 4, curve: [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])) != nil)
    }
}
