import Testing
import VitrineCore
import VitrineImage
import VitrineTestSupport

@testable import VitrineDisplay

#if canImport(Glibc)
    import Glibc
#endif

/// The overlay's corner as the display paints it: into every picture and fade step as it is painted, and redrawn
/// over the picture on screen at the minute as a strip, never a new picture.
@Suite struct CornerOverlayTests {
    static let canvas = Size(width: 320, height: 200)
    static let record = PresentRecord(category: "A", slide: "a", file: nil, decodeMilliseconds: nil)

    /// Two scanout buffers, painted and flipped as `DisplayController` does: with `tracksDamage`, an overlay copies
    /// only what `BufferDamage` says differs between the buffers.
    final class Screen {
        private let buffers: [UnsafeMutablePointer<UInt32>]
        private var frontIndex = 0
        private var damage = BufferDamage(bufferCount: 2)
        let tracksDamage: Bool
        /// Bytes copied for overlays.
        private(set) var copied = 0

        init(tracksDamage: Bool = false) {
            self.tracksDamage = tracksDamage
            let count = CornerOverlayTests.canvas.pixelCount
            buffers = (0..<2).map { _ in
                let buffer = UnsafeMutablePointer<UInt32>.allocate(capacity: count)
                buffer.initialize(repeating: 0, count: count)
                return buffer
            }
        }

        deinit { for buffer in buffers { buffer.deallocate() } }

        var front: [UInt32] {
            Array(UnsafeBufferPointer(start: buffers[frontIndex], count: CornerOverlayTests.canvas.pixelCount))
        }

        /// Paints into the back buffer and flips, as a display does.
        func show(_ content: DisplayContent) -> ShownContent {
            let back = 1 - frontIndex
            var painted = content
            var touched: [Placement.Rect] = []
            var rects: [Placement.Rect]?
            if case .overlay(_, let draw) = content {
                rects = tracksDamage ? damage.rectsToCopy(into: back, from: frontIndex) : nil
                painted = .overlay(copying: rects) { pixels, size, stride in
                    touched = draw(pixels, size, stride)
                    return touched
                }
                copied += rects.map { $0.reduce(0) { $0 + $1.width * $1.height * 4 } } ?? canvas.pixelCount * 4
            }
            let shown = painted.paint(
                into: UnsafeMutableRawPointer(buffers[back]), pitch: CornerOverlayTests.canvas.width * 4,
                size: CornerOverlayTests.canvas, front: UnsafeRawPointer(buffers[frontIndex]))
            if content.isOverlay {
                damage.overlayPainted(into: back, from: frontIndex, touched: touched)
            } else {
                damage.picturePainted(into: back)
            }
            frontIndex = back
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
        #expect(Self.difference(screen.front, fresh.front) == nil)
        let redrawn = try #require(Self.difference(before, screen.front))
        #expect(redrawn.x >= painted.x - 40 && redrawn.y <= painted.y + painted.height)
        #expect(redrawn.width * redrawn.height < Self.canvas.pixelCount / 8)

        // The lines gone (the screen went dark, or the texts went stale): the photo as it was.
        overlay.cornerLines = []
        overlay.refresh(paused: false, canvas: Self.canvas, rotation: .none) { content in _ = screen.show(content) }
        #expect(Self.difference(screen.front, plain.front) == nil)
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
        #expect(
            Self.difference(screen.front, fresh.front) == nil,
            "the minute's redraw restores the new slide under the old text")
    }

    @Test func anOverlayCopiesOnlyWhatDiffersBetweenTheBuffers() throws {
        let blue = try Self.photo(RGBColor(red: 30, green: 60, blue: 160))
        let red = try Self.photo(RGBColor(red: 180, green: 30, blue: 30))
        let textRenderer = try TextRenderer(pixelHeight: 16)
        /// Minutes, a banner that comes and goes, a new slide and more minutes, on one screen; its screen after
        /// each step.
        func play(on screen: Screen) throws -> [[UInt32]] {
            let overlay = try TextOverlay(renderer: textRenderer)
            overlay.corner = try Self.overlay().corner
            var screens: [[UInt32]] = []
            for step in 0..<12 {
                overlay.cornerLines = [CornerOverlay.Line("12:\(30 + step)", large: true)]
                if step == 0 || step == 8 {
                    _ = screen.show(Self.decorated(.frame(step == 0 ? blue : red, Self.record), by: overlay))
                } else {
                    if step == 3 { overlay.announce("Summer", now: 0) }
                    if step == 5 { overlay.timerFired(now: TextOverlay.bannerSeconds + 1) }
                    overlay.refresh(paused: false, canvas: Self.canvas, rotation: .none) { _ = screen.show($0) }
                }
                screens.append(screen.front)
            }
            return screens
        }
        let tracked = Screen(tracksDamage: true)
        let whole = Screen()
        let trackedScreens = try play(on: tracked)
        let wholeScreens = try play(on: whole)
        for step in trackedScreens.indices {
            #expect(Self.difference(trackedScreens[step], wholeScreens[step]) == nil, "step \(step)")
        }
        #expect(Set(wholeScreens.map(\.hashValue)).count >= 10, "every step changed the screen")
        let frame = Self.canvas.pixelCount * 4
        #expect(whole.copied == 10 * frame)
        // The first overlay after each new picture copies the frame (the other buffer holds the slide before);
        // the others copy their corner and the banner's strip.
        #expect(tracked.copied < 3 * frame, "copied \(tracked.copied) bytes for 10 overlays of a \(frame)-byte frame")
    }
}

/// The zone file replaced as `timedatectl set-timezone` does (a new link renamed onto it) is noticed; other files
/// in the folder are not.
@Suite struct TimeZoneWatcherTests {
    @Test func aReplacedZoneLinkIsNoticedAndOtherFilesAreNot() throws {
        let temporary = try TemporaryFolder()
        let folder = temporary.path
        defer {
            for name in ["localtime", "hostname"] { unlink("\(folder)/\(name)") }
            rmdir(folder)
        }
        #expect(symlink("/usr/share/zoneinfo/Europe/Berlin", "\(folder)/localtime") == 0)
        let watcher = try TimeZoneWatcher(path: "\(folder)/localtime")
        #expect(!watcher.takeChange())
        #expect(symlink("/usr/share/zoneinfo/America/New_York", "\(folder)/hostname") == 0)
        #expect(!watcher.takeChange(), "another file")
        #expect(symlink("/usr/share/zoneinfo/America/New_York", "\(folder)/.localtime.new") == 0)
        #expect(rename("\(folder)/.localtime.new", "\(folder)/localtime") == 0)
        #expect(watcher.takeChange(), "the zone link replaced")
        #expect(!watcher.takeChange(), "read once")
    }
}
