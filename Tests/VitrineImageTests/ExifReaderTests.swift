import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

@Suite struct ExifReaderTests {
    /// The APP1 payload (after marker and length) of a segment built by the fixture.
    func payload(_ segment: [UInt8]) -> ArraySlice<UInt8> { segment.dropFirst(4) }

    @Test(arguments: Orientation.allCases, [false, true])
    func readsEveryOrientationInBothByteOrders(orientation: Orientation, bigEndian: Bool) {
        let fields = ExifReader.read(
            payload(JPEGFixture.exifSegment(orientation: orientation.rawValue, bigEndian: bigEndian)))
        #expect(fields.orientation == orientation)
    }

    @Test func readsTheCaptureDate() {
        let segment = JPEGFixture.exifSegment(orientation: 6, dateTimeOriginal: "2021:07:04 18:30:00")
        let fields = ExifReader.read(payload(segment))
        #expect(fields.orientation == .rotated90)
        #expect(fields.dateTimeOriginal == "2021:07:04 18:30:00")
    }

    @Test func malformedBlocksYieldNothingAndNeverTrap() {
        let good = Array(payload(JPEGFixture.exifSegment(orientation: 3, dateTimeOriginal: "2021:07:04 18:30:00")))
        // Every truncation, and every single-byte corruption, of a valid block.
        for length in 0..<good.count {
            let fields = ExifReader.read(good.prefix(length))
            #expect(fields.orientation == nil || fields.orientation == .rotated180)
        }
        for index in 0..<good.count {
            for value: UInt8 in [0x00, 0xFF, 0x7F] {
                var corrupt = good
                corrupt[index] = value
                _ = ExifReader.read(corrupt[...])
            }
        }
        #expect(ExifReader.read(payload(JPEGFixture.exifSegment(orientation: 0))).orientation == nil)
        #expect(ExifReader.read(payload(JPEGFixture.exifSegment(orientation: 9))).orientation == nil)
        #expect(ExifReader.read(Array("Exif\0\0MM\0*\u{7f}\u{ff}\u{ff}\u{ff}".utf8)[...]).orientation == nil)
    }
}
