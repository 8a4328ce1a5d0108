import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@Suite struct RenditionPlanTests {
    let table: DeviceTable

    init() throws {
        table = try DeviceTable.load(path: "\(repositoryRoot)/Config/devices.json")
    }

    static let photos = [
        "4000x3000", "3000x4000", "6000x4000", "4032x3024", "5472x3648", "1920x1080", "2048x1536", "1200x1600",
        "7952x5304", "4000x1000", "1000x4000", "801x481", "2001x1333", "3264x2448", "12000x9000", "1080x1920",
    ]

    /// On every profile's canvas and every fit, the size planned for a photo is the one the picker then reads:
    /// it covers the box (nothing is enlarged), beats the original, and is tight (a pixel less would not cover).
    @Test(arguments: [Fit.contain, .cover, .containBlur])
    func thePlannedRenditionIsWhatThePickerChooses(fit: Fit) throws {
        var checked = 0
        for text in Self.photos {
            let photo = try #require(Size(parsing: text))
            for profile in table.profiles {
                let canvas = profile.rendition
                let picker = RenditionPicker(canvas: canvas, fit: fit)
                guard let size = RenditionPlan.size(upright: photo, canvas: canvas, fit: fit) else {
                    // No rendition only when the original is no larger than its box.
                    #expect(Placement.compute(photo: photo, canvas: canvas, fit: fit).scale >= 1, "\(text) \(canvas)")
                    continue
                }
                #expect(size.width <= photo.width && size.height <= photo.height)
                #expect(picker.covers(size), "\(text) on \(canvas) \(fit): \(size)")
                // Tight: within a pixel of the photo scaled to its box, so nothing larger than needed is decoded;
                // for contain, exactly the box it is placed in.
                let placement = Placement.compute(photo: photo, canvas: canvas, fit: fit)
                if fit != .cover {
                    #expect(size == Size(width: placement.destination.width, height: placement.destination.height))
                }
                let scale = placement.scale
                #expect(Double(size.width) <= Double(photo.width) * scale + 1.01, "\(text) on \(canvas): \(size)")
                #expect(Double(size.height) <= Double(photo.height) * scale + 1.01, "\(text) on \(canvas): \(size)")
                // The aspect ratio is the photo's, within a pixel of rounding.
                let expectedHeight = Double(size.width) * Double(photo.height) / Double(photo.width)
                #expect(abs(Double(size.height) - expectedHeight) <= 1.01, "\(text) -> \(size)")
                let slide = Slide(
                    id: SlideID(category: "", name: "p"), original: "p.jpg",
                    renditions: [.init(path: "p@\(size).jpg", size: size)])
                #expect(picker.pick(slide) { _ in photo }?.path == "p@\(size).jpg")
                checked += 1
            }
        }
        #expect(checked > 100)
    }

    @Test func profilesSharingASizeShareOneFileAndTheLargestComesFirst() throws {
        let targets = RenditionPlan.targets(
            upright: Size(width: 4000, height: 3000), profiles: table.profiles, fit: .contain)
        #expect(Set(targets.map(\.size)).count == targets.count)
        #expect(targets.map(\.size.pixelCount) == targets.map(\.size.pixelCount).sorted(by: >))
        let touch = try #require(targets.first { $0.profiles.contains("rpi-touch-display") })
        #expect(touch.size == Size(width: 640, height: 480))
        #expect(targets.flatMap(\.profiles).count == table.profiles.count)
        #expect(
            RenditionPlan.targets(upright: Size(width: 600, height: 400), profiles: table.profiles, fit: nil).isEmpty)
    }

    @Test func renditionNamesFollowTheOriginal() {
        let size = Size(width: 640, height: 480)
        #expect(RenditionPlan.fileName(original: "IMG_0001.JPG", size: size) == "IMG_0001@640x480.jpg")
        #expect(RenditionPlan.fileName(original: "a.b.jpeg", size: size) == "a.b@640x480.jpg")
        #expect(Library.renditionParts(of: "a.b@640x480.jpg")?.name == "a.b")
    }
}
