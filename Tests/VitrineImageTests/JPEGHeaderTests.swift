import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

@Suite struct JPEGHeaderTests {
    func parse(_ bytes: [UInt8]) throws(ImageError) -> JPEGHeader {
        try JPEGHeader.parse(file: "photo.jpg") { offset, count in
            Array(bytes.dropFirst(offset).prefix(count))
        }
    }

    func reason(_ bytes: [UInt8]) -> ImageError.Reason? {
        do {
            _ = try parse(bytes)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test(arguments: JPEGFixture.Subsampling.allCases)
    func readsSizeAndSampling(subsampling: JPEGFixture.Subsampling) throws {
        let size = Size(width: 64, height: 48)
        let jpeg = try JPEGFixture.encode(
            rgb: JPEGFixture.solid(JPEGFixture.red, size: size), size: size, subsampling: subsampling)
        let header = try parse(jpeg)
        #expect(header.size == size)
        #expect(header.process == .baseline)
        #expect(header.precision == 8)
        #expect(header.orientation == .up)
        switch subsampling {
        case .gray: #expect(header.colorModel == .gray)
        case .s444: #expect(header.components.map(\.horizontalSampling) == [1, 1, 1])
        case .s422: #expect(header.components.first?.horizontalSampling == 2)
        case .s420: #expect(header.components.first?.verticalSampling == 2)
        }
    }

    @Test func readsOrientationAndProgressive() throws {
        let size = Size(width: 40, height: 20)
        let jpeg = try JPEGFixture.encode(
            rgb: JPEGFixture.solid(JPEGFixture.blue, size: size), size: size, progressive: true)
        let header = try parse(JPEGFixture.inserting(JPEGFixture.exifSegment(orientation: 8), into: jpeg))
        #expect(header.process == .progressive)
        #expect(header.orientation == .rotated270)
        #expect(header.displayedSize == Size(width: 20, height: 40))
        // Progressive files keep every coefficient: 3 components x 5x3 blocks x 128 bytes.
        #expect(header.decoderWorkspaceBytes == 3 * 15 * 128)
    }

    @Test func namesWhatIsNotAJPEG() {
        #expect(reason([]) == .empty)
        #expect(reason([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .notJPEG("PNG image data"))
        #expect(reason(Array("GIF89a".utf8)) == .notJPEG("GIF image data"))
        #expect(reason([0x12, 0x34, 0x56]) == .notJPEG("starts with 0x12 0x34 instead of 0xFF 0xD8"))
    }

    @Test func refusesUnsupportedAndMalformedFrames() throws {
        let size = Size(width: 16, height: 16)
        let jpeg = try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.red, size: size), size: size)
        let sof = try #require(JPEGFixture.offset(ofMarker: 0xC0, in: jpeg))

        var twelveBit = jpeg
        twelveBit[sof + 1] = 0xC1
        twelveBit[sof + 4] = 12
        #expect(reason(twelveBit) == .unsupported("12-bit samples (only 8-bit JPEG photos can be shown)"))

        var lossless = jpeg
        lossless[sof + 1] = 0xC3
        #expect(reason(lossless) == .unsupported("lossless JPEG (SOF3) cannot be shown"))

        var noHeight = jpeg
        noHeight[sof + 5] = 0
        noHeight[sof + 6] = 0
        #expect(reason(noHeight) == .unsupported("image size 16x0 (a height defined later by a DNL marker)"))

        var huge = jpeg
        huge[sof + 5] = 0xFF
        huge[sof + 6] = 0xDC
        huge[sof + 7] = 0xFF
        huge[sof + 8] = 0xDC
        #expect(try parse(huge).size == Size(width: 65500, height: 65500))

        for length in [2, 3, 5, sof + 3, sof + 8] {
            #expect(reason(Array(jpeg.prefix(length))) != nil, "truncated at \(length)")
        }
        #expect(reason([0xFF, 0xD8, 0xFF, 0xD9]) == .malformed("end of image before any picture data"))
        #expect(reason([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01]) != nil)
    }

    @Test func survivesEveryCorruptionOfAHeader() throws {
        let size = Size(width: 16, height: 16)
        let jpeg = JPEGFixture.inserting(
            JPEGFixture.exifSegment(orientation: 6),
            into: try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.red, size: size), size: size))
        let headerEnd = try #require(JPEGFixture.offset(ofMarker: 0xDA, in: jpeg))
        for index in 0..<headerEnd {
            for value: UInt8 in [0x00, 0xFF, 0xC2, 0x01] {
                var corrupt = jpeg
                corrupt[index] = value
                _ = reason(corrupt)
            }
        }
    }
}
