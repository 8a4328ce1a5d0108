import Testing
import VitrineCore
import VitrineTestSupport

@testable import VitrineImage

/// The looks of issue 6, checked on pixels: crossfade steps, blurred margins, portrait pairs and captions.
@Suite struct LookTests {
    let folder: TemporaryFolder
    let budget = MemoryBudget(limit: 256 << 20)

    init() throws {
        folder = try TemporaryFolder()
    }

    static func channels(_ pixel: UInt32) -> [Int] {
        [Int(pixel >> 16 & 0xFF), Int(pixel >> 8 & 0xFF), Int(pixel & 0xFF)]
    }

    static func near(_ pixel: UInt32, _ color: RGBColor, tolerance: Int = 8) -> Bool {
        zip(channels(pixel), [Int(color.red), Int(color.green), Int(color.blue)]).allSatisfy {
            abs($0 - $1) <= tolerance
        }
    }

    func photo(_ name: String, _ color: RGBColor, _ size: Size, exif: [UInt8]? = nil) throws -> String {
        var bytes = try JPEGFixture.encode(rgb: JPEGFixture.solid(color, size: size), size: size)
        if let exif { bytes = JPEGFixture.inserting(exif, into: bytes) }
        return try folder.write(name, bytes)
    }

    /// A photo whose colour runs from left to right, for checking where it lands.
    func gradient(_ name: String, _ size: Size) throws -> String {
        var rgb: [UInt8] = []
        for _ in 0..<size.height {
            for x in 0..<size.width {
                let level = UInt8(x * 255 / max(1, size.width - 1))
                rgb += [level, 255 - level, 128]
            }
        }
        return try folder.write(name, try JPEGFixture.encode(rgb: rgb, size: size))
    }

    @Test func aFadeFromRedToBluePassesThroughTheMixAndEndsExactlyOnBlue() throws {
        let size = Size(width: 37, height: 5)
        let red = try Frame(size: size, budget: budget, purpose: "red")
        let blue = try Frame(size: size, budget: budget, purpose: "blue")
        let out = try Frame(size: size, budget: budget, purpose: "out")
        red.fill(JPEGFixture.red)
        blue.fill(JPEGFixture.blue)
        var previousRed = 256
        for weight in stride(from: 0, through: 256, by: 16) {
            FrameBlender.blend(
                from: red.pixels, to: blue.pixels, weight: weight, into: out.pixels, count: size.pixelCount)
            let first = out.pixels[0]
            // Every pixel of a step is the same mix: the SIMD lanes and the scalar tail agree.
            #expect((0..<size.pixelCount).allSatisfy { out.pixels[$0] == first })
            let expected = (0..<3).map { channel in
                let from = Self.channels(JPEGFixture.red.xrgb)[channel]
                let to = Self.channels(JPEGFixture.blue.xrgb)[channel]
                return (from * (256 - weight) + to * weight) >> 8
            }
            #expect(Self.channels(first) == expected)
            #expect(Self.channels(first)[0] <= previousRed)
            previousRed = Self.channels(first)[0]
        }
        #expect(out.pixels[size.pixelCount - 1] == blue.pixels[0])
        FrameBlender.blend(from: red.pixels, to: blue.pixels, weight: 0, into: out.pixels, count: size.pixelCount)
        #expect(out.pixels[3] == red.pixels[3])
    }

    /// Every byte of every pixel (the three channels and the unused one), in the SIMD lanes and the scalar tail, is
    /// the exact integer mix at every weight from 0 to 256.
    @Test func everyPixelOfABlendIsTheExactMixOfItsChannels() {
        let count = 8 * 37 + 5
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt32 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt32(truncatingIfNeeded: state >> 32)
        }
        // The extremes first: each channel at 0 and 255 against 255 and 0.
        let from = [0x00FF_FFFF, 0xFF00_0000, 0x00FF_00FF, 0x0000_FF00] + (4..<count).map { _ in next() }
        let to = [0x0000_0000, 0x00FF_FFFF, 0x0000_FF00, 0xFFFF_00FF] + (4..<count).map { _ in next() }
        var out = [UInt32](repeating: 0xDEAD_BEEF, count: count)
        var wrong: [String] = []
        for weight in 0...FrameBlender.fullWeight {
            FrameBlender.blend(from: from, to: to, weight: weight, into: &out, count: count)
            for index in 0..<count {
                let expected = [0, 8, 16, 24].reduce(UInt32(0)) { sum, shift in
                    let a = (from[index] >> UInt32(shift)) & 0xFF
                    let b = (to[index] >> UInt32(shift)) & 0xFF
                    return sum | (((a * UInt32(256 - weight) + b * UInt32(weight)) >> 8) << UInt32(shift))
                }
                if out[index] != expected, wrong.count < 5 {
                    wrong.append("weight \(weight) pixel \(index): \(out[index]) != \(expected)")
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }

    @Test func containBlurFillsTheMarginsWithASmoothCopyOfThePhoto() throws {
        let canvas = Size(width: 320, height: 180)
        let path = try gradient("tall.jpg", Size(width: 120, height: 240))
        let renderer = FrameRenderer(budget: budget)
        let background = RGBColor(red: 0, green: 0, blue: 0)
        let plain = try renderer.render(path, options: RenderOptions(canvas: canvas, fit: .contain)).frame
        let (frame, plan) = try renderer.render(
            path, options: RenderOptions(canvas: canvas, fit: .containBlur, background: background))
        let photo = plan.placement.destination
        #expect(photo == Placement.Rect(x: 115, y: 0, width: 90, height: 180))
        // The sharp photo is the same as with plain contain.
        for x in stride(from: photo.x, to: photo.x + photo.width, by: 7) {
            #expect(frame.pixel(x: x, y: 90) == plain.pixel(x: x, y: 90))
        }
        // Every margin pixel is a dark copy of the photo's colours, never the flat background.
        for y in stride(from: 0, to: canvas.height, by: 5) {
            for x in Array(0..<photo.x) + Array((photo.x + photo.width)..<canvas.width) {
                let pixel = frame.pixel(x: x, y: y)
                #expect(pixel != background.xrgb && Self.channels(pixel)[2] > 20, "margin pixel \(x),\(y)")
            }
        }
        // Smooth: neighbours differ by a few levels, no blocks from the small copy.
        for y in stride(from: 0, to: canvas.height, by: 9) {
            for x in 1..<photo.x {
                let step =
                    zip(Self.channels(frame.pixel(x: x, y: y)), Self.channels(frame.pixel(x: x - 1, y: y)))
                    .map { abs($0 - $1) }.max() ?? 0
                #expect(step <= 6, "jump of \(step) at \(x),\(y)")
            }
        }
        // The left margin shows the photo's left (green) side enlarged, the right margin its right (red) side.
        #expect(Self.channels(frame.pixel(x: 2, y: 90))[1] > Self.channels(frame.pixel(x: 2, y: 90))[0])
        #expect(Self.channels(frame.pixel(x: 317, y: 90))[0] > Self.channels(frame.pixel(x: 317, y: 90))[1])
    }

    @Test func aPortraitPairPutsEachPhotoCentredInItsHalf() throws {
        let left = try photo("left.jpg", JPEGFixture.red, Size(width: 90, height: 160))
        let right = try photo("right.jpg", JPEGFixture.blue, Size(width: 90, height: 160))
        let slides = [left, right].map { path in
            Slide(
                id: SlideID(category: "", name: String(path.split(separator: "/").last?.dropLast(4) ?? "")),
                original: path, renditions: [])
        }
        let pair = Slide(pairing: slides[0], with: slides[1])
        #expect(pair.id.name == "left + right")
        #expect(pair.files == [left, right])
        let canvas = Size(width: 320, height: 160)
        let rendered = try SlideRenderer(budget: budget).render(pair, options: RenderOptions(canvas: canvas))
        let frame = rendered.frame
        #expect(rendered.files == [left, right])
        // Each 90x160 photo is centred in a 160x160 half: columns 35..<125 and 195..<285.
        #expect(
            rendered.plans.map(\.placement.destination) == [
                Placement.Rect(x: 35, y: 0, width: 90, height: 160),
                Placement.Rect(x: 195, y: 0, width: 90, height: 160),
            ])
        for y in [0, 80, 159] {
            #expect(Self.near(frame.pixel(x: 40, y: y), JPEGFixture.red))
            #expect(Self.near(frame.pixel(x: 120, y: y), JPEGFixture.red))
            #expect(Self.near(frame.pixel(x: 200, y: y), JPEGFixture.blue))
            #expect(Self.near(frame.pixel(x: 280, y: y), JPEGFixture.blue))
            for x in [0, 30, 130, 160, 190, 290, 319] { #expect(frame.pixel(x: x, y: y) == RGBColor.black.xrgb) }
        }
    }

    @Test func portraitPhotosInARowArePairedTwoByTwo() {
        func slide(_ name: String) -> Slide {
            Slide(id: SlideID(category: "c", name: name), original: "/\(name).jpg", renditions: [])
        }
        let portrait: Set = ["p1", "p2", "p3", "p5", "p6"]
        let paired = PortraitPairing.pair(["p1", "p2", "p3", "l4", "p5", "p6", "l7"].map(slide)) {
            portrait.contains($0.id.name)
        }
        #expect(paired.map(\.id.name) == ["p1 + p2", "p3", "l4", "p5 + p6", "l7"])
        #expect(paired[0].photos.map(\.id.name) == ["p1", "p2"])
        #expect(paired[1].photos.map(\.id.name) == ["p3"])
        #expect(PortraitPairing.isPortrait(Size(width: 3, height: 4)))
        #expect(!PortraitPairing.isPortrait(Size(width: 4, height: 4)))
    }

    @Test(arguments: [CaptionStyle.Position.bottomRight, .topLeft])
    func aCaptionIsDrawnInItsCornerOnly(position: CaptionStyle.Position) throws {
        let gray = RGBColor(red: 128, green: 128, blue: 128)
        let size = Size(width: 400, height: 240)
        let path = try photo(
            "IMG_0042.jpg", gray, size,
            exif: JPEGFixture.exifSegment(orientation: 1, dateTimeOriginal: "2024:07:14 12:00:00"))
        var options = RenderOptions(canvas: size)
        options.caption = CaptionStyle(template: .dateAndName, position: position, size: 0.08, locale: .english)
        let slide = Slide(id: SlideID(category: "", name: "IMG_0042"), original: path, renditions: [])
        let frame = try SlideRenderer(budget: budget).render(slide, options: options).frame
        // Bright text and dark shadow in the caption's quarter; the three other quarters untouched.
        var quarters: [[Int]] = Array(repeating: [0, 0], count: 4)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let value = Self.channels(frame.pixel(x: x, y: y))[0]
                let quarter = (y < size.height / 2 ? 0 : 2) + (x < size.width / 2 ? 0 : 1)
                if value > 200 { quarters[quarter][0] += 1 }
                if value < 60 { quarters[quarter][1] += 1 }
            }
        }
        let expected = position == .bottomRight ? 3 : 0
        for quarter in 0..<4 {
            if quarter == expected {
                #expect(quarters[quarter][0] > 100 && quarters[quarter][1] > 100, "\(quarters)")
            } else if position == .bottomRight ? quarter != 2 : quarter != 1 {
                // The long caption may run into the neighbouring quarter along its edge, never the far ones.
                #expect(quarters[quarter] == [0, 0], "quarter \(quarter): \(quarters)")
            }
        }
        #expect(options.caption.text(name: "IMG_0042", exifDate: "2024:07:14 12:00:00") == "14 July 2024 · IMG_0042")
    }

    @Test func captionsOnARotatedPanelReadUpright() throws {
        let gray = RGBColor(red: 128, green: 128, blue: 128)
        let path = try photo("a.jpg", gray, Size(width: 240, height: 400))
        var options = RenderOptions(canvas: Size(width: 240, height: 400), rotation: .clockwise90)
        options.caption = CaptionStyle(template: .name, position: .bottomLeft, size: 0.1)
        let slide = Slide(id: SlideID(category: "", name: "a"), original: path, renditions: [])
        let frame = try SlideRenderer(budget: budget).render(slide, options: options).frame
        #expect(frame.size == Size(width: 400, height: 240))
        // Turned 90° clockwise, the upright canvas's bottom-left corner is the scanout's top-left.
        var bright = (topLeft: 0, elsewhere: 0)
        for y in 0..<240 {
            for x in 0..<400 where Self.channels(frame.pixel(x: x, y: y))[0] > 200 {
                if x < 120 && y < 120 { bright.topLeft += 1 } else { bright.elsewhere += 1 }
            }
        }
        #expect(bright.topLeft > 20 && bright.elsewhere == 0, "\(bright)")
    }

    @Test func datesAreWrittenTheLanguagesWay() {
        let date = "2026:11:29 18:33:38"
        let expected: [(DateStyle, String)] = [
            (.iso, "2026-11-29"), (.english, "29 November 2026"), (.americanEnglish, "November 29, 2026"),
            (.german, "29. November 2026"), (.french, "29 novembre 2026"), (.spanish, "29 de noviembre de 2026"),
            (.polish, "29 listopada 2026"), (.norwegian, "29. november 2026"),
        ]
        for (style, text) in expected { #expect(style.format(exifDate: date) == text) }
        #expect(DateStyle.english.format(exifDate: "0000:00:00 00:00:00") == nil)
        #expect(DateStyle.fromEnvironment("de_DE.UTF-8") == .german)
        #expect(DateStyle.fromEnvironment("en_US.UTF-8") == .americanEnglish)
        #expect(DateStyle.fromEnvironment("en_GB.UTF-8") == .english)
        #expect(DateStyle.fromEnvironment("C.UTF-8") == .english)
        #expect(DateStyle.fromEnvironment("nn_NO") == .norwegian)
        let style = CaptionStyle(template: .date)
        #expect(style.text(name: "x", exifDate: nil) == nil)
        #expect(CaptionStyle(template: .dateAndName).text(name: "trip/x", exifDate: nil) == "x")
    }
}
