import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

/// The format is told by the content and each format's header is read from its metadata alone.
@Suite struct ImageHeaderTests {
    static func header(_ bytes: [UInt8], name: String = "photo") throws(ImageError) -> ImageHeader {
        try ImageHeader.parse(file: name, fileBytes: bytes.count) { (offset, count) throws(ImageError) in
            Array(bytes[min(offset, bytes.count)..<min(bytes.count, offset + count)])
        }
    }

    static func reason(_ bytes: [UInt8]) -> ImageError.Reason? {
        do {
            _ = try header(bytes)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func formatsAreToldByTheirFirstBytes() throws {
        let size = Size(width: 8, height: 8)
        let jpeg = try JPEGFixture.encode(rgb: JPEGFixture.quadrants(size: size), size: size)
        let png = try ImageFixture.png(samples: [UInt8](repeating: 9, count: 64 * 3), size: size, color: .rgb)
        let webp = try ImageFixture.webp(rgba: ImageFixture.quadrantsRGBA(size: size), size: size, lossless: true)
        #expect(ImageFormat.detect(Array(jpeg.prefix(16))) == .jpeg)
        #expect(ImageFormat.detect(Array(png.prefix(16))) == .png)
        #expect(ImageFormat.detect(Array(webp.prefix(16))) == .webp)
        #expect(ImageFormat.detect(Array("GIF89a".utf8)) == nil)
        #expect(try Self.header(png, name: "looks-like.jpg").format == .png)
    }

    /// The 65-byte PNG that stopped the player with SIGILL: an interlaced IHDR of 2147483647x2147483647 with valid
    /// CRCs made the decoder's workspace (width x height x 4) overflow as the header was read. Every size near the
    /// limits is now refused with a message, interlaced or not.
    @Test(arguments: [
        (UInt32(Int32.max), UInt32(Int32.max), true), (UInt32(Int32.max), UInt32(Int32.max), false),
        (1_200_000_000, 1_200_000_000, false), (1_520_000_000, 1_520_000_000, true), (1, UInt32(Int32.max), true),
        (40_000, 40_000, true),
    ])
    func pngHeadersAtTheLimitsAreRefusedNotCrashed(width: UInt32, height: UInt32, interlaced: Bool) {
        let file = HostileFiles.png(width: width, height: height, interlaced: interlaced)
        #expect(file.count == 65)
        let size = Size(width: Int(width), height: Int(height))
        #expect(Self.reason(file) == .tooManyPixels(size, limitMegapixels: 1000))
    }

    /// Just under the limit the header is read, and every size derived from it fits.
    @Test func aPNGJustUnderTheLimitIsReadWithSizesThatFit() throws {
        let header = try Self.header(HostileFiles.png(width: 1, height: 1_000_000_000, interlaced: true))
        #expect(header.size == Size(width: 1, height: 1_000_000_000))
        #expect(header.decoderWorkspaceBytes > 4_000_000_000)
        let wide = try Self.header(HostileFiles.png(width: 999_999_999, height: 1, interlaced: false))
        #expect(wide.decoderWorkspaceBytes > 8 * 999_999_999)
    }

    @Test func sizesFromFilesSaturateInsteadOfTrapping() {
        #expect(Int.saturatingProduct(Int(Int32.max), Int(Int32.max), 4) == .max)
        #expect(Int.saturatingSum(.max - 1, 2) == .max)
        #expect(Size(width: .max, height: 2).pixelCount == .max)
        #expect(Int.saturatingProduct(3, 4, 5) == 60)
    }

    @Test func unknownContentIsDescribedAndTheShownFormatsListed() {
        #expect(Self.reason(Array("GIF89a....".utf8)) == .unknownFormat("GIF image data"))
        // ISO media that is no image is a clip (read by libavformat, which this parse is not given).
        #expect(ImageFormat.detect([0, 0, 0, 24] + Array("ftypisom".utf8) + [0, 0, 0, 0]) == .clip)
        #expect(ImageFormat.detect([0, 0, 0, 8] + Array("moov".utf8) + [0, 0, 0, 0]) == .clip)
        #expect(ImageFormat.detect([0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 1, 0, 0, 0]) == .clip)
        #expect(
            Self.reason([0, 0, 0, 24] + Array("ftypisom".utf8) + [0, 0, 0, 0])
                == .unsupportedVariant(.clip, "no clip reader here"))
        #expect(Self.reason([0x12, 0x34]) == .unknownFormat("starts with 0x12 0x34"))
        #expect(Self.reason([]) == .empty)
        let error = ImageError(file: "a.png", reason: .unknownFormat("GIF image data"))
        #expect(
            error.description
                == "a.png: not a photo Vitrine can show (GIF image data); it shows JPEG, PNG, WebP, HEIF, AVIF and clips "
                + "(MP4, MOV, MKV, WebM)")
    }

    @Test(arguments: [
        (ImageFixture.PNGColor.gray, UInt8(8), false), (.rgb, 8, false), (.rgba, 8, true), (.grayAlpha, 8, true),
        (.rgb, 16, false), (.rgba, 16, true),
    ])
    func pngHeadersGiveSizeDepthAndAlpha(color: ImageFixture.PNGColor, depth: UInt8, alpha: Bool) throws {
        let size = Size(width: 33, height: 17)
        let samples = [UInt8](repeating: 200, count: size.pixelCount * color.channels * Int(depth) / 8)
        let png = try ImageFixture.png(samples: samples, size: size, color: color, bitDepth: depth)
        let header = try Self.header(png)
        #expect(header.size == size)
        #expect(header.hasAlpha == alpha)
        #expect(header.orientation == .up)
        guard case .png(let details) = header.details else {
            Issue.record("not read as a PNG")
            return
        }
        #expect(details.bitDepth == Int(depth))
        #expect(!details.interlaced)
    }

    @Test func pngExifOrientationAndInterlaceAreRead() throws {
        let size = Size(width: 20, height: 10)
        let png = try ImageFixture.png(
            samples: [UInt8](repeating: 1, count: size.pixelCount * 3), size: size, color: .rgb, interlaced: true,
            exif: ImageFixture.tiffOrientation(6))
        let header = try Self.header(png)
        #expect(header.orientation == .rotated90)
        #expect(header.displayedSize == Size(width: 10, height: 20))
        #expect(header.kind == "interlaced PNG")
    }

    /// A non-interlaced PNG is decoded row by row: what it needs grows with its width, not its height. An
    /// interlaced one is decoded whole.
    @Test func pngWorkspaceGrowsWithHeightOnlyWhenInterlaced() throws {
        let base = try Self.header(
            ImageFixture.png(samples: [0, 0, 0], size: Size(width: 1, height: 1), color: .rgb))
        guard case .png(let details) = base.details else {
            Issue.record("not read as a PNG")
            return
        }
        func workspace(_ size: Size, interlaced: Bool) -> Int {
            var header = details
            header.size = size
            header.interlaced = interlaced
            return header.decoderWorkspaceBytes
        }
        let short = workspace(Size(width: 4000, height: 100), interlaced: false)
        #expect(workspace(Size(width: 4000, height: 30_000), interlaced: false) == short)
        #expect(short < 5 << 20)
        #expect(workspace(Size(width: 4000, height: 3000), interlaced: true) >= 4000 * 3000 * 4)
    }

    @Test func damagedPNGsNameWhatIsWrong() throws {
        let size = Size(width: 4, height: 4)
        let png = try ImageFixture.png(samples: [UInt8](repeating: 0, count: 48), size: size, color: .rgb)
        var badDepth = png
        badDepth[24] = 3
        var zeroWidth = png
        zeroWidth[16...19] = [0, 0, 0, 0]
        #expect(Self.reason(Array(png.prefix(20))) == .damaged(.png, "file ends inside the header (truncated)"))
        #expect(Self.reason(badDepth) == .damaged(.png, "bit depth 3 for colour type 2"))
        #expect(Self.reason(zeroWidth) == .damaged(.png, "image size 0x4"))
        #expect(Self.reason(Array(png.prefix(33))) == .damaged(.png, "file ends before the image data (truncated)"))
    }

    @Test func webpHeadersGiveSizeKindAlphaAndExif() throws {
        let size = Size(width: 30, height: 20)
        let pixels = ImageFixture.quadrantsRGBA(size: size)
        let lossy = try Self.header(ImageFixture.webp(rgba: pixels, size: size, lossless: false))
        #expect(lossy.size == size)
        #expect(lossy.kind == "WebP")
        #expect(!lossy.hasAlpha)
        let lossless = try Self.header(ImageFixture.webp(rgba: pixels, size: size, lossless: true))
        #expect(lossless.size == size)
        #expect(lossless.kind == "lossless WebP")
        let extended = ImageFixture.extendedWebP(
            try ImageFixture.webp(rgba: pixels, size: size, lossless: false), size: size, alpha: true,
            exif: ImageFixture.tiffOrientation(8))
        let header = try Self.header(extended)
        #expect(header.size == size)
        #expect(header.hasAlpha)
        #expect(header.orientation == .rotated270)
    }

    @Test func damagedWebPsNameWhatIsWrong() throws {
        let size = Size(width: 8, height: 8)
        let webp = try ImageFixture.webp(rgba: ImageFixture.quadrantsRGBA(size: size), size: size, lossless: false)
        #expect(Self.reason(Array(webp.prefix(16))) == .damaged(.webp, "no image data (no VP8, VP8L or VP8X chunk)"))
        var noStartCode = webp
        noStartCode[23] = 0
        #expect(Self.reason(noStartCode) == .damaged(.webp, "VP8 bitstream without a key frame start code"))
    }
}
