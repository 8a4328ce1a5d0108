import CHeif
import VitrineCore
import VitrinePlatform

/// A HEIF or AVIF grid decoded one band of tiles at a time: the tiles of one grid row that the crop touches are
/// decoded (two at once on two threads, one at a time for a camera's large tiles), converted to RGB by libheif,
/// reduced into the band (`TileBand`) and freed; the band's rows are then handed out as BGRX as they are asked
/// for. Peak memory is the band and the tiles in flight, whatever the photo's size: a 200 MP grid needs about as
/// much as a 12 MP one.
///
/// libheif 1.15 has no call for one tile of a grid, and hands out top-level items only; the tiles are hidden
/// items, so `HEIFFile` clears their hidden flag as libheif reads the boxes, and each tile is then an image of its
/// own to libheif.
final class HEIFGridDecoder: RowDecoder {
    let outputSize: Size
    var rowBatch: Int { 16 }
    var warning: String? { nil }
    let colorProfile: ColorProfile?
    private let heif: HEIFFile
    private let grid: HEIFGrid
    private let band: TileBand
    private let firstColumn: Int
    /// Rows of one band, and the crop's corner in the first band's reduced pixels.
    private let tileRows: Int
    private let cropX: Int
    private let cropY: Int
    private var bandRow = -1
    private var row = 0

    /// `reduction` (1, 2, 4 or 8, dividing the tile size) is how much smaller than the photo the decoder delivers.
    init(
        file: borrowing PhotoFile, header: HEIFHeader, grid: HEIFGrid, reduction: Int, isCancelled: (() -> Bool)?
    ) throws(ImageError) {
        heif = try HEIFFile(
            path: file.path, descriptor: file.descriptor, fileBytes: file.byteCount, reveal: grid.hiddenFlagOffsets)
        let codec = grid.codec == "av01" ? VITRINE_HEIF_COMPRESSION_AV1 : VITRINE_HEIF_COMPRESSION_HEVC
        guard heif_have_decoder_for_format(heif_compression_format(UInt32(codec))) != 0 else {
            throw ImageError(
                file: file.path,
                reason: .unsupportedVariant(
                    header.avif ? .avif : .heif,
                    "libheif here has no \(header.avif ? "AV1" : "HEVC") decoder (install libheif's plugins)"))
        }
        heif.cancel(when: isCancelled)
        self.grid = grid
        colorProfile = header.colorProfile
        // The size the plan expects: the crop reduced, each side rounded up (as a JPEG's scaled decode). The band
        // covers it, as tiles are whole multiples of the reduction.
        outputSize = Size(
            width: (grid.crop.width + reduction - 1) / reduction, height: (grid.crop.height + reduction - 1) / reduction
        )
        firstColumn = grid.crop.x / grid.tileSize.width
        let band = header.bandSize(grid)
        self.band = TileBand(
            size: Size(width: band.width / reduction, height: band.height / reduction), reduction: reduction)
        tileRows = grid.tileSize.height / reduction
        cropX = grid.crop.x / reduction - firstColumn * grid.tileSize.width / reduction
        cropY = grid.crop.y / reduction
    }

    func read(into rows: [UnsafeMutablePointer<UInt8>]) -> Result<Int, RowDecodeFailure> {
        var count = 0
        for destination in rows where row < outputSize.height {
            let reducedRow = cropY + row
            let needed = reducedRow / tileRows
            if needed != bandRow {
                if let failure = decodeBand(needed) { return .failure(RowDecodeFailure(message: failure)) }
                bandRow = needed
            }
            band.convert(row: reducedRow - needed * tileRows, firstX: cropX, count: outputSize.width, into: destination)
            row += 1
            count += 1
        }
        return .success(count)
    }

    func finish() -> String? { nil }

    /// Decodes the tiles of grid row `gridRow` that the crop touches into the band; the failure, if any.
    private func decodeBand(_ gridRow: Int) -> String? {
        let columns = band.size.width * band.reduction / grid.tileSize.width
        var handles: [OpaquePointer] = []
        defer { handles.forEach { heif_image_handle_release($0) } }
        for column in firstColumn..<firstColumn + columns {
            let tile = grid.tiles[gridRow * grid.columns + column]
            switch heif.handle(item: tile) {
            case .success(let handle): handles.append(handle)
            case .failure(let failure): return "tile \(tile): \(Self.describe(failure))"
            }
        }
        let job = BandJob(heif: heif, band: band, handles: handles, tileSize: grid.tileSize)
        let lanes = min(HEIFHeader.tileThreads(for: grid.tileSize), handles.count)
        let helpers = (1..<max(1, lanes)).map { lane in JoinableThread { job.run(lane: lane, of: lanes) } }
        job.run(lane: 0, of: lanes)
        helpers.forEach { $0.join() }
        if let failure = heif.readFailure {
            return Self.describe(failure)
        }
        let failures = job.failures
        if let index = failures.firstIndex(where: { $0 != nil }), let message = failures[index] {
            let tile = grid.tiles[gridRow * grid.columns + firstColumn + index]
            return "libheif: tile \(tile) (row \(gridRow + 1), column \(firstColumn + index + 1)): \(message)"
        }
        return nil
    }

    private static func describe(_ failure: HEIFFile.HEIFDecodeFailure) -> String {
        switch failure {
        case .cancelled: return "cancelled"
        case .failed(let message): return "libheif: \(message)"
        }
    }
}

/// The tiles of one band, decoded by several threads: lane `k` of `n` decodes tiles k, k+n, ..., each into its own
/// columns of the band, so the threads share nothing they write.
private final class BandJob: @unchecked Sendable {
    // @unchecked: `heif` is used only through calls libheif allows on several threads for different handles, each
    // lane writes only its own tiles' columns of `band` and its own entries of `slots`, and the caller reads
    // them after joining the lanes.
    let heif: HEIFFile
    let band: TileBand
    let handles: [OpaquePointer]
    let tileSize: Size
    /// One entry per tile, each written by its lane alone: a buffer, not an array, whose copy-on-write check two
    /// lanes would race on.
    private let slots: UnsafeMutableBufferPointer<String?>

    /// What went wrong with each tile (nil: nothing), once the lanes are joined.
    var failures: [String?] { Array(slots) }

    init(heif: HEIFFile, band: TileBand, handles: [OpaquePointer], tileSize: Size) {
        self.heif = heif
        self.band = band
        self.handles = handles
        self.tileSize = tileSize
        slots = .allocate(capacity: handles.count)
        slots.initialize(repeating: nil)
    }

    deinit {
        _ = slots.deinitialize()
        slots.deallocate()
    }

    func run(lane: Int, of lanes: Int) {
        let options = vitrine_heif_tile_decoding_options()
        defer { heif_decoding_options_free(options) }
        for index in stride(from: lane, to: handles.count, by: lanes) {
            switch heif.decode(handles[index], chroma: heif_chroma_interleaved_RGB, options: options) {
            case .success(let image):
                slots[index] = band.copy(image, column: index * tileSize.width, tileSize: tileSize)
                heif_image_release(image)
            case .failure(.cancelled): slots[index] = "cancelled"
            case .failure(.failed(let message)): slots[index] = message
            }
            if slots[index] != nil { return }
        }
    }
}

/// One band of tiles as 8-bit RGB, each tile reduced by `reduction` in both directions (the mean of each square of
/// `reduction` pixels, a proper low-pass step like a JPEG's scaled inverse DCT) as it is copied in.
final class TileBand: @unchecked Sendable {
    // @unchecked: written by `BandJob`'s lanes, each in its own columns, and read after they are joined.
    /// The band's size in reduced pixels.
    let size: Size
    let reduction: Int
    private let pixels: UnsafeMutablePointer<UInt8>

    init(size: Size, reduction: Int) {
        self.size = size
        self.reduction = reduction
        pixels = .allocate(capacity: max(1, size.pixelCount * 3))
    }

    deinit { pixels.deallocate() }

    /// Copies a decoded tile (interleaved RGB) into the band at `column` (full-size pixels); what is wrong with the
    /// tile, if anything.
    func copy(_ image: OpaquePointer, column: Int, tileSize: Size) -> String? {
        var stride: Int32 = 0
        guard let source = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
            return "the tile decoded to no RGB plane"
        }
        let width = Int(heif_image_get_width(image, heif_channel_interleaved))
        let height = Int(heif_image_get_height(image, heif_channel_interleaved))
        guard width >= tileSize.width, height >= tileSize.height else {
            return "the tile decodes to \(width)x\(height), smaller than the grid's \(tileSize) tiles"
        }
        let factor = reduction
        let (outputWidth, outputHeight) = (tileSize.width / factor, tileSize.height / factor)
        let x = column / factor
        guard x + outputWidth <= size.width, outputHeight <= size.height else {
            return "the tile lies outside the band"
        }
        if factor == 1 {
            for row in 0..<outputHeight {
                (pixels + (row * size.width + x) * 3).update(from: source + row * Int(stride), count: outputWidth * 3)
            }
            return nil
        }
        let sums = UnsafeMutablePointer<UInt32>.allocate(capacity: outputWidth * 3)
        defer { sums.deallocate() }
        let shift = UInt32(factor.trailingZeroBitCount * 2)
        let half = UInt32(1) << (shift - 1)
        for row in 0..<outputHeight {
            sums.initialize(repeating: 0, count: outputWidth * 3)
            for line in 0..<factor {
                let from = source + (row * factor + line) * Int(stride)
                for pixel in 0..<outputWidth {
                    var (red, green, blue): (UInt32, UInt32, UInt32) = (0, 0, 0)
                    for step in 0..<factor {
                        let sample = from + (pixel * factor + step) * 3
                        red &+= UInt32(sample[0])
                        green &+= UInt32(sample[1])
                        blue &+= UInt32(sample[2])
                    }
                    sums[pixel * 3] &+= red
                    sums[pixel * 3 + 1] &+= green
                    sums[pixel * 3 + 2] &+= blue
                }
            }
            let target = pixels + (row * size.width + x) * 3
            for index in 0..<outputWidth * 3 {
                target[index] = UInt8(truncatingIfNeeded: (sums[index] &+ half) >> shift)
            }
        }
        return nil
    }

    /// Converts `count` pixels of band row `row`, from band column `firstX`, to BGRX.
    func convert(row: Int, firstX: Int, count: Int, into output: UnsafeMutablePointer<UInt8>) {
        ColorConversion.rgbToBGRX(pixels + (row * size.width + firstX) * 3, into: output, pixelCount: count)
    }
}
