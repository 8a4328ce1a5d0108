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
    /// Seconds since the epoch the photo was taken (EXIF), else its file time; set only for `newest` order.
    public var timestamp: Double
    /// Capture date or file time, portrait or not, rating: what the selection engine weighs.
    public var traits = SlideTraits()
    /// Both photos of a portrait pair, left then right (empty for a photo shown alone).
    public private(set) var pair: [Slide]

    public init(id: SlideID, original: String?, renditions: [Rendition], timestamp: Double = 0) {
        self.id = id
        self.original = original
        self.renditions = renditions.sorted { $0.size.pixelCount < $1.size.pixelCount }
        self.timestamp = timestamp
        pair = []
    }

    /// Two portrait photos as one slide, named after both, dated by the first.
    public init(pairing left: Slide, with right: Slide) {
        self = left
        id = SlideID(category: left.id.category, name: "\(left.id.name) + \(right.id.name)")
        pair = left.photos + right.photos
    }

    /// Every file of the slide, the original first (for a pair, the left photo's, then the right one's).
    public var files: [String] {
        guard pair.isEmpty else { return pair.flatMap(\.files) }
        return (original.map { [$0] } ?? []) + renditions.map(\.path)
    }

    /// `newest` order: later capture first, then by name.
    public static func newerFirst(_ a: Slide, _ b: Slide) -> Bool {
        a.timestamp != b.timestamp ? a.timestamp > b.timestamp : NaturalOrder.less(a.id.name, b.id.name)
    }

    /// A clip (played to its end) rather than a photo: by the original's name, since the show decides before any
    /// file is read.
    public var isClip: Bool { pair.isEmpty && (original.map(Library.isClipName) ?? false) }

    /// The photos on screen, left to right; each carries its own name and files.
    public var photos: [Slide] { pair.isEmpty ? [self] : pair }
}
