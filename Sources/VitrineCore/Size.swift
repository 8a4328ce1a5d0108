/// A pixel size, written `WxH` in configuration files and on the command line.
public struct Size: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    /// The largest side Vitrine accepts anywhere: DRM framebuffers and libjpeg-turbo both stop well below it.
    public static let maximumSide = 16384

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `800x480`; nil for anything else, including zero, negative or oversized sides.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
            let width = Int(parts[0]), let height = Int(parts[1]),
            (1...Self.maximumSide).contains(width), (1...Self.maximumSide).contains(height)
        else { return nil }
        self.init(width: width, height: height)
    }

    public var description: String { "\(width)x\(height)" }
    /// `Int.max` for a size whose product does not fit (only a crafted file declares one).
    public var pixelCount: Int { width.saturatingTimes(height) }
    public var transposed: Size { Size(width: height, height: width) }

    /// Bytes of an XRGB8888 buffer of this size, or nil when the product overflows.
    public var xrgbByteCount: Int? {
        let (pixels, overflowPixels) = width.multipliedReportingOverflow(by: height)
        let (bytes, overflowBytes) = pixels.multipliedReportingOverflow(by: 4)
        return overflowPixels || overflowBytes ? nil : bytes
    }
}
