import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

/// The picture a dashboard shows for the slide on screen: small, and the same picture.
struct SlideThumbnailTests {
    /// A 1920x1080 frame: red on the left half, blue on the right, and a band of one-pixel black and white
    /// stripes, which must average to grey rather than alias to black or white.
    static func frame() throws -> Frame {
        let size = Size(width: 1920, height: 1080)
        let frame = try Frame(size: size, budget: MemoryBudget(limit: 64 << 20), purpose: "test")
        for y in 0..<size.height {
            for x in 0..<size.width {
                let pixel: UInt32
                if y >= 800 {
                    pixel = x % 2 == 0 ? 0x00FF_FFFF : 0
                } else {
                    pixel = x < size.width / 2 ? 0x00DC_1E1E : 0x0020_30C8
                }
                frame.pixels[y * size.width + x] = pixel
            }
        }
        return frame
    }

    @Test func aFullHDSlideBecomesA480PixelJPEGOfTheSamePicture() throws {
        let jpeg = try SlideThumbnail.jpeg(of: try Self.frame())
        #expect(jpeg.starts(with: [0xFF, 0xD8]))
        #expect(jpeg.count < 30_000, "\(jpeg.count) bytes")
        let folder = try TemporaryFolder()
        let path = try folder.write("thumbnail.jpg", jpeg)
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 64 << 20))
        #expect(try renderer.header(of: path).size == Size(width: 480, height: 270))
        let decoded = try renderer.render(path, options: RenderOptions(canvas: Size(width: 480, height: 270))).frame
        #expect(
            FrameRendererTests.close(
                decoded.pixel(x: 100, y: 100), RGBColor(red: 0xDC, green: 0x1E, blue: 0x1E), tolerance: 6))
        #expect(
            FrameRendererTests.close(
                decoded.pixel(x: 380, y: 100), RGBColor(red: 0x20, green: 0x30, blue: 0xC8), tolerance: 6))
        #expect(
            FrameRendererTests.close(
                decoded.pixel(x: 240, y: 250), RGBColor(red: 0x7F, green: 0x7F, blue: 0x7F), tolerance: 6))
    }
}
