/// Chooses the one file to read for a slide: the smallest rendition that still covers the box the photo fills on
/// the canvas (so nothing is enlarged), else the largest there is.
public struct RenditionPicker: Sendable {
    public struct Choice: Equatable, Sendable {
        public var path: String
        /// The upright size of the chosen file, when known.
        public var size: Size?

        public init(path: String, size: Size?) {
            self.path = path
            self.size = size
        }
    }

    public var canvas: Size
    public var fit: Fit

    public init(canvas: Size, fit: Fit) {
        self.canvas = canvas
        self.fit = fit
    }

    /// Whether a file of this upright size can fill its box without being enlarged.
    public func covers(_ size: Size) -> Bool {
        Placement.compute(photo: size, canvas: canvas, fit: fit).scale <= 1.0 + 1e-9
    }

    /// The file a clip slide plays: the smallest clip rendition (`NAME@WxH.mp4`) that covers the box, else the
    /// original, else the largest clip rendition. From the names alone (no header read: the player's thread asks).
    public func pickClip(_ slide: Slide) -> String? {
        let clips = slide.renditions.filter { Library.isClipName($0.path) }
        if let smallest = clips.filter({ covers($0.size) }).min(by: { $0.size.pixelCount < $1.size.pixelCount }) {
            return smallest.path
        }
        if let original = slide.original, Library.isClipName(original) { return original }
        return clips.max { $0.size.pixelCount < $1.size.pixelCount }?.path
    }

    /// `originalSize` reads the original's upright size from its header; nil when it cannot be read, in which case
    /// the original is chosen only if there is nothing else.
    public func pick(_ slide: Slide, originalSize: (String) -> Size?) -> Choice? {
        var candidates = slide.renditions.map { Choice(path: $0.path, size: $0.size) }
        var unreadableOriginal: String?
        if let original = slide.original {
            if let size = originalSize(original) {
                candidates.append(Choice(path: original, size: size))
            } else {
                unreadableOriginal = original
            }
        }
        let sized = candidates.compactMap { choice in choice.size.map { (choice, $0.pixelCount) } }
        if let smallest = sized.filter({ covers($0.0.size ?? canvas) }).min(by: { $0.1 < $1.1 }) {
            return smallest.0
        }
        if let largest = sized.max(by: { $0.1 < $1.1 }) { return largest.0 }
        return unreadableOriginal.map { Choice(path: $0, size: nil) }
    }
}
