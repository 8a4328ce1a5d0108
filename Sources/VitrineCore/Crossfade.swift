/// A crossfade under way, paced by flips: each completed flip asks for the next step. The incoming picture's share
/// follows the clock, not a step count, so a blend slower than a frame drops steps and the fade still ends on time.
public struct Crossfade: Sendable, Equatable {
    public static let fullWeight = 256
    public let started: Double
    public let duration: Double
    /// The share of the last step asked for, out of 256.
    public private(set) var weight = 0
    public private(set) var steps = 0
    private var hurry = false

    public init(started: Double, duration: Double) {
        self.started = started
        self.duration = duration
    }

    /// The time from painting a step to its vblank assumed when none is given: a frame at 60 Hz, the common rate;
    /// the pace itself comes from the flips.
    public static let frameTime = 1.0 / 60

    /// The incoming picture's share (1...256) for a step painted at `now` and shown at the next vblank,
    /// `frameTime` later; always more than the last step's. 256 is the last step: the new slide exactly.
    public mutating func nextWeight(at now: Double, frameTime: Double = Crossfade.frameTime) -> Int {
        let progress = duration > 0 ? (now + frameTime - started) / duration : 1
        var next = hurry ? Self.fullWeight : Int((progress * Double(Self.fullWeight)).rounded(.down))
        next = min(Self.fullWeight, max(weight + 1, next))
        weight = next
        steps += 1
        return next
    }

    public var isFinished: Bool { weight >= Self.fullWeight }

    /// The next step is the last (the screen goes off, or the viewer already asked for another slide).
    public mutating func finishNow() { hurry = true }
}
