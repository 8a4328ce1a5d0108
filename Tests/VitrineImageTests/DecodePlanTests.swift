import Testing
import VitrineCore

@testable import VitrineImage

@Suite struct DecodePlanTests {
    func header(_ size: Size, orientation: Orientation = .up) -> ImageHeader {
        ImageHeader(
            JPEGHeader(
                size: size, process: .baseline, arithmetic: false, precision: 8,
                components: [
                    .init(horizontalSampling: 2, verticalSampling: 1),
                    .init(horizontalSampling: 1, verticalSampling: 1),
                    .init(horizontalSampling: 1, verticalSampling: 1),
                ],
                adobeTransform: nil, orientation: orientation, dateTimeOriginal: nil))
    }

    /// The smallest M/8 whose decode still covers the box, in both directions.
    @Test(arguments: [
        ("6028x3391", "1920x1080", Fit.contain, Orientation.up, "3/8", "2261x1272"),
        ("4272x2848", "1920x1080", .contain, .up, "1/2", "2136x1424"),
        ("4096x4096", "1920x1080", .contain, .up, "3/8", "1536x1536"),
        ("4032x3024", "800x480", .contain, .up, "1/4", "1008x756"),
        ("1800x1200", "800x480", .contain, .up, "1/2", "900x600"),
        ("1200x1800", "800x480", .contain, .rotated90, "1/2", "600x900"),
        ("1800x1200", "1920x1080", .contain, .up, "1/1", "1800x1200"),
        ("4000x1000", "800x480", .cover, .up, "1/2", "2000x500"),
    ])
    func choosesTheScale(
        photo: String, canvas: String, fit: Fit, orientation: Orientation, scale: String, decoded: String
    )
        throws
    {
        let plan = DecodePlan.make(
            header: header(try #require(Size(parsing: photo)), orientation: orientation),
            options: RenderOptions(canvas: try #require(Size(parsing: canvas)), fit: fit))
        #expect(plan.scaleDescription == scale)
        #expect(plan.decodedSize.description == decoded)
        #expect(plan.decodedSize.width >= plan.outputSize.width || scale == "1/1")
    }

    @Test func sidewaysPhotosResampleInStoredOrientation() {
        let plan = DecodePlan.make(
            header: header(Size(width: 1200, height: 1800), orientation: .rotated90),
            options: RenderOptions(canvas: Size(width: 800, height: 480)))
        // Upright the photo is 1800x1200 -> 720x480 on the canvas; stored it is 1200x1800 -> 480x720.
        #expect(plan.placement.destination == Placement.Rect(x: 40, y: 0, width: 720, height: 480))
        #expect(plan.outputSize == Size(width: 480, height: 720))
    }

    @Test func theDecodeCostIsKnownBeforeDecoding() {
        let plan = DecodePlan.make(
            header: header(Size(width: 6028, height: 3391)),
            options: RenderOptions(canvas: Size(width: 1920, height: 1080)))
        // No whole decoded image is held: a ring of rows, the resampler's rows and libjpeg's MCU row.
        #expect(plan.decodeBytes < 6 << 20)
        #expect(plan.rowBufferBytes == 2261 * 4 * DecodePlan.pipeRows)
    }
}
