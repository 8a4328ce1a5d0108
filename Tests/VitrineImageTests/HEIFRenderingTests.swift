import CHeif
import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineImage

/// HEIF and AVIF files another encoder wrote (Tests/Fixtures/heif, made by Tests/Tools/make_heif_fixtures.py with
/// pillow-heif): read, decoded by libheif and shown as a person would see them.
@Suite struct HEIFRenderingTests {
    static let fixtures = "/" + #filePath.split(separator: "/").dropLast(2).joined(separator: "/") + "/Fixtures/heif"
    let renderer = FrameRenderer(budget: MemoryBudget(limit: 256 << 20))
    static let background = RGBColor(red: 200, green: 0, blue: 0)
    /// The fixtures' quadrants (TL, TR, BL, BR).
    static let quadrants = [
        RGBColor(red: 230, green: 20, blue: 20), RGBColor(red: 20, green: 200, blue: 40),
        RGBColor(red: 30, green: 40, blue: 220), RGBColor(red: 240, green: 220, blue: 30),
    ]

    func render(_ name: String, canvas: Size = Size(width: 96, height: 64)) throws -> (frame: Frame, plan: DecodePlan) {
        try renderer.render(
            "\(Self.fixtures)/\(name)", options: RenderOptions(canvas: canvas, background: Self.background))
    }

    /// libheif 1.15 cannot be told to stop, but it reads each coded image (each tile of a phone's grid) as it
    /// decodes it: once the photo is no longer wanted those reads are refused and the decode ends there, as a
    /// cancelled JPEG decode ends at its next rows. The same decode, not cancelled, succeeds.
    @Test func aCancelledDecodeStopsAtItsNextRead() throws {
        let file = try PhotoFile(path: "\(Self.fixtures)/phone-sized.heic")
        let heif = try HEIFFile(path: file.path, descriptor: file.descriptor, fileBytes: file.byteCount)
        let options = vitrine_heif_decoding_options()
        defer { heif_decoding_options_free(options) }
        let asked = Locked(0)
        let cancelled = heif.decode(chroma: heif_chroma_interleaved_RGB, options: options) {
            asked.withLock { $0 += 1 }
            return true
        }
        guard case .failure(.cancelled) = cancelled else {
            Issue.record("a cancelled decode gave \(cancelled)")
            return
        }
        #expect(asked.withLock { $0 } >= 1)
        let whole = heif.decode(chroma: heif_chroma_interleaved_RGB, options: options) { false }
        guard case .success(let image) = whole else {
            Issue.record("the decode gave \(whole)")
            return
        }
        #expect(heif_image_get_width(image, heif_channel_interleaved) == 4032)
        heif_image_release(image)
        renderer.isCancelled = { true }
        #expect {
            _ = try renderer.render(
                "\(Self.fixtures)/phone-sized.heic",
                options: RenderOptions(canvas: Size(width: 96, height: 64)))
        } throws: { error in
            (error as? ImageError)?.reason == .cancelled
        }
    }

    /// A photo cut short after it was opened (a copy or sync rewriting it) is an error naming why, not an abort:
    /// libheif asserts that item data reads succeed, so the reader never reports a failure to it.
    @Test func aFileThatShrinksWhileItIsReadIsRefused() throws {
        let folder = try TemporaryFolder()
        let bytes = try FileBytes.read("\(Self.fixtures)/phone-sized.heic")
        let path = try folder.write("shrinking.heic", bytes)
        let file = try PhotoFile(path: path)
        let heif = try HEIFFile(path: file.path, descriptor: file.descriptor, fileBytes: file.byteCount)
        #expect(truncate(path, off_t(bytes.count / 2)) == 0)
        let options = vitrine_heif_decoding_options()
        defer { heif_decoding_options_free(options) }
        let result = heif.decode(chroma: heif_chroma_interleaved_RGB, options: options, isCancelled: nil)
        guard case .failure(.failed(let message)) = result else {
            Issue.record("a shrunk file gave \(result)")
            return
        }
        #expect(message == "the file changed or failed while it was read: it ended early")
    }

    @Test(arguments: [("quadrants.heic", ImageFormat.heif), ("quadrants.avif", .avif)])
    func quadrantsLandWhereTheyAre(name: String, format: ImageFormat) throws {
        let (frame, plan) = try render(name)
        #expect(plan.header.format == format)
        #expect(plan.header.size == Size(width: 96, height: 64))
        let corners = PNGWebPRenderingTests.corners(frame)
        #expect(PNGWebPRenderingTests.matches(corners, Self.quadrants, tolerance: 14), "\(corners)")
    }

    @Test func alphaIsComposedOverTheBackground() throws {
        let (frame, plan) = try render("half-transparent.heic", canvas: Size(width: 64, height: 64))
        #expect(plan.header.hasAlpha)
        // Red quadrant at alpha 128 over the red background: 230*128/255 + 200*127/255 = 215 red.
        let topLeft = frame.pixel(x: 16, y: 16)
        #expect(FrameRendererTests.close(topLeft, RGBColor(red: 215, green: 10, blue: 10), tolerance: 14), "\(topLeft)")
        // Blue at half over red: 30*128/255 + 200*127/255 = 115 red, 110 blue.
        let bottomLeft = frame.pixel(x: 16, y: 48)
        #expect(
            FrameRendererTests.close(bottomLeft, RGBColor(red: 115, green: 20, blue: 110), tolerance: 14),
            "\(bottomLeft)")
    }

    @Test func theCaptureDateComesFromExif() throws {
        let header = try renderer.header(of: "\(Self.fixtures)/dated.heic")
        #expect(header.dateTimeOriginal == "2024:07:14 18:30:05")
        #expect(header.orientation == .up)
        #expect(header.kind == "HEIF")
    }

    /// libheif decodes a HEIF whole: the budget is told so before anything is decoded, and a photo that does not fit
    /// is refused naming what it needs.
    @Test func theWholeDecodeIsChargedBeforeDecoding() throws {
        let header = try renderer.header(of: "\(Self.fixtures)/quadrants.heic")
        #expect(header.decoderWorkspaceBytes >= 96 * 64 * 3)
        guard case .heif(var twelve) = header.details else {
            Issue.record("not read as a HEIF")
            return
        }
        twelve.size = Size(width: 4032, height: 3024)
        #expect(twelve.decoderWorkspaceBytes >= 4032 * 3024 * 4)
        let small = FrameRenderer(budget: MemoryBudget(limit: 12 << 20))
        #expect {
            _ = try small.render(
                "\(Self.fixtures)/quadrants.heic", options: RenderOptions(canvas: Size(width: 96, height: 64)))
        } throws: { error in
            guard let error = error as? ImageError, case .overBudget = error.reason else { return false }
            return error.description.contains("quadrants.heic: refused: decoding a 96x64 HEIF")
        }
    }

    @Test func damagedFilesAreRefusedNamingTheFileAndWhy() throws {
        let folder = try TemporaryFolder()
        let whole = try FileBytes.read("\(Self.fixtures)/quadrants.heic")
        let cut = try folder.write("cut.heic", Array(whole.prefix(whole.count - 200)))
        let noMeta = try folder.write("nometa.heic", Array(whole.prefix(32)) + [UInt8](repeating: 0, count: 64))
        for path in [cut, noMeta] {
            #expect {
                _ = try renderer.render(path, options: RenderOptions(canvas: Size(width: 96, height: 64)))
            } throws: { error in
                let text = (error as? ImageError)?.description ?? ""
                return text.hasPrefix("\(path): ") && (text.contains("HEIF") || text.contains("libheif"))
            }
        }
    }
}
