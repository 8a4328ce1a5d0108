import VitrineCore

/// libFuzzer entry: what Vitrine itself reads of a HEIF or AVIF file (libheif reads the boxes): the `ftyp` brands
/// that tell the format, and the EXIF block libheif hands over (a four-byte offset, then the TIFF structure).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHEIFMetadata(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = ImageFormat.detect(Array(bytes.prefix(ImageFormat.signatureLength)))
    _ = ImageFormat.describeUnknown(Array(bytes.prefix(ImageFormat.signatureLength)))
    if let fields = ExifReader.read(heifBlock: bytes) {
        _ = fields.orientation
        _ = fields.dateTimeOriginal
    }
    return 0
}
