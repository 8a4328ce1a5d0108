/// What the selection engine knows of a photo besides its name, packed in a byte: whether its date is a capture
/// date (EXIF, not a file time: a copy's time says nothing about "on this day"), whether it is portrait (for pairs),
/// whether it is new since the last index (a round saved before it came has not shown it), and its XMP rating.
public struct SlideTraits: Sendable, Equatable, Hashable {
    public var rawValue: UInt8

    public init(rawValue: UInt8 = 0) {
        self.rawValue = rawValue
    }

    public init(captured: Bool = false, portrait: Bool = false, fresh: Bool = false, rating: Int? = nil) {
        rawValue = 0
        self.captured = captured
        self.portrait = portrait
        self.fresh = fresh
        self.rating = rating
    }

    private static let capturedBit: UInt8 = 1
    private static let portraitBit: UInt8 = 2
    private static let freshBit: UInt8 = 4
    private static let ratedBit: UInt8 = 0x80

    /// The slide's timestamp is when it was taken.
    public var captured: Bool {
        get { rawValue & Self.capturedBit != 0 }
        set { set(Self.capturedBit, newValue) }
    }

    public var portrait: Bool {
        get { rawValue & Self.portraitBit != 0 }
        set { set(Self.portraitBit, newValue) }
    }

    /// Not seen by the index before (its header was read now, not taken from the cache).
    public var fresh: Bool {
        get { rawValue & Self.freshBit != 0 }
        set { set(Self.freshBit, newValue) }
    }

    /// `xmp:Rating`: -1 (rejected) to 5 stars; nil when the photo has none.
    public var rating: Int? {
        get { rawValue & Self.ratedBit == 0 ? nil : Int((rawValue >> 4) & 7) - 1 }
        set {
            rawValue &= 0x0F
            guard let newValue else { return }
            rawValue |= Self.ratedBit | UInt8(min(5, max(-1, newValue)) + 1) << 4
        }
    }

    private mutating func set(_ bit: UInt8, _ on: Bool) {
        if on { rawValue |= bit } else { rawValue &= ~bit }
    }
}
