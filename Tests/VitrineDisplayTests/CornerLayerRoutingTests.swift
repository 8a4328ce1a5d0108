import Testing
import VitrineCore
import VitrineImage
import VitrinePlatform

@testable import VitrineDisplay

/// Where the corner's text goes with a clip's NV12 picture: on the plane above it where the screen has one (the
/// picture stays NV12), painted into the picture where it has none or the plane refuses.
@Suite struct CornerLayerRoutingTests {
    /// A screen at the hardware boundary: it records what it is asked to paint and which layer goes over which
    /// buffer, and completes each flip at the next read.
    final class PlaneScreen: DisplayExecutor {
        enum Painted: Equatable { case nv12, rgb, decorated, overlay, other }

        let size = CornerOverlayTests.canvas
        let bufferCount = 2
        let eventDescriptors: [Int32] = []
        let name = "plane screen"
        let takesPlanarFrames = true
        let takesCornerLayer: Bool
        var refusesLayers = false
        private(set) var painted: [(Painted, buffer: Int)] = []
        private(set) var layers: [(CornerLayer, buffer: Int)] = []
        private var pending: UInt64?

        init(takesCornerLayer: Bool) { self.takesCornerLayer = takesCornerLayer }

        func paint(_ content: DisplayContent, buffer: Int, front: Int) {
            let kind: Painted
            switch content {
            case .frame(let frame, _): kind = frame.layout == .nv12 ? .nv12 : .rgb
            case .decorated: kind = .decorated
            case .overlay: kind = .overlay
            default: kind = .other
            }
            painted.append((kind, buffer))
        }

        func showLayer(_ layer: CornerLayer, buffer: Int) -> Bool {
            guard !refusesLayers else { return false }
            layers.append((layer, buffer))
            return true
        }

        func flip(buffer: Int, serial: UInt64) -> DisplayMachine<DisplayContent>.Refusal? {
            pending = serial
            return nil
        }

        func modeset(buffer: Int) -> Bool { true }
        func setPower(_ on: Bool) {}
        func close(flipInFlight: Bool) {}

        func readCompletions() -> [(serial: UInt64, sequence: UInt32, time: Double)] {
            defer { pending = nil }
            return pending.map { [($0, 0, 0)] } ?? []
        }
    }

    static func controller(_ screen: PlaneScreen, clock: String?) throws -> DisplayController {
        let controller = try DisplayController(executor: screen, fadeSeconds: nil, log: EventLog(write: { _ in }))
        if let clock {
            let overlay = try CornerOverlayTests.overlay()
            overlay.cornerLines = [CornerOverlay.Line(clock, large: true)]
            controller.corner = (overlay, CornerOverlayTests.canvas, Rotation.none)
        }
        return controller
    }

    static func clipPicture() throws -> Frame {
        let frame = try Frame(
            size: CornerOverlayTests.canvas, budget: MemoryBudget(limit: 1 << 20), purpose: "test", layout: .nv12)
        frame.luma.update(repeating: 120, count: CornerOverlayTests.canvas.pixelCount)
        frame.chroma.update(repeating: 128, count: CornerOverlayTests.canvas.pixelCount / 2)
        return frame
    }

    static func show(_ content: DisplayContent, on controller: DisplayController, at now: Double) {
        controller.show(content, now: now)
        controller.handleReadable(now: now + 0.016)
    }

    @Test func theClockOverAClipGoesOnThePlaneAboveAndThePictureStaysNV12() throws {
        let screen = PlaneScreen(takesCornerLayer: true)
        let controller = try Self.controller(screen, clock: "12:34")
        #expect(controller.takesPlanarClips)
        let picture = try Self.clipPicture()
        Self.show(.frame(picture, CornerOverlayTests.record), on: controller, at: 1)
        Self.show(.frame(picture, CornerOverlayTests.record), on: controller, at: 1.1)
        #expect(screen.painted.map(\.0) == [.nv12, .nv12])
        #expect(screen.layers.map(\.buffer) == screen.painted.map(\.buffer))
        let first = try #require(screen.layers.first?.0)
        // The same lines give the same layer object: a buffer that holds it is not written again.
        #expect(screen.layers.allSatisfy { $0.0 === first })
        let canvas = CornerOverlayTests.canvas
        #expect(first.rect.x > canvas.width / 2 && first.rect.y < canvas.height / 2, "top right: \(first.rect)")
        #expect(first.pixels.count == first.rect.width * first.rect.height)
        #expect(first.pixels.contains { $0 >> 24 == 255 }, "opaque text")
        #expect(first.pixels.contains { $0 == 0 }, "clear between the glyphs")

        // The same screen with a photo: the clock is painted into it, no layer.
        let photo = try CornerOverlayTests.photo(RGBColor(red: 30, green: 60, blue: 160))
        Self.show(.frame(photo, CornerOverlayTests.record), on: controller, at: 2)
        #expect(screen.painted.last?.0 == .decorated)
        #expect(screen.layers.count == 2)
    }

    @Test func whereThePlaneRefusesTheTextIsPaintedIntoThePicture() throws {
        let screen = PlaneScreen(takesCornerLayer: true)
        screen.refusesLayers = true
        let controller = try Self.controller(screen, clock: "12:34")
        Self.show(.frame(try Self.clipPicture(), CornerOverlayTests.record), on: controller, at: 1)
        #expect(screen.painted.map(\.0) == [.nv12, .decorated])
        #expect(screen.painted.map(\.buffer).allSatisfy { $0 == screen.painted[0].buffer })
    }

    @Test func withoutAPlaneAboveAClipWithAClockComesInRGB() throws {
        let screen = PlaneScreen(takesCornerLayer: false)
        #expect(try !Self.controller(screen, clock: "12:34").takesPlanarClips)
        #expect(try Self.controller(screen, clock: nil).takesPlanarClips)
        let plain = try Self.controller(PlaneScreen(takesCornerLayer: true), clock: nil)
        #expect(plain.takesPlanarClips)
    }
}
