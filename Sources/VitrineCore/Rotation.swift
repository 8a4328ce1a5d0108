/// The clockwise rotation applied to the composed picture when it is written into the scanout buffer, for panels
/// mounted other than in their native scan direction (a Touch Display 2 scans out portrait but hangs landscape).
public enum Rotation: Int, Sendable, CaseIterable {
    case none = 0
    case clockwise90 = 90
    case upsideDown = 180
    case clockwise270 = 270

    public var swapsAxes: Bool { self == .clockwise90 || self == .clockwise270 }

    /// The scanout size for a composed canvas of `size`.
    public func scanoutSize(forCompose size: Size) -> Size { swapsAxes ? size.transposed : size }

    /// The same turn expressed as an EXIF orientation, so both compose into one pixel mapping.
    public var asOrientation: Orientation {
        switch self {
        case .none: return .up
        case .clockwise90: return .rotated90
        case .upsideDown: return .rotated180
        case .clockwise270: return .rotated270
        }
    }
}
