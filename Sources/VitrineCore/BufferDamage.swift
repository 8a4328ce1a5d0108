/// What each scanout buffer holds, as far as text over the picture cares: which picture (a number per picture
/// painted) and the rectangles where overlays changed it since. An overlay painted into a buffer that holds the
/// same picture as the one on screen needs only those rectangles copied over from the screen's buffer (a clock's
/// minute costs its corner), not the whole frame.
public struct BufferDamage: Sendable, Equatable {
    private struct Contents: Sendable, Equatable {
        var picture: Int
        /// Nil: changed in too many places to keep track (the next overlay copies everything).
        var changed: [Placement.Rect]?
    }

    /// More separate rectangles than this (a banner, a pairing code and the corner are three) are not tracked.
    public static let maximumRects = 8

    /// Nil per buffer: what it holds is not known (never painted, or painted behind the player's back).
    private var buffers: [Contents?]
    private var pictures = 0

    public init(bufferCount: Int) {
        buffers = Array(repeating: nil, count: bufferCount)
    }

    /// A whole picture (a slide, a fade step, the background) was painted into `buffer`.
    public mutating func picturePainted(into buffer: Int) {
        guard buffers.indices.contains(buffer) else { return }
        pictures += 1
        buffers[buffer] = Contents(picture: pictures, changed: [])
    }

    /// The rectangles to copy from `front` before an overlay is painted into `buffer`; nil: the whole frame.
    public func rectsToCopy(into buffer: Int, from front: Int) -> [Placement.Rect]? {
        guard buffers.indices.contains(buffer), buffers.indices.contains(front), let back = buffers[buffer],
            let shown = buffers[front], back.picture == shown.picture, let backChanged = back.changed,
            let shownChanged = shown.changed
        else { return nil }
        return Self.merged(backChanged + shownChanged)
    }

    /// An overlay was painted into `buffer` over a copy of `front`, touching `touched`.
    public mutating func overlayPainted(into buffer: Int, from front: Int, touched: [Placement.Rect]) {
        guard buffers.indices.contains(buffer), buffers.indices.contains(front) else { return }
        buffers[buffer] = buffers[front].map { shown in
            Contents(picture: shown.picture, changed: shown.changed.flatMap { Self.merged($0 + touched) })
        }
    }

    /// The buffers' contents are unknown now (new buffers, the console drew into them, a blank painted black).
    public mutating func forget() {
        buffers = Array(repeating: nil, count: buffers.count)
    }

    /// Overlapping rectangles merged into their bounding box; nil when too many separate ones are left.
    static func merged(_ rects: [Placement.Rect]) -> [Placement.Rect]? {
        var result: [Placement.Rect] = []
        for rect in rects where rect.width > 0 && rect.height > 0 {
            var current = rect
            var merging = true
            while merging {
                merging = false
                if let index = result.firstIndex(where: { overlaps($0, current) }) {
                    current = bounds(result.remove(at: index), current)
                    merging = true
                }
            }
            result.append(current)
        }
        return result.count <= maximumRects ? result : nil
    }

    static func overlaps(_ a: Placement.Rect, _ b: Placement.Rect) -> Bool {
        a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
    }

    static func bounds(_ a: Placement.Rect, _ b: Placement.Rect) -> Placement.Rect {
        let x = min(a.x, b.x)
        let y = min(a.y, b.y)
        return Placement.Rect(
            x: x, y: y, width: max(a.x + a.width, b.x + b.width) - x, height: max(a.y + a.height, b.y + b.height) - y)
    }
}
