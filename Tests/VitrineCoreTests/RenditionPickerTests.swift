import Testing
import VitrineCore

@Suite struct RenditionPickerTests {
    func slide(original: Bool, renditions: [String]) -> Slide {
        Slide(
            id: SlideID(category: "c", name: "s"), original: original ? "s.jpg" : nil,
            renditions: renditions.compactMap { text in
                Size(parsing: text).map { .init(path: "s@\(text).jpg", size: $0) }
            })
    }

    /// canvas, fit, original size ("" when there is no original), renditions, expected file
    @Test(arguments: [
        ("800x480", Fit.contain, "4000x3000", ["320x240", "1024x768", "2048x1536"], "s@1024x768.jpg"),
        ("800x480", .contain, "4000x3000", ["320x240"], "s.jpg"),
        ("800x480", .contain, "4000x3000", ["640x480", "800x600"], "s@640x480.jpg"),
        ("1920x1080", .contain, "1600x1200", ["800x600", "1280x960"], "s.jpg"),
        ("1920x1080", .contain, "", ["800x600", "1280x960"], "s@1280x960.jpg"),
        ("800x480", .cover, "4000x3000", ["640x480", "800x600", "1024x768"], "s@800x600.jpg"),
        ("800x480", .contain, "3000x4000", ["480x640", "768x1024"], "s@480x640.jpg"),
        ("800x480", .contain, "700x400", ["1920x1080"], "s@1920x1080.jpg"),
        ("800x480", .contain, "900x600", ["1920x1280"], "s.jpg"),
    ])
    func picksTheSmallestThatCoversElseTheLargest(
        canvas: String, fit: Fit, original: String, renditions: [String], expected: String
    ) throws {
        let picker = RenditionPicker(canvas: try #require(Size(parsing: canvas)), fit: fit)
        let choice = picker.pick(slide(original: !original.isEmpty, renditions: renditions)) { _ in
            Size(parsing: original)
        }
        #expect(choice?.path == expected)
    }

    @Test func anUnreadableOriginalIsChosenOnlyWhenNothingElseExists() {
        let picker = RenditionPicker(canvas: Size(width: 800, height: 480), fit: .contain)
        #expect(picker.pick(slide(original: true, renditions: ["400x240"])) { _ in nil }?.path == "s@400x240.jpg")
        #expect(picker.pick(slide(original: true, renditions: [])) { _ in nil } == .init(path: "s.jpg", size: nil))
    }
}
