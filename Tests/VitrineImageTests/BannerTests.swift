import Testing
import VitrineCore
import VitrinePlatform

@testable import VitrineImage

@Suite struct BannerTests {
    @Test func textRendersAsCoverageTheSizeOfTheText() throws {
        let renderer = try TextRenderer(pixelHeight: 24)
        let short = renderer.render("Hi")
        let long = renderer.render("Holidays 2024")
        #expect(short.size.height == long.size.height)
        #expect(long.size.width > short.size.width * 3)
        #expect(long.coverage.contains { $0 > 200 })
        #expect(long.coverage.count == long.size.pixelCount)
        // A strip, not a frame: a few kilobytes.
        #expect(long.coverage.count < 16 * 1024)
    }

    @Test func aMissingFontIsAnErrorNamingIt() {
        #expect {
            _ = try TextRenderer(fontPath: "/nonexistent/font.ttf", pixelHeight: 20)
        } throws: { error in
            (error as? FileError)?.path == "/nonexistent/font.ttf"
        }
    }

    @Test(arguments: [Rotation.none, .clockwise90, .upsideDown, .clockwise270])
    func theBannerSitsAtTheBottomOfTheUprightPictureAndComesOffAgain(rotation: Rotation) throws {
        let canvas = Size(width: 320, height: 200)
        let scanout = rotation.scanoutSize(forCompose: canvas)
        let budget = MemoryBudget(limit: 1 << 20)
        let frame = try Frame(size: scanout, budget: budget, purpose: "test")
        frame.fill(RGBColor(red: 150, green: 150, blue: 150))
        let strip = try TextRenderer(pixelHeight: 20).render("Paused")
        let saved = BannerPainter.paint(
            strip, canvas: canvas, rotation: rotation, into: frame.pixels, stride: scanout.width)
        // Where the bottom centre of the upright picture lands in the scanout: changed (darkened or text).
        let turn = PixelMapping.Affine(rotation.asOrientation, size: canvas)
        let bottom = turn.apply(canvas.width / 2, canvas.height - canvas.height / 16 - 3)
        let top = turn.apply(canvas.width / 2, 10)
        #expect(frame.pixel(x: bottom.x, y: bottom.y) != 0x0096_9696)
        #expect(frame.pixel(x: top.x, y: top.y) == 0x0096_9696)
        var bright = 0
        for y in 0..<scanout.height {
            for x in 0..<scanout.width where frame.pixel(x: x, y: y) & 0xFF > 200 { bright += 1 }
        }
        #expect(bright > 20)
        saved.restore(into: frame.pixels, stride: scanout.width)
        for y in 0..<scanout.height {
            for x in 0..<scanout.width { #expect(frame.pixel(x: x, y: y) == 0x0096_9696) }
        }
    }
}
