/// A picture ready for scanout: XRGB8888 pixels (little-endian words 0x00RRGGBB, so bytes B, G, R, X), rows
/// packed without padding, at the panel's scanout size. Its bytes are charged to the memory budget for its lifetime.
public final class Frame: @unchecked Sendable {
    // @unchecked: the pixels are written only by the code that creates the frame, before it is handed on; after
    // that every owner only reads them.
    public let size: Size
    public let pixels: UnsafeMutablePointer<UInt32>
    private let charge: MemoryBudget.Charge

    /// Charges the budget first, so a frame that does not fit is refused before any memory is touched.
    public init(size: Size, budget: MemoryBudget, purpose: String) throws(MemoryBudget.Exceeded) {
        guard let bytes = size.xrgbByteCount else {
            throw MemoryBudget.Exceeded(purpose: purpose, requested: Int.max, available: 0, limit: budget.limit)
        }
        charge = try budget.charge(bytes, for: purpose)
        self.size = size
        pixels = .allocate(capacity: size.pixelCount)
    }

    deinit { pixels.deallocate() }

    public var byteCount: Int { size.pixelCount * 4 }

    public func pixel(x: Int, y: Int) -> UInt32 {
        precondition(x >= 0 && x < size.width && y >= 0 && y < size.height, "pixel outside the frame")
        return pixels[y * size.width + x]
    }

    public func fill(_ color: RGBColor) {
        pixels.update(repeating: color.xrgb, count: size.pixelCount)
    }

    /// Fills a rectangle, clipped to the frame.
    public func fill(_ color: RGBColor, x: Int, y: Int, width: Int, height: Int) {
        let left = max(0, x)
        let right = min(size.width, x + width)
        guard left < right else { return }
        for row in max(0, y)..<max(max(0, y), min(size.height, y + height)) {
            (pixels + row * size.width + left).update(repeating: color.xrgb, count: right - left)
        }
    }
}
