/// Which renditions (`NAME@WxH.jpg`) a photo needs for a set of device profiles: for each profile, the photo scaled
/// to the box it fills on the profile's rendition canvas, which is exactly what `RenditionPicker` then chooses on
/// that panel. A photo already no larger than its box needs none (the original is read as it is).
public enum RenditionPlan {
    public struct Target: Equatable, Sendable {
        public var size: Size
        /// The profiles this size serves (several share one when their boxes round to the same size).
        public var profiles: [String]

        public init(size: Size, profiles: [String]) {
            self.size = size
            self.profiles = profiles
        }
    }

    /// The sizes to write for an upright photo, largest first. `fit` overrides each profile's own.
    public static func targets(upright photo: Size, profiles: [DeviceProfile], fit: Fit?) -> [Target] {
        var targets: [Target] = []
        for profile in profiles {
            guard let size = size(upright: photo, canvas: profile.rendition, fit: fit ?? profile.fit) else { continue }
            if let index = targets.firstIndex(where: { $0.size == size }) {
                targets[index].profiles.append(profile.id)
            } else {
                targets.append(Target(size: size, profiles: [profile.id]))
            }
        }
        return targets.sorted { $0.size.pixelCount > $1.size.pixelCount }
    }

    /// The rendition size for one canvas, nil when the photo is no larger than its box.
    public static func size(upright photo: Size, canvas: Size, fit: Fit) -> Size? {
        guard photo.width > 0, photo.height > 0, canvas.width > 0, canvas.height > 0 else { return nil }
        let picker = RenditionPicker(canvas: canvas, fit: fit)
        let placement = Placement.compute(photo: photo, canvas: canvas, fit: fit)
        let scale = placement.scale
        guard scale < 1 else { return nil }
        // `contain` places the photo in a box of whole pixels: a rendition of exactly that box is read at 1:1.
        let box = Size(width: placement.destination.width, height: placement.destination.height)
        if fit.placement != .cover, picker.covers(box), box.width <= photo.width, box.height <= photo.height {
            return box == photo ? nil : box
        }
        // Round up, so the rendition covers its box; the picker's own test confirms it (one pixel more at most
        // when the box's rounding and ours disagree).
        var size = Size(
            width: min(photo.width, Int((Double(photo.width) * scale - 1e-9).rounded(.up))),
            height: min(photo.height, Int((Double(photo.height) * scale - 1e-9).rounded(.up))))
        for _ in 0..<2 where !picker.covers(size) {
            size = Size(width: min(photo.width, size.width + 1), height: min(photo.height, size.height + 1))
        }
        guard picker.covers(size), size != photo else { return nil }
        return size
    }

    /// `NAME@WxH.jpg` for the original `NAME.jpg` (or `.jpeg`, any case); `NAME@WxH.mp4` for a clip.
    public static func fileName(original: String, size: Size) -> String {
        let stem = original.lastIndex(of: ".").map { String(original[..<$0]) } ?? original
        return "\(stem)@\(size.width)x\(size.height).\(Library.isClipName(original) ? "mp4" : "jpg")"
    }

    /// The largest picture a clip rendition has: 1080p, what the H.264 decoders of the Raspberry Pi 3, 4 and Zero 2
    /// take (their limit is 1920x1080 at 30 pictures a second, H.264 High profile, 8 bits).
    public static let clipLimit = Size(width: 1920, height: 1080)

    /// The one rendition a clip needs for these profiles, nil when its original plays as it is: H.264 of 8 bits
    /// at up to 30 pictures a second, no larger than the largest box it fills. One size serves every profile (the
    /// largest box: a clip is long to encode, and the picker reads the smallest file that covers), capped at
    /// `clipLimit`; a panel larger than that plays the original. Sides are even (4:2:0).
    public static func clipTarget(
        upright clip: Size, codec: String, frameRate: Double, bitDepth: Int, profiles: [DeviceProfile], fit: Fit?
    ) -> Size? {
        guard clip.width > 1, clip.height > 1 else { return nil }
        let plays = codec == "h264" && frameRate <= 30.5 && bitDepth <= 8
        var largest: Size?
        for profile in profiles {
            let size = self.size(upright: clip, canvas: profile.rendition, fit: fit ?? profile.fit) ?? clip
            if largest.map({ size.pixelCount > $0.pixelCount }) ?? true { largest = size }
        }
        guard var size = largest else { return nil }
        let limit = clip.width >= clip.height ? clipLimit : clipLimit.transposed
        let scale = min(1, Double(limit.width) / Double(size.width), Double(limit.height) / Double(size.height))
        if scale < 1 {
            size = Size(
                width: Int((Double(size.width) * scale).rounded(.down)),
                height: Int((Double(size.height) * scale).rounded(.down)))
        }
        // Even sides: up where the clip has the pixel, so the rendition still covers its box.
        func even(_ side: Int, within whole: Int, limit: Int) -> Int {
            side % 2 == 0 ? side : (side + 1 <= min(whole, limit) ? side + 1 : side - 1)
        }
        size = Size(
            width: even(size.width, within: clip.width, limit: limit.width),
            height: even(size.height, within: clip.height, limit: limit.height))
        guard size.width >= 2, size.height >= 2 else { return nil }
        return size == clip && plays ? nil : size
    }
}
