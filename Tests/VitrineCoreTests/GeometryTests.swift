import Testing
import VitrineCore

@Suite struct GeometryTests {
    @Test(arguments: [
        ("1800x1200", "800x480", "40,0 720x480"),
        ("1200x1800", "800x480", "240,0 320x480"),
        ("1920x1080", "1920x1080", "0,0 1920x1080"),
        ("6028x3391", "1920x1080", "0,0 1920x1080"),
        ("4096x4096", "1920x1080", "420,0 1080x1080"),
        ("1000x10", "800x480", "0,236 800x8"),
        ("10000x1", "800x480", "0,239 800x1"),
    ])
    func containCentresThePhoto(photo: String, canvas: String, expected: String) throws {
        let placement = Placement.compute(
            photo: try #require(Size(parsing: photo)), canvas: try #require(Size(parsing: canvas)), fit: .contain)
        let rect = placement.destination
        #expect("\(rect.x),\(rect.y) \(rect.width)x\(rect.height)" == expected)
        #expect(
            placement.window
                == Placement.Window(x: 0, y: 0, width: placement.window.width, height: placement.window.height))
    }

    @Test func coverCropsEvenly() throws {
        let placement = Placement.compute(
            photo: Size(width: 2000, height: 1000), canvas: Size(width: 800, height: 800), fit: .cover)
        #expect(placement.destination == Placement.Rect(x: 0, y: 0, width: 800, height: 800))
        #expect(placement.window == Placement.Window(x: 500, y: 0, width: 1000, height: 1000))
        #expect(placement.scale == 0.8)
    }

    @Test func sizesParseStrictly() {
        #expect(Size(parsing: "800x480") == Size(width: 800, height: 480))
        for bad in ["800X480", "800x", "x480", "0x480", "-1x480", "800x480x2", "20000x10", " 800x480", "８00x480"] {
            #expect(Size(parsing: bad) == nil, "\(bad)")
        }
        #expect(Size(width: Int.max, height: 2).xrgbByteCount == nil)
        #expect(Size(width: 1920, height: 1080).xrgbByteCount == 8_294_400)
    }

    @Test func orientationsMapAsEXIFSays() {
        let stored = Size(width: 4, height: 2)
        #expect(Orientation.rotated90.displayedSize(ofStored: stored) == Size(width: 2, height: 4))
        #expect(Orientation.mirrored.displayedSize(ofStored: stored) == stored)
        #expect(Orientation.allCases.filter(\.swapsAxes) == [.transposed, .rotated90, .transversed, .rotated270])
        #expect(
            Rotation.clockwise90.scanoutSize(forCompose: Size(width: 1280, height: 720))
                == Size(width: 720, height: 1280))
    }

    @Test func coloursParse() {
        #expect(RGBColor(parsing: "#FF8000") == RGBColor(red: 255, green: 128, blue: 0))
        #expect(RGBColor(parsing: "ff8000")?.xrgb == 0x00FF_8000)
        #expect(RGBColor(parsing: "fff") == nil)
        #expect(RGBColor(red: 1, green: 2, blue: 255).description == "0102FF")
    }
}
