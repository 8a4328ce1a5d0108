import VitrineCore

/// How a photo becomes a panel frame.
public struct RenderOptions: Sendable, Equatable {
    /// The canvas the photo is composed on (the profile's compose size).
    public var canvas: Size
    public var fit: Fit
    public var rotation: Rotation
    public var background: RGBColor
    public var maxMegapixels: Double
    public var filter: ResamplingFilter
    public var caption: CaptionStyle
    /// Where `{place}` in the caption is looked up; nil leaves it empty.
    public var places: PlaceIndex?
    /// Convert photos with a colour profile to sRGB (the `colorManagement` setting).
    public var colorManagement = true
    /// The decoder clips will play with (`video.decoder`): set by the player, whose clips' first pictures are
    /// decoded with it in mind, so a clip the board cannot play in time is judged before it is shown. Nil for a
    /// still alone (thumbnails, the web remote's picture, `vitrine render`).
    public var clipDecoding: VideoDecoding?

    public init(
        canvas: Size, fit: Fit = .contain, rotation: Rotation = .none, background: RGBColor = .black,
        maxMegapixels: Double = 1000, filter: ResamplingFilter = .cubic,
        caption: CaptionStyle = CaptionStyle()
    ) {
        self.caption = caption
        self.canvas = canvas
        self.fit = fit
        self.rotation = rotation
        self.background = background
        self.maxMegapixels = maxMegapixels
        self.filter = filter
    }
}
