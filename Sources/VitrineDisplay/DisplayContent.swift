import VitrineCore
import VitrineImage

/// What a display puts on screen.
public enum DisplayContent {
    case frame(Frame, PresentRecord)
    case background(RGBColor)
    /// One step of a crossfade: the two frames mixed, `weight` of 256 being the incoming one's share.
    case blend(from: Frame, to: Frame, weight: Int, PresentRecord)
    /// The picture on screen with something painted over it: the front buffer is copied to the back buffer (only
    /// the `copying` rectangles when the back buffer holds the same picture apart from them), the closure paints
    /// there (pixels, size, row stride in pixels) and returns the rectangles it touched, and that buffer is
    /// flipped to.
    case overlay(copying: [Placement.Rect]? = nil, (UnsafeMutablePointer<UInt32>, Size, Int) -> [Placement.Rect])
    /// A picture with something painted into it as it is painted (the overlay's corner): the same picture for
    /// the show, done in one paint and one flip.
    indirect case decorated(DisplayContent, (UnsafeMutablePointer<UInt32>, Size, Int) -> Void)
}

/// What a completed flip put on screen. The frame itself is not kept: its pixels are in the scanout buffer.
public enum ShownContent {
    case frame(PresentRecord)
    case background
    /// A crossfade step between two slides, the incoming one's record and its share of 256.
    case blend(PresentRecord, weight: Int)
    /// Text painted over the picture on screen (not a new picture).
    case overlay

    init(_ picture: ScreenContents.Picture) {
        switch picture {
        case .slide(let record): self = .frame(record)
        case .blend(let record, let weight): self = .blend(record, weight: weight)
        case .background: self = .background
        }
    }

    /// A whole picture (not text over one).
    package var isPicture: Bool { picture != nil }

    /// The whole picture shown; nil for text over one.
    var picture: ScreenContents.Picture? {
        switch self {
        case .frame(let record): return .slide(record)
        case .blend(let record, let weight): return .blend(record, weight: weight)
        case .background: return .background
        case .overlay: return nil
        }
    }
}

extension DisplayContent {
    init(_ step: ScreenContents.Step) {
        switch step {
        case .slide(let frame, let record): self = .frame(frame, record)
        case .blend(let from, let to, let weight, let record): self = .blend(from: from, to: to, weight: weight, record)
        }
    }

    /// Whether the content is painted over the picture on screen.
    var isOverlay: Bool {
        if case .overlay = self { return true }
        return false
    }

    /// What the content puts on screen, without its pixels.
    package var shown: ShownContent {
        switch self {
        case .frame(_, let record): return .frame(record)
        case .background: return .background
        case .blend(_, _, let weight, let record): return .blend(record, weight: weight)
        case .overlay: return .overlay
        case .decorated(let picture, _): return picture.shown
        }
    }

    /// Whether the content was made for a screen of `size` (a frame decoded before the mode changed was not).
    func fits(_ size: Size) -> Bool {
        switch self {
        case .frame(let frame, _): return frame.size == size
        case .blend(let from, let to, _, _): return from.size == size && to.size == size
        case .background, .overlay: return true
        case .decorated(let picture, _): return picture.fits(size)
        }
    }

    /// Paints the content into a 32-bit XRGB back buffer of `size` with `pitch` bytes per row; `front` is the
    /// buffer on screen, which overlays start from. Returns what the flip to that buffer will show.
    func paint(into back: UnsafeMutableRawPointer, pitch: Int, size: Size, front: UnsafeRawPointer) -> ShownContent {
        let rowBytes = size.width * 4
        switch self {
        case .frame(let frame, let record) where frame.layout == .nv12:
            // Only a display with a Y'CbCr plane is given NV12 frames; one that paints them anyway converts them.
            precondition(frame.size == size, "frame \(frame.size) for a \(size) display")
            _ = PlanarFrames.unpack(frame, into: back, pitch: pitch)
            return .frame(record)
        case .frame(let frame, let record):
            precondition(frame.size == size, "frame \(frame.size) for a \(size) display")
            for row in 0..<size.height {
                (back + row * pitch).copyMemory(
                    from: UnsafeRawPointer(frame.pixels + row * size.width), byteCount: rowBytes)
            }
            return .frame(record)
        case .blend(let from, let to, let weight, let record):
            precondition(from.size == size && to.size == size, "blend of \(from.size) and \(to.size) for \(size)")
            FrameBlender.blend(
                from: from.pixels, to: to.pixels, size: size, weight: weight, into: back, pitch: pitch)
            return .blend(record, weight: weight)
        case .background(let color):
            for row in 0..<size.height {
                (back + row * pitch).bindMemory(to: UInt32.self, capacity: size.width)
                    .update(repeating: color.xrgb, count: size.width)
            }
            return .background
        case .overlay(let rects, let draw):
            // With one buffer (fbdev without panning) back and front are the same memory: nothing to copy.
            if back != UnsafeMutableRawPointer(mutating: front) {
                if let rects {
                    for rect in rects {
                        for row in rect.y..<(rect.y + rect.height) {
                            (back + row * pitch + rect.x * 4).copyMemory(
                                from: front + row * pitch + rect.x * 4, byteCount: rect.width * 4)
                        }
                    }
                } else {
                    back.copyMemory(from: front, byteCount: pitch * size.height)
                }
            }
            _ = draw(back.bindMemory(to: UInt32.self, capacity: pitch / 4 * size.height), size, pitch / 4)
            return .overlay
        case .decorated(let picture, let draw):
            let shown = picture.paint(into: back, pitch: pitch, size: size, front: front)
            draw(back.bindMemory(to: UInt32.self, capacity: pitch / 4 * size.height), size, pitch / 4)
            return shown
        }
    }
}
