import VitrineCore

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer entry: Vitrine's lossless WebP decoder (`VP8LDecoder`: prefix codes, colour cache, meta codes,
/// backward references into the ring, the four inverse transforms) on a VP8L bitstream, every row decoded and
/// finished.
///
/// Structure-aware: the bitstream has no checksum, so mutations reach the codes as they are; only the header is
/// set, so the picture stays small and the run fast: the signature, width and height from bytes 1 and 2 (1 to 256
/// each), the alpha and version bits as byte 4 has them, then the input's own bits. A real bitstream of at most
/// 256x256 with bytes 1 and 2 set to its width and height less one is read as it is. Seeds: corpus/vp8l (bitstreams
/// libwebp wrote, with every transform, palettes, the colour cache and meta codes).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVP8L(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 7 else { return 0 }
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let width = Int(bytes[1]) + 1
    let height = Int(bytes[2]) + 1
    // 14 bits of width - 1, 14 of height - 1, then the input's alpha and version bits.
    let fields = (width - 1) | (height - 1) << 14 | (Int(bytes[4]) >> 4) << 28
    bytes[0] = 0x2F
    for index in 0..<4 { bytes[1 + index] = UInt8(truncatingIfNeeded: fields >> (8 * index)) }
    // The decoder reads a file, as the player does: an unlinked temporary one.
    var template = Array("/tmp/vitrine-vp8l-XXXXXX".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress.map { mkstemp($0) } ?? -1
    }
    guard descriptor >= 0 else { return 0 }
    template.withUnsafeBufferPointer { buffer in _ = buffer.baseAddress.map { unlink($0) } }
    defer { close(descriptor) }
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count else { return 0 }
    guard let decoder = try? VP8LDecoder(descriptor: descriptor, range: 0..<bytes.count) else { return 0 }
    let row = UnsafeMutablePointer<UInt32>.allocate(capacity: max(decoder.width, 1))
    defer { row.deallocate() }
    for _ in 0..<decoder.height {
        guard (try? decoder.nextRow(into: row)) != nil else { break }
    }
    return 0
}
