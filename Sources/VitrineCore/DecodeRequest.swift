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
    /// For each photo of the slide, what a caption's `{age}` says ("3 years ago today" for a slide shown on this
    /// day); empty when the slide was not chosen for its date.
    public var ages: [String?]

    public init(slide: Slide, generation: Int, purpose: Purpose, ages: [String?] = []) {
        self.slide = slide
        self.generation = generation
        self.purpose = purpose
        self.ages = ages
    }

    /// `{age}` for a photo taken `years` years before today's date.
    public static func anniversaryText(years: Int) -> String {
        years == 1 ? "1 year ago today" : "\(years) years ago today"
    }
}
