/// How a photo is placed on the panel.
public enum Fit: String, Sendable, CaseIterable {
    /// The whole photo is visible, centred on the background colour.
    case contain
    /// The photo fills the panel; the overflow is cropped evenly on both sides.
    case cover
    /// Like `contain`, but the margins show a blurred, darkened copy of the same photo filling the panel.
    case containBlur = "contain-blur"

    /// The placement of the sharp photo (`contain-blur` places it as `contain` does).
    public var placement: Fit { self == .containBlur ? .contain : self }
}
