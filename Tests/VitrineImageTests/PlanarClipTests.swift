import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineImage

/// A clip's pictures in NV12 for a plane that converts colours itself: the values are read back with this test's
/// own Y'CbCr arithmetic (the matrices' Kr and Kb, not libswscale's), so a plane shown these bytes with the frame's
/// encoding shows what the RGB path shows.
@Suite struct PlanarClipTests {
    let budget = MemoryBudget(limit: 256 << 20)

    /// The RGB a plane makes of the NV12 frame's pixel (x, y), by the textbook formula for its matrix and range.
    static func rgb(_ frame: Frame, x: Int, y: Int) -> (Int, Int, Int) {
        let width = frame.size.width
        let luma = Double(frame.luma[y * width + x])
        let cb = Double(frame.chroma[y / 2 * width + x / 2 * 2])
        let cr = Double(frame.chroma[y / 2 * width + x / 2 * 2 + 1])
        let (kr, kb): (Double, Double) =
            switch frame.encoding.matrix {
            case .bt601: (0.299, 0.114)
            case .bt709: (0.2126, 0.0722)
            case .bt2020: (0.2627, 0.0593)
            }
        let full = frame.encoding.fullRange
        let ey = full ? luma / 255 : (luma - 16) / 219
        let pb = full ? (cb - 128) / 255 : (cb - 128) / 224
        let pr = full ? (cr - 128) / 255 : (cr - 128) / 224
        let red = ey + 2 * (1 - kr) * pr
        let blue = ey + 2 * (1 - kb) * pb
        let green = (ey - kr * red - kb * blue) / (1 - kr - kb)
        func level(_ value: Double) -> Int { max(0, min(255, Int((value * 255).rounded()))) }
        return (level(red), level(green), level(blue))
    }

    func firstPictures(planar: Bool, canvas: Size, count: Int) throws -> (
        frames: [Frame], planar: Bool?, box: Placement.Rect
    ) {
        let path = "\(ClipImageTests.fixtures)/counter.mp4"
        let options = RenderOptions(canvas: canvas)
        let (poster, plan) = try FrameRenderer(budget: budget).render(path, options: options)
        let wakeup = try Wakeup()
        let stream = ClipStream(
            path: path, poster: poster,
            settings: ClipStream.Settings(
                options: options, decoding: .software, maxSeconds: nil, loop: false, poolFrames: count + 1,
                planar: planar),
            budget: budget, wakeup: wakeup)
        defer { stream.stop() }
        var frames: [Frame] = []
        var started: Bool?
        ClipImageTests.read(stream, wakeup) { output in
            switch output {
            case .started(_, _, _, let planar): started = planar
            case .picture(let picture): frames.append(picture.frame)
            default: break
            }
            return frames.count >= count
        }
        return (frames, started, plan.placement.destination)
    }

    @Test func nv12PicturesHoldTheClipsValuesAndThePostersMargins() throws {
        // 160x90 pictures in a 320x240 screen: a 320x180 box from row 30, even on both counts.
        let canvas = Size(width: 320, height: 240)
        let played = try firstPictures(planar: true, canvas: canvas, count: 3)
        #expect(played.planar == true)
        let rgbPath = try firstPictures(planar: false, canvas: canvas, count: 3)
        try #require(played.frames.count == 3 && rgbPath.frames.count == 3)
        for (index, frame) in played.frames.enumerated() {
            #expect(frame.layout == .nv12)
            // The number each picture carries, read through this test's arithmetic.
            let number = ClipImageTests.counter(
                pixel: { x, y in
                    let (red, green, blue) = Self.rgb(frame, x: x, y: y)
                    return UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue)
                }, box: played.box)
            #expect(number == index)
            // Inside the box, the colours the RGB path gives, within the filters' and roundings' few levels.
            let reference = rgbPath.frames[index]
            var worst = 0
            var total = 0
            var samples = 0
            for y in stride(from: played.box.y + 2, to: played.box.y + played.box.height - 2, by: 7) {
                for x in stride(from: 2, to: canvas.width - 2, by: 5) {
                    let (red, green, blue) = Self.rgb(frame, x: x, y: y)
                    let pixel = reference.pixel(x: x, y: y)
                    let difference = max(
                        abs(red - Int(pixel >> 16 & 0xFF)), abs(green - Int(pixel >> 8 & 0xFF)),
                        abs(blue - Int(pixel & 0xFF)))
                    worst = max(worst, difference)
                    total += difference
                    samples += 1
                }
            }
            // Chroma is halved in NV12 and full in the RGB path's scaling: edges differ, flat areas do not.
            #expect(Double(total) / Double(samples) < 6, "mean difference \(Double(total) / Double(samples))")
            // The margins are the poster's black, in the clip's range.
            let black = frame.encoding.fullRange ? 0 : 16
            #expect(frame.luma[5 * canvas.width + 5] == UInt8(black))
            #expect(frame.chroma[2 * canvas.width + 4] == 128 && frame.chroma[2 * canvas.width + 5] == 128)
            #expect(frame.luma[(canvas.height - 3) * canvas.width + 100] == UInt8(black))
        }
    }

    @Test func aBoxOnAnOddRowStaysRGB() throws {
        // 160x90 in 320x242: a 320x180 box from row 31, which NV12's halved chroma cannot start on.
        let played = try firstPictures(planar: true, canvas: Size(width: 320, height: 242), count: 1)
        #expect(played.planar == false)
        #expect(played.frames.first?.layout == .xrgb)
    }

    @Test func nv12TurnsBackIntoTheSameRGB() throws {
        let size = Size(width: 64, height: 32)
        let source = try Frame(size: size, budget: budget, purpose: "test")
        for y in 0..<size.height {
            for x in 0..<size.width {
                // Flat 16x16 cells, read in their middles: the halved chroma's filters reach past a 2x2 cell.
                let cell = UInt32((x / 16 * 37 + y / 16 * 91) % 256)
                source.pixels[y * size.width + x] = cell << 16 | (255 - cell) << 8 | (cell * 3 % 256)
            }
        }
        let planar = try Frame(size: size, budget: budget, purpose: "test", layout: .nv12)
        let encoding = YCbCrEncoding(matrix: .bt709, fullRange: false)
        #expect(PlanarFrames.fill(planar, from: source, encoding: encoding))
        planar.encoding = encoding
        let back = try #require(PlanarFrames.xrgbCopy(of: planar, budget: budget, purpose: "test"))
        var worst = 0
        var worstFormula = 0
        for index in 0..<size.pixelCount
        where (6..<10).contains(index % size.width % 16) && (6..<10).contains(index / size.width % 16) {
            let (a, b) = (source.pixels[index], back.pixels[index])
            for shift: UInt32 in [0, 8, 16] {
                worst = max(worst, abs(Int(a >> shift & 0xFF) - Int(b >> shift & 0xFF)))
            }
            // And the test's own formula reads the NV12 bytes as the same colour.
            let (red, green, blue) = Self.rgb(planar, x: index % size.width, y: index / size.width)
            worstFormula = max(
                worstFormula, abs(red - Int(a >> 16 & 0xFF)), abs(green - Int(a >> 8 & 0xFF)),
                abs(blue - Int(a & 0xFF)))
        }
        // Limited range has 219 levels of Y' for 256 of each colour, and Cb, Cr 224: rounding costs a few.
        #expect(worst <= 4, "worst difference there and back \(worst)")
        #expect(worstFormula <= 4, "worst difference read by the formula \(worstFormula)")
    }
}
