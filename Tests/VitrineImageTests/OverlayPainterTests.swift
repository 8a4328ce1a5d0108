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

/// The lines as a layer for a plane above a clip: laid over a picture by the premultiplied "over" a plane does, they
/// give what painting into the picture gives.
@Suite struct OverlayLayerTests {
    @Test(arguments: [OverlaySettings.Look.shadow, .plate], [Rotation.none, .clockwise90])
    func aLayerOverThePictureIsThePaintedPicture(look: OverlaySettings.Look, rotation: Rotation) throws {
        let canvas = Size(width: 320, height: 200)
        let scanout = rotation.scanoutSize(forCompose: canvas)
        let budget = MemoryBudget(limit: 4 << 20)
        let picture = try Frame(size: scanout, budget: budget, purpose: "test")
        var seed: UInt32 = 12345
        for index in 0..<scanout.pixelCount {
            seed = seed &* 1_103_515_245 &+ 12345
            picture.pixels[index] = seed >> 8 & 0x00FF_FFFF
        }
        let painted = try Frame(size: scanout, budget: budget, purpose: "test")
        painted.pixels.update(from: picture.pixels, count: scanout.pixelCount)
        let renderer = try TextRenderer(pixelHeight: 18)
        let strips = [renderer.render("12:34"), renderer.render("Lyon, France")]
        let saved = try #require(
            OverlayPainter.paint(
                strips, corner: .topRight, look: look, canvas: canvas, rotation: rotation, into: painted.pixels,
                stride: scanout.width))
        let layer = try #require(
            OverlayPainter.layer(strips, corner: .topRight, look: look, canvas: canvas, rotation: rotation))
        let rect = layer.rect
        #expect(rect == saved.rect)
        #expect(layer.pixels.count == rect.width * rect.height)
        var worst = 0
        var covered = 0
        for index in 0..<scanout.pixelCount {
            let (x, y) = (index % scanout.width, index / scanout.width)
            let inside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
            // Outside its rectangle the plane shows nothing: the picture, as painted, is untouched there.
            let over = inside ? layer.pixels[(y - rect.y) * rect.width + x - rect.x] : 0
            if !inside { #expect(painted.pixels[index] == picture.pixels[index]) }
            let alpha = Int(over >> 24)
            if alpha > 0 { covered += 1 }
            for shift: UInt32 in [0, 8, 16] {
                let light = Int(over >> shift & 0xFF)
                let under = Int(picture.pixels[index] >> shift & 0xFF)
                let composed = light + (under * (255 - alpha) + 127) / 255
                worst = max(worst, abs(composed - Int(painted.pixels[index] >> shift & 0xFF)))
            }
        }
        #expect(covered > 200)
        // Rounding: the painter rounds twice (shadow or plate, then the text), the layer once more on its alpha.
        #expect(worst <= 2, "worst difference \(worst)")
    }
}
