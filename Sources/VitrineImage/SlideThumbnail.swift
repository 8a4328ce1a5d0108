import CJPEG
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The slide on screen as a small JPEG, for a dashboard (the MQTT image topic): the frame averaged down to fit
/// `maxSide` (each thumbnail pixel the mean of the frame pixels it covers, so fine detail does not alias), then
/// encoded.
public enum SlideThumbnail {
    public static func jpeg(of frame: Frame, maxSide: Int = 480, quality: Int = 80) throws(ImageError) -> [UInt8] {
        let size = frame.size
        let scale = min(1, Double(maxSide) / Double(max(size.width, size.height)))
        let width = max(1, Int((Double(size.width) * scale).rounded()))
        let height = max(1, Int((Double(size.height) * scale).rounded()))
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            let top = y * size.height / height
            let bottom = max(top + 1, (y + 1) * size.height / height)
            for x in 0..<width {
                let left = x * size.width / width
                let right = max(left + 1, (x + 1) * size.width / width)
                var blue = 0
                var green = 0
                var red = 0
                for row in top..<bottom {
                    let line = frame.pixels + row * size.width
                    for column in left..<right {
                        let pixel = line[column]
                        blue += Int(pixel & 0xFF)
                        green += Int((pixel >> 8) & 0xFF)
                        red += Int((pixel >> 16) & 0xFF)
                    }
                }
                let count = (bottom - top) * (right - left)
                pixels[y * width + x] =
                    UInt32(blue / count) | UInt32(green / count) << 8 | UInt32(red / count) << 16 | 0xFF00_0000
            }
        }
        var memory: UnsafeMutablePointer<UInt8>?
        var memorySize: UInt = 0
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        let status = pixels.withUnsafeBytes { bytes in
            vitrine_jpeg_encode_memory(
                &memory, &memorySize, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(width),
                UInt32(height), width * 4, Int32(quality), &message)
        }
        defer { free(memory) }
        guard status == 0, let memory else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImageError(file: "the slide on screen", reason: .encodeFailed(text))
        }
        return Array(UnsafeBufferPointer(start: memory, count: Int(memorySize)))
    }
}
