/// EXIF orientation (TIFF tag 0x0112): what must be done to the stored pixels to show the photo upright.
public enum Orientation: Int, Sendable, CaseIterable {
    case up = 1
    case mirrored = 2
    case rotated180 = 3
    case flippedVertically = 4
    case transposed = 5
    /// Stored sideways: turn 90 degrees clockwise to view.
    case rotated90 = 6
    case transversed = 7
    /// Stored sideways: turn 90 degrees counter-clockwise (270 clockwise) to view.
    case rotated270 = 8

    /// Whether the displayed width is the stored height.
    public var swapsAxes: Bool { rawValue >= 5 }

    public func displayedSize(ofStored size: Size) -> Size { swapsAxes ? size.transposed : size }

    /// The mapping of a stored pixel to its displayed position: transpose first (if set), then mirror each axis.
    public var mapping: (transpose: Bool, mirrorX: Bool, mirrorY: Bool) {
        switch self {
        case .up: return (false, false, false)
        case .mirrored: return (false, true, false)
        case .rotated180: return (false, true, true)
        case .flippedVertically: return (false, false, true)
        case .transposed: return (true, false, false)
        case .rotated90: return (true, true, false)
        case .transversed: return (true, true, true)
        case .rotated270: return (true, false, true)
        }
    }
}
