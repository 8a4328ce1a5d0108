/// One photo of the show and the files it can be read from.
public struct Slide: Sendable, Equatable {
    public struct Rendition: Sendable, Equatable {
        public var path: String
        /// The pixel size in the file name (renditions are stored upright, orientation applied).
        public var size: Size

        public init(path: String, size: Size) {
            self.path = path
            self.size = size
        }
    }

    public var id: SlideID
    /// `NAME.jpg` itself, when present; its size is read from its header when needed.
    public var original: String?
    /// `NAME@WxH.jpg` files, smallest first.
    public var renditions: [Rendition]

    public init(id: SlideID, original: String?, renditions: [Rendition]) {
        self.id = id
        self.original = original
        self.renditions = renditions.sorted { $0.size.pixelCount < $1.size.pixelCount }
    }
}
