import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

/// PNGs and WebPs as a person would see them: each test encodes a picture with libspng or libwebp, renders it,
/// and looks at the frame.
@Suite struct PNGWebPRenderingTests {
    let folder: TemporaryFolder
    let renderer = FrameRenderer(budget: MemoryBudget(limit: 256 << 20))
    static let background = RGBColor(red: 200, green: 0, blue: 0)

    init() throws {
        folder = try TemporaryFolder()
    }

    /// The quadrant colours at the centre of each quadrant of a frame filled edge to edge (TL, TR, BL, BR).
    static func corners(_ frame: Frame) -> [UInt32] {
        let (w, h) = (frame.size.width, frame.size.height)
        return [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)].map {
            frame.pixel(x: $0.0, y: $0.1)
        }
    }

    static func matches(_ pixels: [UInt32], _ colors: [RGBColor], tolerance: Int = 6) -> Bool {
        zip(pixels, colors).allSatisfy { FrameRendererTests.close($0, $1, tolerance: tolerance) }
    }

    static let quadrants = [JPEGFixture.red, JPEGFixture.green, JPEGFixture.blue, JPEGFixture.yellow]

    func render(_ name: String, _ bytes: [UInt8], canvas: Size = Size(width: 120, height: 80)) throws -> (
        frame: Frame, plan: DecodePlan
    ) {
        let path = try folder.write(name, bytes)
        return try renderer.render(path, options: RenderOptions(canvas: canvas, background: Self.background))
    }

    @Test(arguments: [false, true])
    func pngQuadrantsLandWhereTheyAre(interlaced: Bool) throws {
        let size = Size(width: 240, height: 160)
        let rgb = ImageFixture.rgb(fromRGBA: ImageFixture.quadrantsRGBA(size: size))
        let png = try ImageFixture.png(samples: rgb, size: size, color: .rgb, interlaced: interlaced)
        let (frame, plan) = try render("q.png", png)
        #expect(plan.header.format == .png)
        #expect(Self.matches(Self.corners(frame), Self.quadrants), "\(Self.corners(frame))")
    }

    @Test func sixteenBitAndGreyPNGsAreShown() throws {
        let size = Size(width: 40, height: 40)
        // 16-bit RGB: every sample 0x80FF (host order, little-endian), which is 128 once reduced to 8 bits.
        let wide: [UInt8] = (0..<size.pixelCount * 6).map { $0 % 2 == 0 ? 0xFF : 0x80 }
        let sixteen = try render("16.png", try ImageFixture.png(samples: wide, size: size, color: .rgb, bitDepth: 16))
        #expect(
            FrameRendererTests.close(
                sixteen.frame.pixel(x: 60, y: 40), RGBColor(red: 128, green: 128, blue: 128), tolerance: 1))
        let grey = try render(
            "g.png",
            try ImageFixture.png(samples: [UInt8](repeating: 77, count: size.pixelCount), size: size, color: .gray))
        #expect(
            FrameRendererTests.close(
                grey.frame.pixel(x: 60, y: 40), RGBColor(red: 77, green: 77, blue: 77), tolerance: 1))
    }

    /// Half-transparent green over the red background: the two mixed, as a viewer shows a PNG on its backdrop.
    @Test func pngAlphaIsComposedOverTheBackground() throws {
        let size = Size(width: 40, height: 40)
        var rgba: [UInt8] = []
        for _ in 0..<size.pixelCount { rgba += [0, 255, 0, 128] }
        let (frame, _) = try render("a.png", try ImageFixture.png(samples: rgba, size: size, color: .rgba))
        // 255*128/255 = 128 green; 200*127/255 = 100 red.
        #expect(
            FrameRendererTests.close(frame.pixel(x: 60, y: 40), RGBColor(red: 100, green: 128, blue: 0), tolerance: 1))
    }

    /// With `contain-blur` a transparent photo shows the blurred fill through it, not the flat background: a
    /// half-transparent green photo is 128 green over the fill, which is the photo as if over black, darkened
    /// (128 * 150 / 256 = 75 green), and no pixel anywhere is the red background.
    @Test func pngAlphaIsComposedOverTheBlurredFill() throws {
        let size = Size(width: 120, height: 240)
        var rgba: [UInt8] = []
        for _ in 0..<size.pixelCount { rgba += [0, 255, 0, 128] }
        let path = try folder.write("logo.png", try ImageFixture.png(samples: rgba, size: size, color: .rgba))
        let (frame, plan) = try renderer.render(
            path,
            options: RenderOptions(
                canvas: Size(width: 320, height: 180), fit: .containBlur, background: Self.background))
        #expect(plan.placement.destination == Placement.Rect(x: 115, y: 0, width: 90, height: 180))
        let fill = RGBColor(red: 0, green: 75, blue: 0)
        let photo = RGBColor(red: 0, green: 165, blue: 0)
        for (x, y) in [(5, 5), (60, 90), (110, 170), (210, 10), (315, 175)] {
            #expect(FrameRendererTests.close(frame.pixel(x: x, y: y), fill, tolerance: 2), "margin \(x),\(y)")
        }
        for (x, y) in [(116, 1), (160, 90), (204, 178)] {
            #expect(FrameRendererTests.close(frame.pixel(x: x, y: y), photo, tolerance: 2), "photo \(x),\(y)")
        }
        var red: [String] = []
        for y in stride(from: 0, to: 180, by: 3) {
            for x in stride(from: 0, to: 320, by: 3) where frame.pixel(x: x, y: y) >> 16 & 0xFF != 0 {
                red.append("\(x),\(y)")
            }
        }
        #expect(red.isEmpty, "red at \(red.prefix(10))")
    }

    @Test func pngExifOrientationTurnsThePicture() throws {
        let size = Size(width: 160, height: 240)
        let rgb = ImageFixture.rgb(fromRGBA: ImageFixture.quadrantsRGBA(size: size))
        let png = try ImageFixture.png(samples: rgb, size: size, color: .rgb, exif: ImageFixture.tiffOrientation(6))
        let (frame, plan) = try render("r.png", png)
        #expect(plan.header.displayedSize == Size(width: 240, height: 160))
        let expected = FrameRendererTests.uprightCorners[.rotated90] ?? []
        #expect(Self.matches(Self.corners(frame), expected), "\(Self.corners(frame))")
    }

    @Test func aPNGNamedJpgIsShownAsAPNG() throws {
        let size = Size(width: 60, height: 40)
        let png = try ImageFixture.png(
            samples: ImageFixture.rgb(fromRGBA: ImageFixture.quadrantsRGBA(size: size)), size: size, color: .rgb)
        let (frame, plan) = try render("misnamed.jpg", png)
        #expect(plan.header.format == .png)
        #expect(Self.matches(Self.corners(frame), Self.quadrants))
    }

    @Test func aTruncatedPNGIsRefusedNamingTheFile() throws {
        let size = Size(width: 200, height: 200)
        var noise: [UInt8] = []
        var seed: UInt32 = 7
        for _ in 0..<size.pixelCount * 3 {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            noise.append(UInt8(truncatingIfNeeded: seed >> 24))
        }
        let png = try ImageFixture.png(samples: noise, size: size, color: .rgb)
        let path = try folder.write("cut.png", Array(png.prefix(png.count / 2)))
        #expect {
            _ = try renderer.render(path, options: RenderOptions(canvas: Size(width: 100, height: 100)))
        } throws: { error in
            let text = (error as? ImageError)?.description ?? ""
            return text.hasPrefix("\(path): cannot decode: libspng") && !text.contains("\n")
        }
    }

    @Test(arguments: [false, true])
    func webpQuadrantsLandWhereTheyAre(lossless: Bool) throws {
        let size = Size(width: 240, height: 160)
        let webp = try ImageFixture.webp(rgba: ImageFixture.quadrantsRGBA(size: size), size: size, lossless: lossless)
        let (frame, plan) = try render("q.webp", webp)
        #expect(plan.header.format == .webp)
        #expect(
            Self.matches(Self.corners(frame), Self.quadrants, tolerance: lossless ? 3 : 12), "\(Self.corners(frame))")
    }

    /// libwebp scales while decoding: a 1200x800 WebP for a 120x80 canvas is decoded at 120x80, never at full size.
    @Test func aLargeWebPIsDecodedStraightToTheCanvasSize() throws {
        let size = Size(width: 1200, height: 800)
        let webp = try ImageFixture.webp(rgba: ImageFixture.quadrantsRGBA(size: size), size: size, lossless: false)
        let (frame, plan) = try render("big.webp", webp)
        #expect(plan.decodedSize == Size(width: 120, height: 80))
        #expect(plan.scaleDescription == "120x80")
        #expect(plan.decoderWorkspaceBytes < 1200 * 800 * 4)
        #expect(Self.matches(Self.corners(frame), Self.quadrants, tolerance: 12))
    }

    @Test func webpAlphaAndExifOrientationAreApplied() throws {
        let size = Size(width: 160, height: 240)
        let simple = try ImageFixture.webp(
            rgba: ImageFixture.quadrantsRGBA(size: size, alpha: 255), size: size, lossless: true)
        let turned = ImageFixture.extendedWebP(simple, size: size, alpha: false, exif: ImageFixture.tiffOrientation(6))
        let (frame, _) = try render("r.webp", turned)
        let expected = FrameRendererTests.uprightCorners[.rotated90] ?? []
        #expect(Self.matches(Self.corners(frame), expected, tolerance: 3), "\(Self.corners(frame))")
        var clear: [UInt8] = []
        for _ in 0..<size.pixelCount { clear += [0, 0, 255, 0] }
        let transparent = try render("t.webp", try ImageFixture.webp(rgba: clear, size: size, lossless: true))
        #expect(transparent.plan.header.hasAlpha)
        #expect(FrameRendererTests.close(transparent.frame.pixel(x: 60, y: 40), Self.background, tolerance: 1))
    }

    @Test func aTruncatedWebPIsRefusedNamingTheFile() throws {
        let size = Size(width: 200, height: 200)
        let webp = try ImageFixture.webp(rgba: ImageFixture.quadrantsRGBA(size: size), size: size, lossless: false)
        let path = try folder.write("cut.webp", Array(webp.prefix(webp.count / 2)))
        #expect {
            _ = try renderer.render(path, options: RenderOptions(canvas: Size(width: 100, height: 100)))
        } throws: { error in
            (error as? ImageError)?.description.hasPrefix("\(path): cannot decode: libwebp") ?? false
        }
    }

    /// Files Pillow wrote (the fuzzers' seeds): palette and grey PNGs, eXIf, a lossy, lossless, alpha and animated
    /// WebP with EXIF. Each is shown in its colour, turned as its EXIF says.
    @Test func filesPillowWroteAreShown() throws {
        let corpus = String(#filePath.split(separator: "/").dropLast(2).joined(separator: "/"))
        let green = RGBColor(red: 10, green: 200, blue: 30)
        let cases: [(String, RGBColor, Size)] = [
            ("png/rgb.png", green, Size(width: 8, height: 6)), ("png/rgba.png", green, Size(width: 8, height: 6)),
            ("png/palette.png", green, Size(width: 8, height: 6)), ("png/exif6.png", green, Size(width: 6, height: 8)),
            ("webp/lossless.webp", green, Size(width: 8, height: 6)),
            ("webp/exif8.webp", green, Size(width: 6, height: 8)),
            ("webp/animated.webp", RGBColor(red: 255, green: 0, blue: 0), Size(width: 8, height: 6)),
        ]
        for (name, color, upright) in cases {
            let path = "/\(corpus)/Fuzz/corpus/\(name)"
            let (frame, plan) = try renderer.render(
                path, options: RenderOptions(canvas: Size(width: 80, height: 80), background: Self.background))
            #expect(plan.header.displayedSize == upright, "\(name)")
            #expect(FrameRendererTests.close(frame.pixel(x: 40, y: 40), color, tolerance: 8), "\(name)")
        }
        let grey = try renderer.render(
            "/\(corpus)/Fuzz/corpus/png/gray.png", options: RenderOptions(canvas: Size(width: 80, height: 80)))
        let (red, greenValue, blue) = FrameRendererTests.channels(grey.frame.pixel(x: 40, y: 40))
        #expect(red == greenValue && greenValue == blue && red > 100)
    }
}
