/// How a photo is placed on the panel.
public enum Fit: String, Sendable, CaseIterable {
    /// The whole photo is visible, centred on the background colour.
    case contain
    /// The photo fills the panel; the overflow is cropped evenly on both sides.
    case cover
}
