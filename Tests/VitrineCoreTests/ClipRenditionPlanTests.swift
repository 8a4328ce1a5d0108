import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

/// Which clips get a rendition (`RenditionPlan.clipTarget`) and which file a clip slide plays
/// (`RenditionPicker.pickClip`), against the real device table.
@Suite struct ClipRenditionPlanTests {
    let table: DeviceTable

    init() throws {
        table = try DeviceTable.load(path: "\(repositoryRoot)/Config/devices.json")
    }

    func profiles(_ ids: String...) -> [DeviceProfile] { table.profiles.filter { ids.contains($0.id) } }

    func target(_ clip: String, _ codec: String = "h264", fps: Double = 30, bits: Int = 8, on ids: String...) throws
        -> Size?
    {
        let size = try #require(Size(parsing: clip))
        return RenditionPlan.clipTarget(
            upright: size, codec: codec, frameRate: fps, bitDepth: bits,
            profiles: table.profiles.filter { ids.contains($0.id) }, fit: nil)
    }

    @Test func aClipThatPlaysAsItIsGetsNone() throws {
        #expect(try target("1280x720", on: "hdmi-720p") == nil)
        #expect(try target("1280x720", on: "hdmi-1080p") == nil)
    }

    @Test func aPhonesHEVCIsCopiedToH264AtTheScreensSize() throws {
        // An iPhone's 4K HEVC on a 720p TV: its box, 1280x720.
        #expect(try target("3840x2160", "hevc", on: "hdmi-720p") == Size(width: 1280, height: 720))
        // Already the screen's size, but HEVC (no Pi 3 or Zero 2 decodes it): the same size, in H.264.
        #expect(try target("1280x720", "hevc", on: "hdmi-720p") == Size(width: 1280, height: 720))
        // A portrait phone clip on a landscape 800x480 panel: the box it fills, upright, even sides.
        #expect(try target("1080x1920", "hevc", on: "rpi-touch-display") == Size(width: 270, height: 480))
    }

    @Test func sixtyPicturesASecondOrTenBitsNeedACopy() throws {
        #expect(try target("1280x720", fps: 60, on: "hdmi-720p") == Size(width: 1280, height: 720))
        #expect(try target("1280x720", bits: 10, on: "hdmi-720p") == Size(width: 1280, height: 720))
    }

    @Test func oneSizeServesEveryProfileTheLargestCappedAt1080p() throws {
        // 720p and 1080p screens: one 1080p file (the 720p screen reads it too, the smallest that covers).
        #expect(try target("3840x2160", "hevc", on: "hdmi-720p", "hdmi-1080p") == Size(width: 1920, height: 1080))
        // A 1440p screen would want more than any Pi decodes in H.264: 1080p at most (that screen plays the original).
        #expect(try target("3840x2160", "hevc", on: "qhd-2560x1440") == Size(width: 1920, height: 1080))
        #expect(try target("2160x3840", "hevc", on: "portrait-signage-1080x1920") == Size(width: 1080, height: 1920))
    }

    @Test func aClipSlidePlaysTheSmallestClipRenditionThatCoversElseItsOriginal() {
        let id = SlideID(category: "A", name: "IMG_1")
        let slide = Slide(
            id: id, original: "/l/A/IMG_1.MOV",
            renditions: [
                .init(path: "/l/A/IMG_1@1920x1080.mp4", size: Size(width: 1920, height: 1080)),
                .init(path: "/l/A/IMG_1@1280x720.mp4", size: Size(width: 1280, height: 720)),
                // A still of the same name (a poster) is never what plays.
                .init(path: "/l/A/IMG_1@800x450.jpg", size: Size(width: 800, height: 450)),
            ])
        let small = RenditionPicker(canvas: Size(width: 800, height: 480), fit: .contain)
        #expect(small.pickClip(slide) == "/l/A/IMG_1@1280x720.mp4")
        let large = RenditionPicker(canvas: Size(width: 1920, height: 1080), fit: .contain)
        #expect(large.pickClip(slide) == "/l/A/IMG_1@1920x1080.mp4")
        // A 4K screen: no rendition covers it, the original plays.
        let huge = RenditionPicker(canvas: Size(width: 3840, height: 2160), fit: .contain)
        #expect(huge.pickClip(slide) == "/l/A/IMG_1.MOV")
        // Only renditions left (the original deleted): the largest.
        let orphan = Slide(id: id, original: nil, renditions: slide.renditions)
        #expect(huge.pickClip(orphan) == "/l/A/IMG_1@1920x1080.mp4")
    }

    @Test func aClipsRenditionIsAnMP4() {
        #expect(
            RenditionPlan.fileName(original: "IMG_1.MOV", size: Size(width: 1280, height: 720)) == "IMG_1@1280x720.mp4")
        #expect(RenditionPlan.fileName(original: "a.jpeg", size: Size(width: 8, height: 6)) == "a@8x6.jpg")
    }
}
