/// How one slide gives way to the next.
public enum Transition: String, Sendable, CaseIterable {
    /// A cut at the next vertical blank.
    case none
    /// A crossfade, one blend per flip.
    case fade
}
