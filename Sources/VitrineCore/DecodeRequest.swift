/// A slide the player wants decoded into a frame.
public struct DecodeRequest: Sendable, Equatable {
    public enum Purpose: String, Sendable {
        /// To be shown as soon as it is ready.
        case show
        /// To have ready before the timer asks for it.
        case prefetch
    }

    public var slide: Slide
    /// The player's category generation when asked: a result from an earlier generation is dropped.
    public var generation: Int
    public var purpose: Purpose

    public init(slide: Slide, generation: Int, purpose: Purpose) {
        self.slide = slide
        self.generation = generation
        self.purpose = purpose
    }
}
