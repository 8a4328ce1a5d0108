import VitrineCore

/// A HEIF or AVIF primary image that is a grid (ISO/IEC 23008-12, 6.6.2.3), as phones write their photos: tiles of
/// one size (iPhones use 512x512 HEVC tiles), pasted row by row onto a canvas that may be smaller than the tiles
/// cover, then cropped, turned and mirrored as the grid item's properties say.
public struct HEIFGrid: Equatable, Sendable {
    /// The tiles' item IDs, row by row.
    public var tiles: [UInt32]
    public var rows: Int
    public var columns: Int
    public var tileSize: Size
    /// The canvas (the grid's output_width and output_height).
    public var canvas: Size
    /// `hvc1` or `av01`.
    public var codec: String
    /// The tiles whose hidden flag must be cleared for libheif to hand them out, by the file offset of that flag.
    public var hiddenFlagOffsets: [Int]
    /// The shown part of the canvas (the clean aperture), in canvas pixels.
    public var crop: Crop
    /// What the grid's `irot` and `imir` ask, as the turn and mirror of the cropped canvas.
    public var orientation: Orientation

    public struct Crop: Equatable, Sendable {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
        public var size: Size { Size(width: width, height: height) }
    }

    /// The grid of `container`'s primary item, or nil when the primary image is not a grid. Throws for a grid
    /// that breaks the format's rules: tiles missing or of different sizes, a canvas larger than its tiles.
    public static func read(
        _ container: HEIFContainer, file: String, format: ImageFormat, read: (Int, Int) throws(ImageError) -> [UInt8]
    ) throws(ImageError) -> HEIFGrid? {
        let fail = BoxFailure(file: file, format: format)
        guard container.items[container.primary]?.type == "grid" else { return nil }
        guard let ranges = try container.fileRanges(of: container.primary, fail: fail), ranges.count == 1 else {
            throw fail("the grid item has no single data extent")
        }
        let bytes = try read(ranges[0].lowerBound, min(max(ranges[0].count, 8), 12))
        var box = BoxReader(bytes: bytes, fail: fail)
        _ = try box.integer(1)
        let wide = try box.integer(1) & 1 != 0
        let rows = try box.integer(1) + 1
        let columns = try box.integer(1) + 1
        let canvas = Size(width: try box.integer(wide ? 4 : 2), height: try box.integer(wide ? 4 : 2))
        let tiles = container.referenced(from: container.primary, type: "dimg")
        guard tiles.count == rows * columns else {
            throw fail("the grid has \(rows)x\(columns) cells but \(tiles.count) tiles")
        }
        guard let first = tiles.first, let tileItem = container.items[first],
            let tileSize = container.size(of: first), tileSize.width > 0, tileSize.height > 0
        else { throw fail("the grid's first tile has no size") }
        var hidden: [Int] = []
        for tile in tiles {
            guard let item = container.items[tile], item.type == tileItem.type else {
                throw fail("tile \(tile) is missing or not coded like the first")
            }
            guard container.size(of: tile) == tileSize else {
                throw fail("tile \(tile) differs in size from the first")
            }
            if item.hidden { hidden.append(item.flagsOffset) }
        }
        guard tileItem.type == "hvc1" || tileItem.type == "av01" else {
            throw fail("tiles coded as '\(tileItem.type)'")
        }
        guard canvas.width > 0, canvas.height > 0, canvas.width <= columns * tileSize.width,
            canvas.height <= rows * tileSize.height
        else {
            throw fail("a \(canvas) canvas from \(columns)x\(rows) tiles of \(tileSize)")
        }
        let (crop, orientation) = try transforms(
            container.properties(of: container.primary), canvas: canvas, fail: fail)
        return HEIFGrid(
            tiles: tiles, rows: rows, columns: columns, tileSize: tileSize, canvas: canvas, codec: tileItem.type,
            hiddenFlagOffsets: hidden, crop: crop, orientation: orientation)
    }

    /// Applies the transformative properties in the order they are associated (the order HEIF prescribes), as a
    /// crop of the canvas and then one turn-and-mirror: a `clap` after an `irot` crops the turned picture, so its
    /// rectangle is taken back to the canvas's axes.
    static func transforms(
        _ properties: [HEIFContainer.Property], canvas: Size, fail: BoxFailure
    ) throws(ImageError) -> (Crop, Orientation) {
        var crop = Crop(x: 0, y: 0, width: canvas.width, height: canvas.height)
        var orientation = Orientation.up
        for property in properties {
            switch property {
            case .irot(let turns):
                let turn: [Orientation] = [.up, .rotated270, .rotated180, .rotated90]
                orientation = orientation.then(turn[turns & 3])
            case .imir(let axis):
                // As libheif reads it (and so pillow-heif and most viewers): axis 1 swaps left and right.
                orientation = orientation.then(axis == 1 ? .mirrored : .flippedVertically)
            case .clap(let aperture):
                let shown = orientation.displayedSize(ofStored: crop.size)
                guard let window = cleanAperture(aperture, of: shown) else {
                    throw fail("a clean aperture outside the \(shown) picture")
                }
                var (x, y, width, height) = window
                let mapping = orientation.mapping
                if mapping.mirrorX { x = shown.width - x - width }
                if mapping.mirrorY { y = shown.height - y - height }
                if mapping.transpose { (x, y, width, height) = (y, x, height, width) }
                crop = Crop(x: crop.x + x, y: crop.y + y, width: width, height: height)
            default:
                break
            }
        }
        return (crop, orientation)
    }

    /// The clean aperture's rectangle in a picture of `size`, rounded as libheif rounds it (pillow-heif, the
    /// reference, and most viewers use libheif): the left edge truncated, the top edge and the far edges rounded,
    /// all clamped to the picture.
    static func cleanAperture(
        _ aperture: HEIFContainer.CleanAperture, of size: Size
    ) -> (x: Int, y: Int, width: Int, height: Int)? {
        func value(_ fraction: HEIFContainer.Fraction) -> Double {
            Double(fraction.numerator) / Double(fraction.denominator)
        }
        func edges(_ extent: HEIFContainer.Fraction, _ offset: HEIFContainer.Fraction, _ side: Int, truncate: Bool)
            -> (Int, Int)?
        {
            guard extent.denominator > 0, offset.denominator > 0, extent.numerator > 0 else { return nil }
            let near = value(offset) + Double(side - 1) / 2 - (value(extent) - 1) / 2
            let low = Int(truncate ? near.rounded(.towardZero) : (near + 0.5).rounded(.towardZero))
            let high = Int((value(extent) - 1 + Double(low) + 0.5).rounded(.towardZero))
            let (first, last) = (max(0, low), min(side - 1, high))
            return first <= last ? (first, last) : nil
        }
        guard let (left, right) = edges(aperture.width, aperture.horizontalOffset, size.width, truncate: true),
            let (top, bottom) = edges(aperture.height, aperture.verticalOffset, size.height, truncate: false)
        else { return nil }
        return (left, top, right - left + 1, bottom - top + 1)
    }
}

extension Orientation {
    /// This orientation followed by `next` (each as a transpose, then mirrors of the axes).
    func then(_ next: Orientation) -> Orientation {
        let first = mapping
        let second = next.mapping
        // Mirrors done before a transpose land on the other axis.
        let mirrorX = (second.transpose ? first.mirrorY : first.mirrorX) != second.mirrorX
        let mirrorY = (second.transpose ? first.mirrorX : first.mirrorY) != second.mirrorY
        let transpose = first.transpose != second.transpose
        return Orientation.allCases.first { $0.mapping == (transpose, mirrorX, mirrorY) } ?? .up
    }
}

/// A HEIF or AVIF primary image coded as one AV1 picture (how AVIF files from phones and converters are written),
/// decoded by dav1d directly so the picture is held once, as its Y'CbCr planes.
public struct HEIFStill: Equatable, Sendable {
    /// Where the coded picture is in the file, in order.
    public var extents: [Range<Int>]
    /// The coded size (`ispe`).
    public var size: Size
    public var crop: HEIFGrid.Crop
    public var orientation: Orientation
    /// The matrix and range of the item's nclx colour box, which win over the bitstream's.
    public var matrix: Int?
    public var fullRange: Bool?
    /// The chroma format its `av1C` declares (0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4).
    public var chroma = 3

    public var codedBytes: Int { extents.reduce(0) { $0.saturatingPlus($1.count) } }

    /// The still of `container`'s primary item when it is one AV1 picture; nil otherwise.
    public static func read(_ container: HEIFContainer, file: String, format: ImageFormat) throws(ImageError)
        -> HEIFStill?
    {
        let fail = BoxFailure(file: file, format: format)
        guard container.items[container.primary]?.type == "av01" else { return nil }
        guard let size = container.size(of: container.primary), size.width > 0, size.height > 0 else {
            throw fail("the AV1 image has no size")
        }
        guard let extents = try container.fileRanges(of: container.primary, fail: fail) else {
            throw fail("the AV1 image has no data")
        }
        let properties = container.properties(of: container.primary)
        let (crop, orientation) = try HEIFGrid.transforms(properties, canvas: size, fail: fail)
        var still = HEIFStill(extents: extents, size: size, crop: crop, orientation: orientation)
        for property in properties {
            if case .nclx(_, _, let matrix, let fullRange) = property {
                still.matrix = matrix
                still.fullRange = fullRange
            }
            if case .codec(_, let chroma, _) = property { still.chroma = chroma }
        }
        return still
    }
}
