import CHeif
import VitrineCore
import VitrinePlatform

/// A HEIF or AVIF file read by libheif, and its primary image: the one a phone shows (not the thumbnails, depth
/// maps or burst frames beside it). Owns the libheif context and the image handle, released on deinit.
final class HEIFFile {
    /// libheif reads through `source` for as long as the context lives: heap-allocated, so its address holds.
    private let source: UnsafeMutablePointer<vitrine_heif_source>
    /// The offsets `source` clears hidden flags at; libheif's reader reads them while the context lives.
    private let revealed: UnsafeMutablePointer<Int64>
    private var cancellation: CancellationCheck?
    private let context: OpaquePointer
    let handle: OpaquePointer
    let path: String

    /// Opens the file at `descriptor` (`fileBytes` long) and its primary image; `maximumSide` is libheif's own limit
    /// on an image's width and height, beside Vitrine's pixel cap.
    /// `reveal` lists the file offsets of hidden flags to clear as libheif reads them (a grid's tiles).
    init(path: String, descriptor: Int32, fileBytes: Int, maximumSide: Int = 1 << 16, reveal: [Int] = [])
        throws(ImageError)
    {
        self.path = path
        do {
            try LazyLibrary.heif.load()
        } catch {
            throw ImageError(file: path, reason: .decodeFailed("\(error)"))
        }
        revealed = .allocate(capacity: max(1, reveal.count))
        revealed.initialize(from: reveal.sorted().map(Int64.init), count: reveal.count)
        guard let context = heif_context_alloc() else {
            throw ImageError(file: path, reason: .decodeFailed("libheif: out of memory"))
        }
        source = .allocate(capacity: 1)
        source.initialize(
            to: vitrine_heif_source(
                descriptor: descriptor, size: Int64(fileBytes), position: 0, cancelled: nil, cancel_context: nil,
                refused: 0, read_errno: 0, reveal: revealed, reveal_count: reveal.count))
        heif_context_set_maximum_image_size_limit(context, Int32(maximumSide))
        let read = vitrine_heif_read_source(context, source)
        var handle: OpaquePointer?
        var failure = read.code == heif_error_Ok ? nil : Self.message(read)
        if failure == nil {
            let primary = heif_context_get_primary_image_handle(context, &handle)
            if primary.code != heif_error_Ok { failure = Self.message(primary) }
        }
        if let unread = Self.unread(source.pointee) { failure = unread }
        guard failure == nil, let handle else {
            heif_context_free(context)
            source.deallocate()
            revealed.deallocate()
            throw ImageError(file: path, reason: .damaged(.heif, failure ?? "no primary image"))
        }
        self.context = context
        self.handle = handle
    }

    deinit {
        heif_image_handle_release(handle)
        heif_context_free(context)
        source.deallocate()
        revealed.deallocate()
    }

    /// A handle to item `id` (a grid's tile, once revealed); the caller releases it.
    func handle(item id: UInt32) -> Result<OpaquePointer, HEIFDecodeFailure> {
        var tile: OpaquePointer?
        let status = heif_context_get_image_handle(context, id, &tile)
        guard status.code == heif_error_Ok, let tile else { return .failure(.failed(Self.message(status))) }
        return .success(tile)
    }

    /// The item libheif takes as the primary image.
    var primaryItem: UInt32? {
        var id: heif_item_id = 0
        return heif_context_get_primary_image_ID(context, &id).code == heif_error_Ok ? id : nil
    }

    /// Asks `isCancelled` before each read of coded data from now on (from libheif's threads and the caller's
    /// tile threads too, which libheif serialises around the reader).
    func cancel(when isCancelled: (() -> Bool)?) {
        guard let isCancelled else { return }
        let check = CancellationCheck(isCancelled)
        cancellation = check
        source.pointee.cancel_context = Unmanaged.passUnretained(check).toOpaque()
        source.pointee.cancelled = { context in
            guard let context else { return 0 }
            return Unmanaged<CancellationCheck>.fromOpaque(context).takeUnretainedValue().isCancelled() ? 1 : 0
        }
    }

    /// Decodes one image (the primary, or a tile) as 8-bit RGB in `chroma`, as libheif converts it (each tile with
    /// its own nclx or its bitstream's colour description). Safe from several threads at once for different
    /// handles (libheif serialises reads); `readFailure` says afterwards whether reads were refused, which makes
    /// every result since untrustworthy.
    func decode(_ image: OpaquePointer, chroma: heif_chroma, options: UnsafeMutablePointer<heif_decoding_options>?)
        -> Result<OpaquePointer, HEIFDecodeFailure>
    {
        var decoded: OpaquePointer?
        let status = heif_decode_image(image, &decoded, heif_colorspace_RGB, chroma, options)
        guard let decoded, status.code == heif_error_Ok else {
            if let decoded { heif_image_release(decoded) }
            return .failure(.failed(Self.message(status)))
        }
        return .success(decoded)
    }

    /// Why reads were refused since the file was opened (cancelled, or the file failed), once the threads that
    /// decoded are joined.
    var readFailure: HEIFDecodeFailure? {
        switch source.pointee.refused {
        case 1: return .cancelled
        case 2: return .failed(Self.unread(source.pointee) ?? "the file failed while it was read")
        default: return nil
        }
    }

    /// What went wrong when reads were answered with zeros because the file ended or failed after it was opened
    /// (it is being rewritten, or its disk or share failed).
    private static func unread(_ source: vitrine_heif_source) -> String? {
        guard source.refused == 2 else { return nil }
        let cause = source.read_errno == 0 ? "it ended early" : String(cString: strerror(source.read_errno))
        return "the file changed or failed while it was read: \(cause)"
    }

    static func message(_ error: heif_error) -> String {
        let text = error.message.map { String(cString: $0) } ?? ""
        return text.isEmpty ? "libheif error \(error.code.rawValue)" : text
    }

    /// The primary image's size with the HEIF transforms (rotation, mirroring, crop) applied, as it is shown.
    var size: Size {
        Size(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
    }

    var hasAlpha: Bool { heif_image_handle_has_alpha_channel(handle) != 0 }

    var bitDepth: Int { max(8, Int(heif_image_handle_get_luma_bits_per_pixel(handle))) }

    var hasColorProfile: Bool {
        heif_image_handle_get_color_profile_type(handle) != heif_color_profile_type_not_present
    }

    /// The colour space the primary image declares: an ICC profile (prof, rICC) first, else an nclx description.
    var colorProfile: ColorProfile? {
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        if size > 0, size <= 4 << 20 {
            var bytes = [UInt8](repeating: 0, count: size)
            if heif_image_handle_get_raw_color_profile(handle, &bytes).code == heif_error_Ok { return .icc(bytes) }
        }
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        guard heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx else {
            return nil
        }
        defer { heif_nclx_color_profile_free(nclx) }
        let value = nclx.pointee
        let xy = [
            value.color_primary_red_x, value.color_primary_red_y, value.color_primary_green_x,
            value.color_primary_green_y, value.color_primary_blue_x, value.color_primary_blue_y,
            value.color_primary_white_x, value.color_primary_white_y,
        ].map(Double.init)
        return ColorProfile.nclx(
            primaries: Int(value.color_primaries.rawValue), transfer: Int(value.transfer_characteristics.rawValue),
            xy: xy)
    }

    /// The first EXIF block of the primary image: libheif's block starts with a four-byte offset to the TIFF header.
    var exif: ExifReader.Fields? {
        var identifier: heif_item_id = 0
        guard heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &identifier, 1) == 1 else { return nil }
        let size = heif_image_handle_get_metadata_size(handle, identifier)
        guard size > 4, size <= 1 << 20 else { return nil }
        var block = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_metadata(handle, identifier, &block).code == heif_error_Ok else { return nil }
        return ExifReader.read(heifBlock: block)
    }

    /// `xmp:Rating` from the primary image's XMP packet (a `mime` metadata block; the few others a phone writes hold
    /// no rating, and a scan of them finds none).
    var rating: Int? {
        var identifiers = [heif_item_id](repeating: 0, count: 8)
        let count = heif_image_handle_get_list_of_metadata_block_IDs(handle, "mime", &identifiers, 8)
        for identifier in identifiers.prefix(Int(max(0, count))) {
            let size = heif_image_handle_get_metadata_size(handle, identifier)
            guard size > 0, size <= XMPRating.largestPacket else { continue }
            var block = [UInt8](repeating: 0, count: size)
            guard heif_image_handle_get_metadata(handle, identifier, &block).code == heif_error_Ok else { continue }
            if let rating = XMPRating.rating(in: block[...]) { return rating }
        }
        return nil
    }

    /// Decodes the primary image, asking `isCancelled` (from libheif's threads too) before each read of coded
    /// data: once it says yes the decode ends at the next tile, as `.cancelled`. The question is asked for this
    /// decode only, and a refusal is forgotten after it.
    func decode(
        chroma: heif_chroma, options: UnsafeMutablePointer<heif_decoding_options>?, isCancelled: (() -> Bool)?
    ) -> Result<OpaquePointer, HEIFDecodeFailure> {
        cancel(when: isCancelled ?? { false })
        defer {
            source.pointee.cancelled = nil
            source.pointee.cancel_context = nil
            source.pointee.refused = 0
            cancellation = nil
        }
        let result = decode(handle, chroma: chroma, options: options)
        guard let failure = readFailure else { return result }
        if case .success(let image) = result { heif_image_release(image) }
        return .failure(failure)
    }

    enum HEIFDecodeFailure: Error {
        case cancelled
        case failed(String)
    }

    /// The cancellation question, boxed so the reader's C callback can reach it through a pointer.
    private final class CancellationCheck {
        let isCancelled: () -> Bool
        init(_ isCancelled: @escaping () -> Bool) { self.isCancelled = isCancelled }
    }

    /// The header, with the grid that `container` (Vitrine's own reading of the boxes) describes when the primary
    /// image is one and it can be decoded tile by tile; without a container libheif decodes the image whole.
    func header(avif: Bool, container: HEIFContainer?, grid: HEIFGrid?, still: HEIFStill?) -> HEIFHeader {
        var header = HEIFHeader(
            size: size, avif: avif, hasAlpha: hasAlpha, bitDepth: bitDepth, hasColorProfile: hasColorProfile,
            exif: exif)
        header.rating = rating
        header.colorProfile = colorProfile
        // An image with alpha (an auxiliary alpha image or grid) is left to libheif, which composes the two.
        guard let container, !hasAlpha, container.primary == primaryItem else { return header }
        if let still {
            header.still = still
            header.size = still.crop.size
            header.orientation = still.orientation
        } else if let grid, let first = grid.tiles.first {
            header.grid = grid
            header.size = grid.crop.size
            header.orientation = grid.orientation
            for case .codec(_, _, let depth) in container.properties(of: first) {
                header.bitDepth = max(8, depth)
            }
        }
        return header
    }
}
