import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineImage

/// Pixels a person would see: each test encodes a photo with libjpeg-turbo, renders it, and looks at the frame.
@Suite struct FrameRendererTests {
    let folder: TemporaryFolder
    let renderer = FrameRenderer(budget: MemoryBudget(limit: 256 << 20))

    init() throws {
        folder = try TemporaryFolder()
    }

    static func channels(_ pixel: UInt32) -> (Int, Int, Int) {
        (Int(pixel >> 16 & 0xFF), Int(pixel >> 8 & 0xFF), Int(pixel & 0xFF))
    }

    static func close(_ pixel: UInt32, _ color: RGBColor, tolerance: Int = 6) -> Bool {
        let (red, green, blue) = channels(pixel)
        return abs(red - Int(color.red)) <= tolerance && abs(green - Int(color.green)) <= tolerance
            && abs(blue - Int(color.blue)) <= tolerance
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String { try folder.write(name, bytes) }

    @Test(arguments: JPEGFixture.Subsampling.allCases)
    func everySubsamplingShowsItsColourCentredOnTheBackground(subsampling: JPEGFixture.Subsampling) throws {
        let size = Size(width: 300, height: 200)
        let color = subsampling == .gray ? RGBColor(red: 90, green: 90, blue: 90) : JPEGFixture.green
        let path = try write(
            "s.jpg",
            try JPEGFixture.encode(rgb: JPEGFixture.solid(color, size: size), size: size, subsampling: subsampling))
        let background = RGBColor(red: 1, green: 2, blue: 3)
        let (frame, plan) = try renderer.render(
            path, options: RenderOptions(canvas: Size(width: 160, height: 160), background: background))
        #expect(frame.size == Size(width: 160, height: 160))
        // 300x200 contained in 160x160 is 160x107, 26 rows of margin above and 27 below.
        #expect(plan.placement.destination == Placement.Rect(x: 0, y: 26, width: 160, height: 107))
        for y in [0, 25, 133, 159] {
            for x in [0, 80, 159] { #expect(frame.pixel(x: x, y: y) == background.xrgb, "letterbox at \(x),\(y)") }
        }
        for y in [26, 80, 132] {
            for x in [0, 80, 159] { #expect(Self.close(frame.pixel(x: x, y: y), color), "picture at \(x),\(y)") }
        }
    }

    /// Stored quadrants are red, green, blue, yellow (TL, TR, BL, BR). Where each lands once the EXIF orientation
    /// is applied, written out by hand from the EXIF specification's pictures, not derived from the code.
    static let uprightCorners: [Orientation: [RGBColor]] = [
        .up: [JPEGFixture.red, JPEGFixture.green, JPEGFixture.blue, JPEGFixture.yellow],
        .mirrored: [JPEGFixture.green, JPEGFixture.red, JPEGFixture.yellow, JPEGFixture.blue],
        .rotated180: [JPEGFixture.yellow, JPEGFixture.blue, JPEGFixture.green, JPEGFixture.red],
        .flippedVertically: [JPEGFixture.blue, JPEGFixture.yellow, JPEGFixture.red, JPEGFixture.green],
        .transposed: [JPEGFixture.red, JPEGFixture.blue, JPEGFixture.green, JPEGFixture.yellow],
        .rotated90: [JPEGFixture.blue, JPEGFixture.red, JPEGFixture.yellow, JPEGFixture.green],
        .transversed: [JPEGFixture.yellow, JPEGFixture.green, JPEGFixture.blue, JPEGFixture.red],
        .rotated270: [JPEGFixture.green, JPEGFixture.yellow, JPEGFixture.red, JPEGFixture.blue],
    ]

    func quadrantPhoto(orientation: Orientation) throws -> String {
        let stored = Size(width: 128, height: 64)
        let jpeg = try JPEGFixture.encode(rgb: JPEGFixture.quadrants(size: stored), size: stored)
        return try write(
            "q\(orientation.rawValue).jpg",
            JPEGFixture.inserting(JPEGFixture.exifSegment(orientation: orientation.rawValue), into: jpeg))
    }

    @Test(arguments: Orientation.allCases)
    func eachOrientationPutsEveryQuadrantInItsCorner(orientation: Orientation) throws {
        let canvas = orientation.swapsAxes ? Size(width: 48, height: 96) : Size(width: 96, height: 48)
        let (frame, _) = try renderer.render(
            try quadrantPhoto(orientation: orientation), options: RenderOptions(canvas: canvas))
        let expected = try #require(Self.uprightCorners[orientation])
        let w = canvas.width
        let h = canvas.height
        let samples = [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)]
        for (index, (x, y)) in samples.enumerated() {
            #expect(
                Self.close(frame.pixel(x: x, y: y), expected[index]), "corner \(index) of orientation \(orientation)")
        }
    }

    @Test(arguments: [Rotation.clockwise90, .upsideDown, .clockwise270])
    func panelRotationTurnsTheUprightPicture(rotation: Rotation) throws {
        let canvas = Size(width: 96, height: 48)
        let (frame, _) = try renderer.render(
            try quadrantPhoto(orientation: .up), options: RenderOptions(canvas: canvas, rotation: rotation))
        #expect(frame.size == rotation.scanoutSize(forCompose: canvas))
        let w = frame.size.width
        let h = frame.size.height
        // Upright TL is red; after a clockwise turn of 90 it is at the top right, etc.
        let redCorner: (Int, Int)
        switch rotation {
        case .clockwise90: redCorner = (3 * w / 4, h / 4)
        case .upsideDown: redCorner = (3 * w / 4, 3 * h / 4)
        default: redCorner = (w / 4, 3 * h / 4)
        }
        #expect(Self.close(frame.pixel(x: redCorner.0, y: redCorner.1), JPEGFixture.red))
    }

    @Test func coverFillsThePanelAndCropsTheSides() throws {
        // 400x100: a red band on the left quarter, blue on the right quarter, green between.
        let size = Size(width: 400, height: 100)
        var pixels: [UInt8] = []
        for _ in 0..<size.height {
            for x in 0..<size.width {
                let color = x < 100 ? JPEGFixture.red : x >= 300 ? JPEGFixture.blue : JPEGFixture.green
                pixels += [color.red, color.green, color.blue]
            }
        }
        let path = try write("wide.jpg", try JPEGFixture.encode(rgb: pixels, size: size))
        let (frame, _) = try renderer.render(
            path, options: RenderOptions(canvas: Size(width: 100, height: 100), fit: .cover))
        for x in [0, 50, 99] {
            for y in [0, 50, 99] { #expect(Self.close(frame.pixel(x: x, y: y), JPEGFixture.green)) }
        }
    }

    @Test func adobeCMYKShowsTheColoursOtherViewersShow() throws {
        // Adobe stores CMYK inverted: raw (255, 0, 0, 255) is red, raw (255, 255, 255, 255) white.
        let size = Size(width: 32, height: 16)
        var raw: [UInt8] = []
        for _ in 0..<size.height {
            for x in 0..<size.width { raw += x < 16 ? [255, 0, 0, 255] : [255, 255, 255, 255] }
        }
        let path = try write("cmyk.jpg", try JPEGFixture.encode(cmyk: raw, size: size))
        #expect(try renderer.header(of: path).jpeg?.colorModel == .ycck)
        let (frame, _) = try renderer.render(path, options: RenderOptions(canvas: size))
        #expect(Self.close(frame.pixel(x: 4, y: 8), RGBColor(red: 255, green: 0, blue: 0), tolerance: 8))
        #expect(Self.close(frame.pixel(x: 28, y: 8), RGBColor(red: 255, green: 255, blue: 255), tolerance: 8))
    }

    @Test func reductionAveragesInsteadOfPickingPixels() throws {
        // A one-pixel checkerboard: nearest-neighbour would give black or white, a real filter mid grey.
        let size = Size(width: 256, height: 256)
        var pixels: [UInt8] = []
        for y in 0..<size.height {
            for x in 0..<size.width {
                let value: UInt8 = (x + y) % 2 == 0 ? 255 : 0
                pixels += [value, value, value]
            }
        }
        let path = try write("checker.jpg", try JPEGFixture.encode(rgb: pixels, size: size, quality: 100))
        let (frame, _) = try renderer.render(path, options: RenderOptions(canvas: Size(width: 100, height: 100)))
        for (x, y) in [(10, 10), (50, 50), (90, 30)] {
            let (red, _, _) = Self.channels(frame.pixel(x: x, y: y))
            #expect((100...156).contains(red), "pixel \(x),\(y) is \(red)")
        }
    }

    /// A 16x16 baseline JPEG whose frame header declares `declared`: a crafted or huge photo's header, with data
    /// for 16x16 only.
    func jpegDeclaring(_ declared: Size, named name: String) throws -> String {
        let size = Size(width: 16, height: 16)
        var jpeg = try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.red, size: size), size: size)
        let sof = try #require(JPEGFixture.offset(ofMarker: 0xC0, in: jpeg))
        let fields = [declared.height, declared.width].flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        jpeg.replaceSubrange(sof + 5..<sof + 9, with: fields)
        return try write(name, jpeg)
    }

    @Test func aDecompressionBombIsRefusedBeforeAnythingIsAllocated() throws {
        let path = try jpegDeclaring(Size(width: 40000, height: 40000), named: "bomb.jpg")
        let budget = MemoryBudget(limit: 64 << 20)
        #expect {
            _ = try FrameRenderer(budget: budget).render(
                path, options: RenderOptions(canvas: Size(width: 800, height: 480)))
        } throws: { error in
            guard let error = error as? ImageError else { return false }
            return error.reason == .tooManyPixels(Size(width: 40000, height: 40000), limitMegapixels: 1000)
                && error.description.hasPrefix(
                    "\(path): 40000x40000 is 1600.0 megapixels, above the 1000 megapixels no photo may have")
        }
        #expect(budget.peak == 0)
    }

    /// 108 megapixels (Xiaomi's 12000x9000) was above the old cap of 100; a baseline JPEG that size costs little at
    /// 1/8, so it is decoded, not refused. This one's data is 16x16: libjpeg pads the rest and warns, and the
    /// photo is shown with the warning.
    @Test func aHugeBaselineJPEGIsJudgedByItsCostNotItsPixels() throws {
        let path = try jpegDeclaring(Size(width: 12000, height: 9000), named: "huge.jpg")
        let budget = MemoryBudget(limit: 64 << 20)
        let renderer = FrameRenderer(budget: budget)
        let (_, plan) = try renderer.render(path, options: RenderOptions(canvas: Size(width: 800, height: 480)))
        #expect(plan.header.size == Size(width: 12000, height: 9000))
        #expect(plan.scaleDescription == "1/8")
        #expect(budget.peak > 0 && budget.peak < 8 << 20, "charged \(budget.peak)")
        #expect(renderer.takeWarnings().contains { $0.contains("huge.jpg") })
    }

    @Test func aDecodeOverTheBudgetSaysWhatItNeeded() throws {
        let size = Size(width: 640, height: 480)
        let path = try write(
            "big.jpg",
            try JPEGFixture.encode(rgb: JPEGFixture.solid(JPEGFixture.red, size: size), size: size, progressive: true))
        let budget = MemoryBudget(limit: 1 << 20)
        #expect {
            _ = try FrameRenderer(budget: budget).render(
                path, options: RenderOptions(canvas: Size(width: 800, height: 480)))
        } throws: { error in
            guard let error = error as? ImageError, case .overBudget(let exceeded) = error.reason else { return false }
            return exceeded.requested > 0
                && error.description.contains("big.jpg: refused: decoding a 640x480 progressive JPEG at 1/1")
                && error.description.contains("needs") && error.description.contains("of the 1.0 MiB memory budget")
        }
        #expect(budget.used == 0)
    }

    /// Noise, so every part of the picture needs its own entropy-coded data.
    static func noise(_ size: Size) -> [UInt8] {
        var noise: [UInt8] = []
        var seed: UInt32 = 7
        for _ in 0..<size.pixelCount * 3 {
            seed = seed &* 1_103_515_245 &+ 12345
            noise.append(UInt8(truncatingIfNeeded: seed >> 16))
        }
        return noise
    }

    /// As djpeg, Pillow and viewers do: damage libjpeg decodes past is shown (with one warning naming the file), and
    /// the picture is the very one the undamaged file gives.
    @Test(arguments: [false, true])
    func photosLibjpegDecodesPastDamageAreShownWithAWarning(progressive: Bool) throws {
        let size = Size(width: 256, height: 192)
        let jpeg = try JPEGFixture.encode(rgb: Self.noise(size), size: size, progressive: progressive)
        let options = RenderOptions(canvas: Size(width: 128, height: 96))
        let clean = try renderer.render(try write("clean.jpg", jpeg), options: options).frame
        #expect(renderer.takeWarnings().isEmpty)
        let dqt = try #require(JPEGFixture.offset(ofMarker: 0xDB, in: jpeg))
        let eoi = jpeg.count - 2
        // Stray bytes before a table marker (Pillow's junk_jpeg_header.jpg) and before the end marker (what a
        // document scanner wrote: "extraneous bytes before marker"); a baseline file whose end marker is missing.
        var damaged = [
            ("junk-before-table.jpg", Array(jpeg[..<dqt]) + [1, 2, 3, 4, 5] + Array(jpeg[dqt...]), "extraneous bytes"),
            (
                "junk-before-end.jpg", Array(jpeg[..<eoi]) + [0x12, 0x34, 0x56] + Array(jpeg[eoi...]),
                "extraneous bytes"
            ),
        ]
        if !progressive { damaged.append(("no-end-marker.jpg", Array(jpeg[..<eoi]), "no end marker")) }
        for (name, bytes, warning) in damaged {
            let path = try write(name, bytes)
            let frame = try renderer.render(path, options: options).frame
            let same = (0..<frame.size.pixelCount).allSatisfy { frame.pixels[$0] == clean.pixels[$0] }
            #expect(same, "\(name) shows the undamaged picture")
            let warnings = renderer.takeWarnings()
            // The entropy decoder may take bytes before the end marker as padding of the last scan, unwarned.
            if name == "junk-before-end.jpg" && warnings.isEmpty { continue }
            #expect(
                warnings.count == 1 && warnings.allSatisfy { $0.hasPrefix(path) && $0.contains(warning) }, "\(warnings)"
            )
        }
    }

    /// A file that ends before its picture does is skipped, not shown grey-bottomed: it is nearly always one still
    /// being copied. For a progressive file a missing end marker cannot be told from missing scans, so it counts too.
    @Test(arguments: [false, true])
    func truncatedPhotosAreRefusedWithLibjpegsReason(progressive: Bool) throws {
        let size = Size(width: 256, height: 256)
        let jpeg = try JPEGFixture.encode(rgb: Self.noise(size), size: size, progressive: progressive)
        var cuts = [
            ("cut.jpg", Array(jpeg.prefix(jpeg.count * 6 / 10))), ("cut-late.jpg", Array(jpeg.prefix(jpeg.count - 40))),
        ]
        if progressive { cuts.append(("no-end-marker.jpg", Array(jpeg.prefix(jpeg.count - 2)))) }
        let options = RenderOptions(canvas: Size(width: 100, height: 100))
        for (name, bytes) in cuts {
            let path = try write(name, bytes)
            #expect {
                _ = try renderer.render(path, options: options)
            } throws: { error in
                guard let error = error as? ImageError, case .decodeFailed(let reason) = error.reason else {
                    return false
                }
                return reason.contains("Premature end of JPEG file") && error.description.hasPrefix(path)
            }
        }
        #expect(renderer.budget.used == 0)
    }

    /// A decode called off midway stops at the next batch of rows, not at the photo's last row, and gives back
    /// everything it was charged.
    @Test func aCancelledDecodeStopsWithinABatch() throws {
        let size = Size(width: 512, height: 2048)
        let path = try write("tall.jpg", try JPEGFixture.encode(rgb: Self.noise(size), size: size))
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 256 << 20))
        final class Asked { var count = 0 }
        let asked = Asked()
        renderer.isCancelled = {
            asked.count += 1
            return asked.count > 3
        }
        #expect {
            _ = try renderer.render(path, options: RenderOptions(canvas: Size(width: 512, height: 2048)))
        } throws: { error in
            (error as? ImageError)?.reason == .cancelled
        }
        // Three batches of rows (8 or 16 each) out of 2048 rows were decoded, and no more was asked.
        #expect(asked.count == 4)
        #expect(renderer.budget.used == 0)
        renderer.isCancelled = nil
        let whole = try renderer.render(path, options: RenderOptions(canvas: Size(width: 128, height: 512)))
        #expect(whole.frame.size == Size(width: 128, height: 512))
    }

    @Test func unreadableFilesNameThePathAndErrno() {
        #expect {
            _ = try renderer.render("/nonexistent/a.jpg", options: RenderOptions(canvas: Size(width: 10, height: 10)))
        } throws: { error in
            (error as? ImageError)?.description == "/nonexistent/a.jpg: cannot open: No such file or directory"
        }
    }

    @Test func framesWriteAsPPMAndPNG() throws {
        let frame = try Frame(size: Size(width: 2, height: 1), budget: MemoryBudget(limit: 1 << 20), purpose: "test")
        frame.pixels[0] = 0x0011_2233
        frame.pixels[1] = 0x00FF_FFFF
        #expect(FrameWriter.ppm(frame) == Array("P6\n2 1\n255\n".utf8) + [0x11, 0x22, 0x33, 255, 255, 255])
        let png = FrameWriter.png(frame)
        #expect(png.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(Array(png[12..<16]) == Array("IHDR".utf8))
        #expect(Array(png[16..<24]) == [0, 0, 0, 2, 0, 0, 0, 1])
        #expect(Array(png.suffix(8)) == Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82])
        let path = "\(folder.path)/out.png"
        try FrameWriter.write(frame, to: path, format: .png)
        #expect(try FileBytes.read(path) == png)
    }
}

/// Every kind of bad file, as a file named `.jpg`, through the whole render path: one line naming the file.
@Suite struct BadPhotoTests {
    static func badFiles() throws -> [(name: String, bytes: [UInt8], reason: String)] {
        let size = Size(width: 64, height: 64)
        let jpeg = try JPEGFixture.encode(rgb: JPEGFixture.quadrants(size: size), size: size)
        guard let sof = JPEGFixture.offset(ofMarker: 0xC0, in: jpeg) else { return [] }
        var twelveBit = jpeg
        twelveBit[sof + 1] = 0xC1
        twelveBit[sof + 4] = 12
        var lossless = jpeg
        lossless[sof + 1] = 0xC3
        var random: [UInt8] = []
        var seed: UInt32 = 1
        for _ in 0..<4096 {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            random.append(UInt8(truncatingIfNeeded: seed >> 24))
        }
        random[0] = 0x42
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        return [
            ("zero.jpg", [], "empty file (0 bytes)"),
            ("random.jpg", random, "not a photo Vitrine can show (starts with 0x42"),
            ("png.jpg", png, "malformed PNG: file ends inside the header (truncated)"),
            ("header-only.jpg", Array(jpeg.prefix(sof + 4)), "malformed JPEG: frame header is truncated"),
            ("truncated.jpg", Array(jpeg.prefix(jpeg.count - 200)), "cannot decode: Premature end of JPEG file"),
            ("twelve.jpg", twelveBit, "unsupported JPEG: 12-bit samples"),
            ("lossless.jpg", lossless, "unsupported JPEG: lossless JPEG (SOF3)"),
        ]
    }

    @Test func eachIsRefusedWithItsNameAndReason() throws {
        let folder = try TemporaryFolder()
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 64 << 20))
        let cases = try Self.badFiles()
        #expect(cases.count == 7)
        for bad in cases {
            let path = try folder.write(bad.name, bad.bytes)
            do {
                _ = try renderer.render(path, options: RenderOptions(canvas: Size(width: 80, height: 48)))
                Issue.record("\(bad.name) was rendered")
            } catch {
                #expect(error.description.hasPrefix("\(path): \(bad.reason)"), "\(error.description)")
                #expect(!error.description.contains("\n"))
            }
        }
        #expect(renderer.budget.used == 0)
    }
}
