/// Turns touches (and a pointer acting as one finger) into gestures: tap, swipe in four directions, long press.
///
/// Positions arrive normalised to 0...1 in the panel's scanout orientation; directions are judged on the upright
/// picture (the profile's rotation undone), so a swipe to the viewer's left is "left" on any mounting. Distances
/// are in millimetres when the panel's physical size is known, else in fractions of its shorter side.
public struct GestureRecognizer: Sendable {
    public enum Gesture: Equatable, Sendable {
        case tap
        case swipe(Direction)
        case longPress
    }

    public enum Direction: Equatable, Sendable {
        case left, right, up, down
    }

    public struct Thresholds: Sendable {
        /// The least travel that makes a swipe.
        public var swipe: Double
        /// The most travel a tap or long press may have.
        public var slop: Double
        public var tapSeconds = 0.35
        public var longPressSeconds = 0.8

        /// Millimetres on a panel of known size.
        public static let millimetres = Thresholds(swipe: 12, slop: 4)
        /// Fractions of the shorter side when the size is unknown.
        public static let fractions = Thresholds(swipe: 0.08, slop: 0.025)
    }

    public var rotation: Rotation
    /// The scanout's physical size, when known.
    public var physicalSize: Size?
    /// The scanout's pixel size (for the aspect ratio when the physical size is unknown).
    public var pixelSize: Size
    public var thresholds: Thresholds

    private var start: (x: Double, y: Double, time: Double)?
    private var last: (x: Double, y: Double)?
    private var fingers = 0

    public init(rotation: Rotation, physicalSize: Size?, pixelSize: Size) {
        self.rotation = rotation
        self.physicalSize = physicalSize
        self.pixelSize = pixelSize
        thresholds = physicalSize == nil ? .fractions : .millimetres
    }

    /// A finger (or the pointer's button) went down at a normalised position.
    public mutating func down(x: Double, y: Double, time: Double) {
        fingers += 1
        guard fingers == 1 else {
            // A second finger cancels: Vitrine has no two-finger gestures, and a palm must not navigate.
            start = nil
            return
        }
        start = (x, y, time)
        last = (x, y)
    }

    public mutating func move(x: Double, y: Double) {
        if start != nil { last = (x, y) }
    }

    /// The finger came up: the gesture it made, if any.
    public mutating func up(time: Double) -> Gesture? {
        fingers = max(0, fingers - 1)
        guard fingers == 0, let start, let last else {
            if fingers == 0 { self.start = nil }
            return nil
        }
        self.start = nil
        let (dx, dy) = upright(dx: last.x - start.x, dy: last.y - start.y)
        let distance = (dx * dx + dy * dy).squareRoot()
        let held = time - start.time
        if distance >= thresholds.swipe {
            if abs(dx) >= abs(dy) { return .swipe(dx < 0 ? .left : .right) }
            return .swipe(dy < 0 ? .up : .down)
        }
        guard distance <= thresholds.slop else { return nil }
        if held >= thresholds.longPressSeconds { return .longPress }
        if held <= thresholds.tapSeconds { return .tap }
        return nil
    }

    /// A normalised scanout delta as a distance on the upright picture, in millimetres or shorter-side fractions.
    func upright(dx: Double, dy: Double) -> (Double, Double) {
        var sx = dx
        var sy = dy
        if let physicalSize {
            sx *= Double(physicalSize.width)
            sy *= Double(physicalSize.height)
        } else {
            let shorter = Double(min(pixelSize.width, pixelSize.height))
            sx *= Double(pixelSize.width) / shorter
            sy *= Double(pixelSize.height) / shorter
        }
        // The picture was turned clockwise by `rotation` into the scanout; turn the delta back.
        switch rotation {
        case .none: return (sx, sy)
        case .clockwise90: return (sy, -sx)
        case .upsideDown: return (-sx, -sy)
        case .clockwise270: return (-sy, sx)
        }
    }
}
