import Testing
import VitrineCore

@testable import VitrineImage

/// The clock's lines in their corner of the upright picture, on every panel rotation, and taken off exactly.
@Suite struct OverlayPainterTests {
    static let grey: UInt32 = 0x0096_9696

    static func changed(_ frame: Frame, at point: (x: Int, y: Int)) -> Bool {
        frame.pixel(x: point.x, y: point.y) != grey
    }

    @Test(arguments: [Rotation.none, .clockwise90, .upsideDown, .clockwise270])
    func theLinesSitInTheTopRightCornerAndComeOffAgain(rotation: Rotation) throws {
        let canvas = Size(width: 480, height: 200)
        let scanout = rotation.scanoutSize(forCompose: canvas)
        let frame = try Frame(size: scanout, budget: MemoryBudget(limit: 1 << 20), purpose: "test")
        frame.fill(RGBColor(red: 150, green: 150, blue: 150))
        let renderer = try TextRenderer(pixelHeight: 18)
        let strips = [renderer.render("12:34"), renderer.render("2 December 2026")]
        let saved = try #require(
            OverlayPainter.paint(
                strips, corner: .topRight, look: .shadow, canvas: canvas, rotation: rotation, into: frame.pixels,
                stride: scanout.width))
        let turn = PixelMapping.Affine(rotation.asOrientation, size: canvas)
        // Text in the upright top-right quarter, nothing in the other three.
        var inCorner = 0
        var elsewhere = 0
        for y in 0..<canvas.height {
            for x in 0..<canvas.width where Self.changed(frame, at: turn.apply(x, y)) {
                if x >= canvas.width / 2 && y < canvas.height / 2 { inCorner += 1 } else { elsewhere += 1 }
            }
        }
        #expect(inCorner > 100)
        #expect(elsewhere == 0)
        let box = saved.rect
        #expect(box.width * box.height < canvas.width * canvas.height / 4, "a strip, not a frame")
        #expect(min(box.width, box.height) >= 2 * 18, "two lines, one under the other")
        saved.restore(into: frame.pixels, stride: scanout.width)
        for y in 0..<scanout.height {
            for x in 0..<scanout.width { #expect(frame.pixel(x: x, y: y) == Self.grey) }
        }
    }

    @Test func aShadowLeavesThePhotoAroundTheTextAndAPlateDarkensIt() throws {
        let canvas = Size(width: 320, height: 200)
        let renderer = try TextRenderer(pixelHeight: 18)
        var results: [OverlaySettings.Look: (bright: Int, dark: Int, untouched: Int)] = [:]
        for look in OverlaySettings.Look.allCases {
            let frame = try Frame(size: canvas, budget: MemoryBudget(limit: 1 << 20), purpose: "test")
            frame.fill(RGBColor(red: 150, green: 150, blue: 150))
            let saved = try #require(
                OverlayPainter.paint(
                    [renderer.render("08:05")], corner: .bottomLeft, look: look, canvas: canvas, rotation: .none,
                    into: frame.pixels, stride: canvas.width))
            #expect(saved.rect.x < canvas.width / 4 && saved.rect.y > canvas.height / 2)
            var counts = (bright: 0, dark: 0, untouched: 0)
            for y in saved.rect.y..<(saved.rect.y + saved.rect.height) {
                for x in saved.rect.x..<(saved.rect.x + saved.rect.width) {
                    let level = frame.pixel(x: x, y: y) & 0xFF
                    if level > 220 {
                        counts.bright += 1
                    } else if level < 150 {
                        counts.dark += 1
                    } else {
                        counts.untouched += 1
                    }
                }
            }
            results[look] = counts
        }
        let shadow = try #require(results[.shadow])
        let plate = try #require(results[.plate])
        #expect(shadow.bright > 30 && plate.bright > 30)
        // The shadow darkens only beside the glyphs; most of its box is the photo as it was.
        #expect(shadow.dark > 10 && shadow.untouched > shadow.dark)
        // The plate darkens the whole box around the text.
        #expect(plate.untouched == 0 || plate.untouched < plate.dark / 10)
    }

    @Test func noLinesPaintNothing() throws {
        let canvas = Size(width: 64, height: 48)
        let frame = try Frame(size: canvas, budget: MemoryBudget(limit: 1 << 20), purpose: "test")
        #expect(
            OverlayPainter.paint(
                [], corner: .topLeft, look: .plate, canvas: canvas, rotation: .none, into: frame.pixels,
                stride: canvas.width) == nil)
    }
}
