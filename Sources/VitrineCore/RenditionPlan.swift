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

    /// `NAME@WxH.jpg` for the original `NAME.jpg` (or `.jpeg`, any case).
    public static func fileName(original: String, size: Size) -> String {
        let stem = original.lastIndex(of: ".").map { String(original[..<$0]) } ?? original
        return "\(stem)@\(size.width)x\(size.height).jpg"
    }
}
