import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

@testable import VitrineImage

/// Grids as phones write them, from Tests/Fixtures/heif (made by Tests/Tools/make_heif_fixtures.py: each 64x64
/// tile encoded alone by pillow-heif, the grid boxes written by the script): decoded tile by tile, each tile where
/// the grid puts it, the grid's crop, turn and mirror applied as libheif applies them.
@Suite struct HEIFGridTests {
    static let fixtures = HEIFRenderingTests.fixtures
    /// The tiles' colours, row by row (the script's TILE_COLORS).
    static let tiles: [RGBColor] = [
        (230, 20, 20), (20, 200, 40), (30, 40, 220), (240, 220, 30),
        (240, 240, 240), (20, 20, 20), (230, 30, 230), (30, 220, 230),
        (250, 140, 20), (120, 60, 20), (120, 120, 120), (20, 110, 60),
    ].map { RGBColor(red: UInt8($0.0), green: UInt8($0.1), blue: UInt8($0.2)) }

    /// Renders at the photo's own shown size, so each photo pixel is one frame pixel.
    func render(_ name: String, canvas: Size, budget: MemoryBudget = MemoryBudget(limit: 256 << 20)) throws
        -> (frame: Frame, plan: DecodePlan)
    {
        try FrameRenderer(budget: budget).render("\(Self.fixtures)/\(name)", options: RenderOptions(canvas: canvas))
    }

    /// The colour of the tile in grid row `row`, column `column`, checked at the frame's (x, y).
    func expectTile(
        _ frame: Frame, x: Int, y: Int, row: Int, column: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let pixel = frame.pixel(x: x, y: y)
        #expect(
            FrameRendererTests.close(pixel, Self.tiles[row * 4 + column], tolerance: 12),
            "(\(x), \(y)) is \(pixel), expected tile \(row),\(column)", sourceLocation: sourceLocation)
    }

    @Test func theContainerNamesTheGridItsTilesAndTheirHiddenFlags() throws {
        let file = try PhotoFile(path: "\(Self.fixtures)/grid.heic")
        let container = try HEIFContainer.parse(file: file.path, format: .heif) {
            (offset, count) throws(ImageError) -> [UInt8] in try file.read(offset: offset, count: count)
        }
        #expect(container.items[container.primary]?.type == "grid")
        #expect(container.referenced(from: container.primary, type: "dimg") == Array(1...12))
        let grid = try #require(
            try HEIFGrid.read(container, file: file.path, format: .heif) {
                (offset, count) throws(ImageError) -> [UInt8] in try file.read(offset: offset, count: count)
            })
        #expect(grid.rows == 3 && grid.columns == 4)
        #expect(grid.tileSize == Size(width: 64, height: 64))
        #expect(grid.canvas == Size(width: 250, height: 180))
        #expect(grid.hiddenFlagOffsets.count == 12)
        for offset in grid.hiddenFlagOffsets {
            #expect(try file.read(offset: offset, count: 1) == [1], "the hidden flag's byte at \(offset)")
        }
        #expect(grid.crop == HEIFGrid.Crop(x: 0, y: 0, width: 250, height: 180))
        #expect(grid.orientation == .up)
    }

    @Test(arguments: ["grid.heic", "grid.avif"])
    func eachTileLandsWhereTheGridPutsIt(name: String) throws {
        let (frame, plan) = try render(name, canvas: Size(width: 250, height: 180))
        #expect(plan.header.size == Size(width: 250, height: 180))
        #expect(plan.scaleDescription == "1/1")
        for row in 0..<3 {
            for column in 0..<4 {
                // The centre of each tile; the last column and row are cut by the canvas.
                expectTile(frame, x: min(64 * column + 32, 245), y: min(64 * row + 32, 175), row: row, column: column)
            }
        }
    }

    /// `irot` 1 (a quarter turn anti-clockwise), then `imir` 1 (left and right swapped, as libheif reads the axis):
    /// the stored (x, y) is shown at (179 - y, 249 - x) of a 180x250 picture.
    @Test func theGridsTurnAndMirrorApplyToTheWholePicture() throws {
        let (frame, plan) = try render("grid-turned.heic", canvas: Size(width: 180, height: 250))
        #expect(plan.header.displayedSize == Size(width: 180, height: 250))
        #expect(plan.header.orientation == .rotated270.then(.mirrored))
        for row in 0..<3 {
            for column in 0..<4 {
                let (x, y) = (64 * column + 32, 64 * row + 32)
                expectTile(frame, x: 179 - y, y: 249 - x, row: row, column: column)
            }
        }
    }

    /// A clean aperture of 128x96 whose centre is 32 right of and 16 below the canvas's: libheif truncates the
    /// left edge (93.5) and rounds the top (58), so the picture is the canvas from (93, 58).
    @Test func theCleanApertureCropsTheCanvas() throws {
        let (frame, plan) = try render("grid-cropped.heic", canvas: Size(width: 128, height: 96))
        #expect(plan.header.size == Size(width: 128, height: 96))
        for (x, y) in [(0, 0), (127, 0), (0, 95), (127, 95), (60, 40), (100, 10)] {
            let (canvasX, canvasY) = (93 + x, 58 + y)
            // Stay clear of tile edges, where the encoder's blocks blur the colours.
            guard canvasX % 64 > 2, canvasX % 64 < 61, canvasY % 64 > 2, canvasY % 64 < 61 else { continue }
            expectTile(frame, x: x, y: y, row: canvasY / 64, column: canvasX / 64)
        }
        expectTile(frame, x: 10, y: 10, row: 1, column: 1)
    }

    /// A thumbnail larger than the primary image, of another picture: the primary is what shows.
    @Test func aLargerThumbnailOfAnotherPictureIsNotShown() throws {
        let (frame, plan) = try render("grid-larger-thumbnail.heic", canvas: Size(width: 250, height: 180))
        #expect(plan.header.size == Size(width: 250, height: 180))
        expectTile(frame, x: 32, y: 32, row: 0, column: 0)
        expectTile(frame, x: 224, y: 160, row: 2, column: 3)
    }

    /// Decoded for a box a quarter of its size, the grid is reduced by 4 as its tiles are copied in.
    @Test func aSmallBoxReducesTheTilesAsTheyAreCopied() throws {
        let (frame, plan) = try render("grid.heic", canvas: Size(width: 62, height: 45))
        #expect(plan.scaleDescription == "1/4")
        #expect(plan.decodedSize == Size(width: 63, height: 45))
        expectTile(frame, x: 8, y: 8, row: 0, column: 0)
        expectTile(frame, x: 56, y: 40, row: 2, column: 3)
    }

    /// The decode's need is known from the header, whatever the photo's size: for a 200 MP phone grid of 512x512
    /// tiles it is a band of tiles and two tiles in flight, where the whole decode would need 870 MiB.
    @Test func aGridsNeedIsABandOfTilesNotThePhoto() throws {
        var header = try FrameRenderer(budget: MemoryBudget(limit: 64 << 20)).header(
            of: "\(Self.fixtures)/grid.heic")
        guard case .heif(var heif) = header.details, var grid = heif.grid else {
            Issue.record("grid.heic was not read as a grid")
            return
        }
        grid.tileSize = Size(width: 512, height: 512)
        grid.rows = 24
        grid.columns = 32
        grid.canvas = Size(width: 16320, height: 12240)
        grid.crop = HEIFGrid.Crop(x: 0, y: 0, width: 16320, height: 12240)
        heif.grid = grid
        heif.size = grid.canvas
        var whole = heif
        whole.grid = nil
        #expect(whole.decoderWorkspaceBytes > 800 << 20)
        #expect(heif.decoderWorkspaceBytes < 40 << 20)
        header = ImageHeader(heif)
        let plan = DecodePlan.make(header: header, options: RenderOptions(canvas: Size(width: 1920, height: 1080)))
        #expect(plan.scaleDescription == "1/8")
        #expect(plan.decoderWorkspaceBytes < 16 << 20, "\(plan.decoderWorkspaceBytes)")
        // A camera's large tiles are decoded one at a time: one tile in flight, not two.
        grid.tileSize = Size(width: 3520, height: 1600)
        grid.rows = 3
        grid.columns = 2
        heif.grid = grid
        let tile = 3520 * 1600 * 12 + (2 << 20)
        #expect(heif.decoderWorkspaceBytes(reduction: 8) < 2 * tile)
        #expect(heif.decoderWorkspaceBytes(reduction: 8) > tile)
    }

    @Test func aCancelledGridDecodeStops() throws {
        let renderer = FrameRenderer(budget: MemoryBudget(limit: 64 << 20))
        renderer.isCancelled = { true }
        #expect {
            _ = try renderer.render(
                "\(Self.fixtures)/grid.heic", options: RenderOptions(canvas: Size(width: 250, height: 180)))
        } throws: { error in
            (error as? ImageError)?.reason == .cancelled
        }
    }

    /// A tile whose coded data is garbage: the photo is refused naming the file and the tile, and nothing crashes.
    @Test func aBrokenTileIsNamed() throws {
        let folder = try TemporaryFolder()
        var bytes = try FileBytes.read("\(Self.fixtures)/grid.heic")
        let mdat = try #require(bytes.indices.dropLast(4).first { bytes[$0..<$0 + 4].elementsEqual("mdat".utf8) })
        // The first tile's data starts after the box header with a 4-byte NAL length; garble the NAL units after.
        for index in mdat + 12..<min(bytes.count, mdat + 40) { bytes[index] = 0xFF }
        let path = try folder.write("garbled.heic", bytes)
        #expect {
            _ = try FrameRenderer(budget: MemoryBudget(limit: 64 << 20)).render(
                path, options: RenderOptions(canvas: Size(width: 250, height: 180)))
        } throws: { error in
            let text = (error as? ImageError)?.description ?? ""
            return text.hasPrefix("\(path): ") && text.contains("libheif")
        }
    }

    /// Found by the fuzzer: an item location box whose extents have no fields takes no bytes per extent, so
    /// 65,535 of them per item, item after item, kept the reader busy for minutes. It is refused at once.
    @Test func extentsWithoutFieldsAreRefused() throws {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = UInt32(8 + payload.count)
            return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) } + Array(type.utf8) + payload
        }
        let infe = box("infe", [2, 0, 0, 0, 0, 1, 0, 0] + Array("hvc1".utf8) + [0])
        var iloc: [UInt8] = [1, 0, 0, 0, 0x00, 0x00, 0, 200]
        for item in 0..<200 { iloc += [0, UInt8(item), 0, 0, 0, 0, 0xFF, 0xFF] }
        let meta = box(
            "meta",
            [0, 0, 0, 0] + box("pitm", [0, 0, 0, 0, 0, 1]) + box("iinf", [0, 0, 0, 0, 0, 1] + infe)
                + box("iloc", iloc))
        let file = box("ftyp", Array("heicmif1".utf8)) + meta
        #expect {
            _ = try HEIFContainer.parse(file: "crafted.heic", format: .heif) {
                (offset, count) throws(ImageError) -> [UInt8] in
                Array(file.dropFirst(offset).prefix(count))
            }
        } throws: { error in
            (error as? ImageError)?.description.contains("extents") == true
        }
    }

    @Test func transformsComposeAsATurnThenAMirror() {
        #expect(Orientation.up.then(.rotated90) == .rotated90)
        #expect(Orientation.rotated90.then(.rotated90) == .rotated180)
        #expect(Orientation.rotated90.then(.rotated270) == .up)
        #expect(Orientation.mirrored.then(.mirrored) == .up)
        // A quarter turn clockwise, then left and right swapped, is left and right swapped, then a quarter turn
        // anti-clockwise: EXIF's 5 (transposed); the other way round its 7.
        #expect(Orientation.rotated90.then(.mirrored) == .transposed)
        #expect(Orientation.rotated270.then(.mirrored) == .transversed)
        for first in Orientation.allCases {
            for second in Orientation.allCases {
                let both = first.then(second)
                let size = Size(width: 3, height: 2)
                #expect(
                    both.displayedSize(ofStored: size)
                        == second.displayedSize(ofStored: first.displayedSize(ofStored: size)))
            }
        }
    }

    /// A crop after a turn is a crop of the turned picture, taken back to the canvas's axes.
    @Test func aCropAfterATurnIsTakenBackToTheCanvas() throws {
        let fail = BoxFailure(file: "x.heic", format: .heif)
        let aperture = HEIFContainer.CleanAperture(
            width: .init(numerator: 40, denominator: 1), height: .init(numerator: 100, denominator: 1),
            horizontalOffset: .init(numerator: -30, denominator: 1), verticalOffset: .init(numerator: 0, denominator: 1)
        )
        // 200x100 canvas turned a quarter clockwise is 100x200; its left 40 columns from x=0 (centre 49.5-30).
        let (crop, orientation) = try HEIFGrid.transforms(
            [.irot(3), .clap(aperture)], canvas: Size(width: 200, height: 100), fail: fail)
        #expect(orientation == .rotated90)
        // Rows 50..<150 of the shown picture's left 40 columns: turned clockwise, the canvas's bottom edge is the
        // picture's left edge.
        #expect(crop == HEIFGrid.Crop(x: 50, y: 60, width: 100, height: 40))
    }
}

/// AVIF stills decoded by dav1d directly: the picture held once as its planes, its crop and turn applied.
@Suite struct AV1StillTests {
    /// Quadrants (red, green / blue, yellow) turned a quarter clockwise, then cropped to the middle 64x48: blue
    /// is top left, red top right, yellow bottom left, green bottom right.
    @Test func aTurnedAndCroppedStillShowsAsLibheifShowsIt() throws {
        let (frame, plan) = try FrameRenderer(budget: MemoryBudget(limit: 64 << 20)).render(
            "\(HEIFRenderingTests.fixtures)/still-turned.avif",
            options: RenderOptions(canvas: Size(width: 64, height: 48)))
        guard case .heif(let heif) = plan.header.details else {
            Issue.record("not read as HEIF")
            return
        }
        #expect(heif.still != nil)
        #expect(plan.header.size == Size(width: 48, height: 64))
        #expect(plan.header.orientation == .rotated90)
        let quadrants = HEIFRenderingTests.quadrants
        let expected = [quadrants[2], quadrants[0], quadrants[3], quadrants[1]]
        let corners = [(4, 4), (59, 4), (4, 43), (59, 43)].map { frame.pixel(x: $0.0, y: $0.1) }
        for (corner, colour) in zip(corners, expected) {
            #expect(FrameRendererTests.close(corner, colour, tolerance: 14), "\(corner) against \(colour)")
        }
    }

    /// The need is the picture's planes once, not libheif's planes, RGB and interleaved copies.
    @Test func aStillsNeedIsItsPlanesOnce() throws {
        let header = try FrameRenderer(budget: MemoryBudget(limit: 64 << 20)).header(
            of: "\(HEIFRenderingTests.fixtures)/quadrants.avif")
        guard case .heif(var heif) = header.details, var still = heif.still else {
            Issue.record("quadrants.avif was not read as an AV1 still")
            return
        }
        still.size = Size(width: 4032, height: 3024)
        still.chroma = 1
        heif.still = still
        heif.size = still.size
        var whole = heif
        whole.still = nil
        let pixels = 4032 * 3024
        #expect(heif.decoderWorkspaceBytes < pixels * 2 + (6 << 20))
        #expect(whole.decoderWorkspaceBytes > pixels * 4)
    }
}
