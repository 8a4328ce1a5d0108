import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Turns a slide into a frame the way the player shows it: the file picked for each photo, a portrait pair side by
/// side, margins per the fit, and each photo's caption. One per thread (its FreeType face is not shared).
public final class SlideRenderer {
    public struct Rendered {
        public var frame: Frame
        /// The file read for each photo, left to right.
        public var files: [String]
        public var plans: [DecodePlan]
        /// libjpeg's warnings for photos it decoded past damage, and a place index that could not be read, one line
        /// each naming the file.
        public var warnings: [String] = []
        /// Each photo's caption as drawn, nil where it has none.
        public var captions: [String?] = []
        /// Where each photo was taken, as its `{place}` says it; nil without a position, an index or a place near.
        public var places: [Place?] = []
    }

    public let frames: FrameRenderer
    private let fontPath: String
    private var captionText: TextRenderer?
    private var captionFailed = false

    public init(budget: MemoryBudget, fontPath: String = TextRenderer.defaultFont) {
        frames = FrameRenderer(budget: budget)
        self.fontPath = fontPath
    }

    /// The canvas regions of a slide's photos: the whole canvas, or its two halves for a pair.
    public static func regions(photoCount: Int, canvas: Size) -> [Placement.Rect] {
        guard photoCount == 2 else { return [Placement.Rect(x: 0, y: 0, width: canvas.width, height: canvas.height)] }
        let half = canvas.width / 2
        return [
            Placement.Rect(x: 0, y: 0, width: half, height: canvas.height),
            Placement.Rect(x: half, y: 0, width: canvas.width - half, height: canvas.height),
        ]
    }

    /// Renders every photo of the slide. A photo with no readable file fails the whole slide, so a pair is never
    /// shown with a hole.
    /// `ages` fills each photo's `{age}` (the player's "3 years ago today" for a slide shown on this day).
    public func render(_ slide: Slide, options: RenderOptions, ages: [String?] = []) throws(ImageError) -> Rendered {
        _ = frames.takeWarnings()
        let photos = slide.photos
        let regions = Self.regions(photoCount: photos.count, canvas: options.canvas)
        var picks: [(path: String, header: ImageHeader?, date: String?, location: GeoCoordinate?)] = []
        for (photo, region) in zip(photos, regions) {
            let picker = RenditionPicker(canvas: region.size, fit: options.fit)
            var headers: [String: ImageHeader] = [:]
            let choice = picker.pick(photo) { [frames] path in
                headers[path] = try? frames.header(of: path)
                return headers[path]?.displayedSize
            }
            guard let choice else {
                let missing = FileError(path: photo.id.description, operation: "find its file", errno: ENOENT)
                throw ImageError(file: photo.id.description, reason: .unreadable(missing))
            }
            // A rendition may have lost the EXIF date and position; the original's header, read to pick, still has
            // them.
            let date =
                headers[choice.path]?.dateTimeOriginal ?? headers.values.lazy.compactMap(\.dateTimeOriginal).first
            let location = headers[choice.path]?.location ?? headers.values.lazy.compactMap(\.location).first
            picks.append((choice.path, headers[choice.path], date, location))
        }
        // One frame for all the photos, made when the first has passed its checks.
        var made: Frame?
        var plans: [DecodePlan] = []
        var files: [String] = []
        for (index, (pick, region)) in zip(picks, regions).enumerated() {
            var path = pick.path
            // A clip too slow for this board plays from a smaller copy where there is one, even one smaller than
            // the screen: the largest that plays.
            var smaller = slide.isClip ? Self.smallerClips(than: pick.path, header: pick.header, of: photos[index]) : []
            while true {
                do throws(ImageError) {
                    let rendered = try frames.render(
                        path, options: options, header: path == pick.path ? pick.header : nil, region: region
                    ) { () throws(ImageError) in
                        if let made { return made }
                        let frame = try frames.newFrame(options: options, for: path)
                        made = frame
                        return frame
                    }
                    plans.append(rendered.plan)
                    files.append(path)
                    break
                } catch {
                    guard case .tooSlow = error.reason, !smaller.isEmpty else { throw error }
                    path = smaller.removeFirst()
                }
            }
        }
        guard let frame = made else {
            throw ImageError(file: slide.id.description, reason: .malformed("the slide has no photo"))
        }
        var rendered = Rendered(frame: frame, files: files, plans: plans, warnings: frames.takeWarnings())
        if options.caption.template.showsAnything {
            for (number, ((photo, region), pick)) in zip(zip(photos, regions), picks).enumerated() {
                var place: Place?
                if options.caption.template.uses(.place), let index = options.places, let location = pick.location {
                    do {
                        place = try index.lookup(location)
                    } catch {
                        rendered.warnings.append("\(error)")
                    }
                }
                let text = options.caption.text(
                    name: photo.id.name, exifDate: pick.date, place: place?.caption,
                    age: number < ages.count ? ages[number] : nil)
                rendered.captions.append(text)
                rendered.places.append(place)
                guard let text, let renderer = captionRenderer(options: options) else { continue }
                CaptionPainter.paint(
                    Self.fitted(text, width: region.width * 9 / 10, renderer), position: options.caption.position,
                    region: region, canvas: options.canvas,
                    rotation: options.rotation, into: frame)
            }
        }
        return rendered
    }

    /// The clip renditions of `photo` with fewer pixels than the file picked, largest first.
    static func smallerClips(than path: String, header: ImageHeader?, of photo: Slide) -> [String] {
        let picked = photo.renditions.first { $0.path == path }?.size ?? header?.displayedSize
        let pixels = picked?.pixelCount ?? Int.max
        return photo.renditions.filter { Library.isClipName($0.path) && $0.size.pixelCount < pixels }.reversed()
            .map(\.path)
    }

    /// The text, shortened with an ellipsis until it fits `width` pixels.
    static func fitted(_ text: String, width: Int, _ renderer: TextRenderer) -> TextRenderer.Strip {
        var strip = renderer.render(text)
        var kept = text.count
        while strip.size.width > width && kept > 1 {
            kept = min(kept - 1, kept * width / max(1, strip.size.width) + 1)
            strip = renderer.render(String(text.prefix(kept)) + "…")
        }
        return strip
    }

    /// The caption's text renderer at the size the options ask for; nil when the font cannot be loaded.
    private func captionRenderer(options: RenderOptions) -> TextRenderer? {
        let height = max(10, Int(Double(min(options.canvas.width, options.canvas.height)) * options.caption.size))
        if let captionText, captionText.pixelHeight == height { return captionText }
        guard !captionFailed else { return nil }
        do {
            captionText = try TextRenderer(fontPath: fontPath, pixelHeight: height)
        } catch {
            captionFailed = true
            captionText = nil
        }
        return captionText
    }
}
