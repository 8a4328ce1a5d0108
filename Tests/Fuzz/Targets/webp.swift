import VitrineCore

/// libFuzzer entry: the WebP RIFF chunk walk (VP8, VP8L, VP8X, ANMF) and the EXIF reader behind it, on bytes as a
/// file would give them (reads past the end come back short, as from a truncated file).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebPHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let header = try? WebPHeader.parse(file: "fuzz.webp", fileBytes: bytes.count) { offset, count in
        guard offset >= 0, count >= 0, offset < bytes.count else { return [] }
        return Array(bytes[offset..<min(bytes.count, offset + count)])
    }
    if let header {
        // What the player derives from a header must not trap either.
        _ = ImageHeader(header).displayedSize
        _ = header.decoderWorkspaceBytes
    }
    return 0
}
