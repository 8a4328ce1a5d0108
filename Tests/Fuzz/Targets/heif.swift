import VitrineCore

/// libFuzzer entry: what Vitrine itself reads of a HEIF or AVIF file: the `ftyp` brands that tell the format, the
/// item boxes (`HEIFContainer`), a grid or AV1 still described by them (`HEIFGrid`, `HEIFStill`: tiles, the
/// grid's description, clean aperture, turn and mirror) and the memory that is planned from them, and the EXIF
/// block libheif hands over (a four-byte offset, then the TIFF structure).
///
/// Structure-aware: random mutations break box sizes, and a box whose size runs past its parent hides
/// everything after it. Before parsing, each box's size in the nested boxes Vitrine walks is clamped to what its
/// parent has left, so a mutated field deep in `ipco` or `iloc` is read rather than stopping the walk at the top.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHEIFMetadata(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = ImageFormat.detect(Array(bytes.prefix(ImageFormat.signatureLength)))
    _ = ImageFormat.describeUnknown(Array(bytes.prefix(ImageFormat.signatureLength)))
    if let fields = ExifReader.read(heifBlock: bytes) {
        _ = fields.orientation
        _ = fields.dateTimeOriginal
    }
    fixSizes(&bytes, from: 0, to: bytes.count, depth: 0)
    let read = { (offset: Int, count: Int) throws(ImageError) -> [UInt8] in
        guard offset >= 0, offset < bytes.count, count > 0 else { return [] }
        return Array(bytes[offset..<min(bytes.count, offset + min(count, 1 << 24))])
    }
    for format in [ImageFormat.heif, .avif] {
        guard let container = try? HEIFContainer.parse(file: "fuzz", format: format, read: read) else { continue }
        for item in container.items.keys.prefix(64) {
            _ = container.properties(of: item)
            _ = container.size(of: item)
            _ = container.referenced(from: item, type: "dimg")
        }
        var header = HEIFHeader(
            size: Size(width: 1, height: 1), avif: format == .avif, hasAlpha: false, bitDepth: 8,
            hasColorProfile: false, exif: nil)
        if let grid = try? HEIFGrid.read(container, file: "fuzz", format: format, read: read) {
            header.grid = grid
            header.size = grid.crop.size
            for reduction in header.reductions { _ = header.decoderWorkspaceBytes(reduction: reduction) }
            _ = header.bandSize(grid)
        }
        if let still = try? HEIFStill.read(container, file: "fuzz", format: format) {
            header.grid = nil
            header.still = still
            _ = header.decoderWorkspaceBytes
        }
    }
    return 0
}

/// Clamps each box's size to its parent's end, in the boxes that hold boxes: the top level, `meta`, `iinf`,
/// `iref`, `iprp`, `ipco` and `dinf`.
func fixSizes(_ bytes: inout [UInt8], from start: Int, to end: Int, depth: Int) {
    guard depth < 6 else { return }
    var position = start
    while position + 8 <= end {
        var size =
            Int(bytes[position]) << 24 | Int(bytes[position + 1]) << 16 | Int(bytes[position + 2]) << 8
            | Int(bytes[position + 3])
        if size < 8 || size > end - position {
            size = end - position
            let value = UInt32(clamping: size)
            for index in 0..<4 { bytes[position + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
        }
        let type = String(decoding: bytes[position + 4..<position + 8], as: UTF8.self)
        let skip: Int?
        switch type {
        case "meta", "iref": skip = 12
        case "iinf": skip = position + 8 < end && bytes[position + 8] == 0 ? 14 : 16
        case "iprp", "ipco", "dinf": skip = 8
        default: skip = nil
        }
        if let skip, skip <= size { fixSizes(&bytes, from: position + skip, to: position + size, depth: depth + 1) }
        position += size
    }
}
