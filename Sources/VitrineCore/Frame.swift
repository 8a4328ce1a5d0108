/// A picture ready for scanout: XRGB8888 pixels (little-endian words 0x00RRGGBB, so bytes B, G, R, X), rows
/// packed without padding, at the panel's scanout size. Its bytes are charged to the memory budget for its lifetime.
/// A clip's picture bound for a plane that converts colours itself is NV12 instead (`Layout.nv12`).
public final class Frame: @unchecked Sendable {
    // @unchecked: the pixels (and `encoding`) are written only by the code that creates the frame, before it is
    // handed on; after that every owner only reads them.

    public enum Layout: Sendable, Equatable {
        case xrgb
        /// NV12: `width` x `height` bytes of Y', then `height / 2` rows of Cb and Cr bytes interleaved, `width`
        /// bytes each (even sizes only).
        case nv12
    }

    public let size: Size
    public let layout: Layout
    public let pixels: UnsafeMutablePointer<UInt32>
    /// How an NV12 frame's Y'CbCr values map to RGB (what the plane is told).
    public var encoding = YCbCrEncoding.bt709
    private let charge: MemoryBudget.Charge

    /// Charges the budget first, so a frame that does not fit is refused before any memory is touched.
    public init(size: Size, budget: MemoryBudget, purpose: String, layout: Layout = .xrgb)
        throws(MemoryBudget.Exceeded)
    {
        guard let bytes = Self.byteCount(size, layout) else {
            throw MemoryBudget.Exceeded(purpose: purpose, requested: Int.max, available: 0, limit: budget.limit)
        }
        charge = try budget.charge(bytes, for: purpose)
        self.size = size
        self.layout = layout
        pixels = .allocate(capacity: (bytes + 3) / 4)
    }

    deinit { pixels.deallocate() }

    public var byteCount: Int { Self.byteCount(size, layout) ?? 0 }

    /// Bytes of a frame of `size` in `layout`; nil when that does not fit in an Int or an NV12 size is odd.
    public static func byteCount(_ size: Size, _ layout: Layout) -> Int? {
        switch layout {
        case .xrgb: return size.xrgbByteCount
        case .nv12:
            guard size.width > 0, size.height > 0, size.width % 2 == 0, size.height % 2 == 0 else { return nil }
            let (luma, overflow) = size.width.multipliedReportingOverflow(by: size.height)
            let (total, overflowTotal) = luma.addingReportingOverflow(luma / 2)
            return overflow || overflowTotal ? nil : total
        }
    }

    /// The NV12 frame's Y' plane (`size.width` bytes a row) and its interleaved CbCr plane after it.
    public var luma: UnsafeMutablePointer<UInt8> {
        precondition(layout == .nv12, "an XRGB frame has no Y' plane")
        return UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: UInt8.self)
    }
    public var chroma: UnsafeMutablePointer<UInt8> { luma + size.pixelCount }

    public func pixel(x: Int, y: Int) -> UInt32 {
        precondition(layout == .xrgb, "an NV12 frame has no XRGB pixels")
        precondition(x >= 0 && x < size.width && y >= 0 && y < size.height, "pixel outside the frame")
        return pixels[y * size.width + x]
    }

    public func fill(_ color: RGBColor) {
        precondition(layout == .xrgb, "an NV12 frame has no XRGB pixels")
        pixels.update(repeating: color.xrgb, count: size.pixelCount)
    }

    /// Fills a rectangle, clipped to the frame.
    public func fill(_ color: RGBColor, x: Int, y: Int, width: Int, height: Int) {
        precondition(layout == .xrgb, "an NV12 frame has no XRGB pixels")
        let left = max(0, x)
        let right = min(size.width, x + width)
        guard left < right else { return }
        for row in max(0, y)..<max(max(0, y), min(size.height, y + height)) {
            (pixels + row * size.width + left).update(repeating: color.xrgb, count: right - left)
        }
    }
}

/// The matrix and range of a picture's Y'CbCr values: what a plane that takes Y'CbCr is told (its COLOR_ENCODING
/// and COLOR_RANGE properties) so that it turns them into the colours the clip means.
public struct YCbCrEncoding: Sendable, Equatable, CustomStringConvertible {
    public enum Matrix: String, Sendable { case bt601 = "BT.601", bt709 = "BT.709", bt2020 = "BT.2020" }
    public var matrix: Matrix
    /// Full range (0-255, JPEG's) rather than limited (16-235).
    public var fullRange: Bool

    public init(matrix: Matrix, fullRange: Bool) {
        self.matrix = matrix
        self.fullRange = fullRange
    }

    public static let bt709 = YCbCrEncoding(matrix: .bt709, fullRange: false)

    /// The kernel's COLOR_ENCODING enum name (drm_color_mgmt.c).
    public var encodingName: String { "ITU-R \(matrix.rawValue) YCbCr" }
    /// The kernel's COLOR_RANGE enum name.
    public var rangeName: String { fullRange ? "YCbCr full range" : "YCbCr limited range" }
    public var description: String { "\(matrix.rawValue) \(fullRange ? "full" : "limited") range" }
}
