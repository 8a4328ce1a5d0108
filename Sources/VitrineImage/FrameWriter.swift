import CZlib
import VitrineCore
import VitrinePlatform

/// Writes frames as image files for `vitrine render` and snapshot tests: binary PPM (P6) or PNG (RGB, 8-bit).
public enum FrameWriter {
    public enum Format: String, Sendable {
        case ppm, png

        /// The format named by a file's extension, if Vitrine can write it.
        public init?(path: String) {
            let lower = path.lowercased()
            if lower.hasSuffix(".ppm") {
                self = .ppm
            } else if lower.hasSuffix(".png") {
                self = .png
            } else {
                return nil
            }
        }
    }

    public static func write(_ frame: Frame, to path: String, format: Format) throws(FileError) {
        let bytes = format == .ppm ? ppm(frame) : png(frame)
        try FileBytes.writeAtomically(bytes, to: path)
    }

    static func rgbRow(_ frame: Frame, _ y: Int, into bytes: inout [UInt8]) {
        let row = frame.pixels + y * frame.size.width
        for x in 0..<frame.size.width {
            let pixel = row[x]
            bytes.append(UInt8(truncatingIfNeeded: pixel >> 16))
            bytes.append(UInt8(truncatingIfNeeded: pixel >> 8))
            bytes.append(UInt8(truncatingIfNeeded: pixel))
        }
    }

    public static func ppm(_ frame: Frame) -> [UInt8] {
        var bytes = Array("P6\n\(frame.size.width) \(frame.size.height)\n255\n".utf8)
        bytes.reserveCapacity(bytes.count + frame.size.pixelCount * 3)
        for y in 0..<frame.size.height { rgbRow(frame, y, into: &bytes) }
        return bytes
    }

    public static func png(_ frame: Frame) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity(frame.size.height * (frame.size.width * 3 + 1))
        for y in 0..<frame.size.height {
            raw.append(0)
            rgbRow(frame, y, into: &raw)
        }
        var compressedLength = compressBound(uLong(raw.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedLength))
        let status = compressed.withUnsafeMutableBufferPointer { output in
            raw.withUnsafeBufferPointer { input in
                compress2(output.baseAddress, &compressedLength, input.baseAddress, uLong(input.count), 6)
            }
        }
        // compress2 fails only on a too-small buffer (compressBound rules that out) or when malloc fails.
        precondition(status == Z_OK, "zlib compress2 failed with \(status)")
        compressed.removeLast(compressed.count - Int(compressedLength))

        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        appendBigEndian(UInt32(frame.size.width), to: &header)
        appendBigEndian(UInt32(frame.size.height), to: &header)
        header += [8, 2, 0, 0, 0]
        appendChunk("IHDR", header, to: &file)
        appendChunk("IDAT", compressed, to: &file)
        appendChunk("IEND", [], to: &file)
        return file
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to file: inout [UInt8]) {
        appendBigEndian(UInt32(data.count), to: &file)
        let typeAndData = Array(type.utf8) + data
        file += typeAndData
        let crc = typeAndData.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        appendBigEndian(UInt32(crc), to: &file)
    }
}
