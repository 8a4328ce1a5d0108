import Testing
import VitrineCore
import VitrineImage

@testable import VitrineRuntime

/// The overlay's corner as the display paints it: into every picture and fade step as it is painted, and redrawn
/// over the picture on screen at the minute as a strip, never a new picture.
@Suite struct CornerOverlayTests {
    static let canvas = Size(width: 320, height: 200)
    static let record = PresentRecord(category: "A", slide: "a", file: nil, decodeMilliseconds: nil)

    /// Two scanout buffers.
    final class Screen {
        private var buffers: (front: UnsafeMutablePointer<UInt32>, back: UnsafeMutablePointer<UInt32>)

        init() {
            let count = CornerOverlayTests.canvas.pixelCount
            buffers = (.allocate(capacity: count), .allocate(capacity: count))
            buffers.front.initialize(repeating: 0, count: count)
            buffers.back.initialize(repeating: 0, count: count)
        }

        deinit {
            buffers.front.deallocate()
            buffers.back.deallocate()
        }

        var front: [UInt32] {
            Array(UnsafeBufferPointer(start: buffers.front, count: CornerOverlayTests.canvas.pixelCount))
        }

        /// Paints into the back buffer and flips (the buffers swap), as a display does.
        func show(_ content: DisplayContent) -> ShownContent {
            let shown = content.paint(
                into: UnsafeMutableRawPointer(buffers.back), pitch: CornerOverlayTests.canvas.width * 4,
                size: CornerOverlayTests.canvas, front: UnsafeRawPointer(buffers.front))
            buffers = (buffers.back, buffers.front)
            return shown
        }
    }

    static func photo(_ color: RGBColor) throws -> Frame {
        let frame = try Frame(size: canvas, budget: MemoryBudget(limit: 1 << 20), purpose: "test")
        frame.fill(color)
        return frame
    }

    static func overlay() throws -> TextOverlay {
        let overlay = try TextOverlay(renderer: nil)
        var settings = OverlaySettings()
        settings.clock = .pattern(try #require(ClockFormat("HH:mm")))
        settings.size = 0.1
        overlay.corner = try CornerOverlay(settings: settings, canvas: canvas, fontPath: TextRenderer.defaultFont)
        return overlay
    }

    static func decorated(_ picture: DisplayContent, by overlay: TextOverlay) -> DisplayContent {
        .decorated(picture) { pixels, _, stride in
            overlay.decorate(canvas: canvas, rotation: .none, pixels: pixels, stride: stride)
        }
    }

    /// The indices where two screens differ, as a bounding box (x, y, width, height); nil when they are equal.
    static func difference(_ one: [UInt32], _ other: [UInt32]) -> (x: Int, y: Int, width: Int, height: Int)? {
        var box: (minX: Int, minY: Int, maxX: Int, maxY: Int)?
        for index in one.indices where one[index] != other[index] {
            let x = index % canvas.width
            let y = index / canvas.width
            box = (min(box?.minX ?? x, x), min(box?.minY ?? y, y), max(box?.maxX ?? x, x), max(box?.maxY ?? y, y))
        }
        return box.map { ($0.minX, $0.minY, $0.maxX - $0.minX + 1, $0.maxY - $0.minY + 1) }
    }

    @Test func theCornerComesWithEveryPictureAndAMinuteRedrawsOnlyItsStrip() throws {
        let overlay = try Self.overlay()
        let screen = Screen()
        let blue = try Self.photo(RGBColor(red: 30, green: 60, blue: 160))
        overlay.cornerLines = [CornerOverlay.Line("12:34", large: true)]
        #expect(screen.show(Self.decorated(.frame(blue, Self.record), by: overlay)).isPicture)
        let plain = Screen()
        _ = plain.show(.frame(blue, Self.record))
        let painted = try #require(Self.difference(screen.front, plain.front), "the clock is in the picture")
        #expect(painted.x > Self.canvas.width / 2 && painted.y < Self.canvas.height / 2, "top right")
        #expect(painted.width * painted.height < Self.canvas.pixelCount / 8, "a strip, not a frame")

        // The same lines: nothing to paint.
        var asked = 0
        overlay.refresh(paused: false, canvas: Self.canvas, rotation: .none) { _ in asked += 1 }
        #expect(asked == 0)

        // The next minute over the picture on screen: exactly the picture painted afresh with it, and only the
        // corner changed.
        let before = screen.front
        overlay.cornerLines = [CornerOverlay.Line("12:35", large: true)]
        overlay.refresh(paused: false, canvas: Self.canvas, rotation: .none) { content in
            asked += 1
            #expect(!screen.show(content).isPicture)
        }
        #expect(asked == 1)
        let fresh = Screen()
        let reference = try Self.overlay()
        reference.cornerLines = overlay.cornerLines
        _ = fresh.show(Self.decorated(.frame(blue, Self.record), by: reference))
        #expect(screen.front == fresh.front)
        let redrawn = try #require(Self.difference(before, screen.front))
        #expect(redrawn.x >= painted.x - 40 && redrawn.y <= painted.y + painted.height)
        #expect(redrawn.width * redrawn.height < Self.canvas.pixelCount / 8)

        // The lines gone (the screen went dark, or the texts went stale): the photo as it was.
        overlay.cornerLines = []
        overlay.refresh(paused: false, canvas: Self.canvas, rotation: .none) { content in _ = screen.show(content) }
        #expect(screen.front == plain.front)
    }

    @Test func eachFadeStepCarriesTheCornerAndTheRedrawAfterItStartsFromTheNewPicture() throws {
        let overlay = try Self.overlay()
        let screen = Screen()
        let blue = try Self.photo(RGBColor(red: 30, green: 60, blue: 160))
        let red = try Self.photo(RGBColor(red: 180, green: 30, blue: 30))
        overlay.cornerLines = [CornerOverlay.Line("07:59", large: true)]
        _ = screen.show(Self.decorated(.frame(blue, Self.record), by: overlay))
        for weight in [64, 128, 192] {
            _ = screen.show(Self.decorated(.blend(from: blue, to: red, weight: weight, Self.record), by: overlay))
            let step = Screen()
            _ = step.show(.blend(from: blue, to: red, weight: weight, Self.record))
            #expect(Self.difference(screen.front, step.front) != nil, "the clock is in the step at \(weight)")
        }
        _ = screen.show(Self.decorated(.frame(red, Self.record), by: overlay))
        overlay.cornerLines = [CornerOverlay.Line("08:00", large: true)]
        overlay.refresh(paused: false, canvas: Self.canvas, rotation: .none) { content in _ = screen.show(content) }
        let fresh = Screen()
        let reference = try Self.overlay()
        reference.cornerLines = overlay.cornerLines
        _ = fresh.show(Self.decorated(.frame(red, Self.record), by: reference))
        #expect(screen.front == fresh.front, "the minute's redraw restores the new slide under the old text")
    }
}
