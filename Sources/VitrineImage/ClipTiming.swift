import CFFmpeg
import VitrineCore
import VitrinePlatform

/// What playing a clip costs here, picture by picture, without a screen: `vitrine bench --clip` and `make bench`.
public struct ClipTiming: Sendable {
    public var header: ClipHeader
    public var decoder: String
    public var pictures: Int
    /// Seconds per picture: decoding, and scaling into the panel frame.
    public var decode: [Double]
    public var scale: [Double]
    /// Seconds per picture scaling the same pictures into NV12, for a plane that converts colours itself (empty
    /// where the box cannot be NV12: a turn, a crop, an odd row or column).
    public var scalePlanar: [Double]
    /// Seconds of wall-clock time for the whole clip.
    public var wall: Double

    /// Decodes and scales every picture of the clip at `path` into a frame of the panel, as the player would, and
    /// times scaling each into NV12 too.
    public static func measure(path: String, options: RenderOptions, decoding: VideoDecoding, budget: MemoryBudget)
        throws(ImageError) -> ClipTiming
    {
        let file = try ClipFile(path: path)
        let layout = try ClipLayout(header: file.header, options: options, path: path)
        let decoder = try ClipDecoder(file: file, preference: decoding)
        let frame: Frame
        do {
            frame = try Frame(size: layout.scanout, budget: budget, purpose: "a bench frame")
        } catch {
            throw ImageError(file: path, reason: .overBudget(error))
        }
        let scaler = ClipScaler()
        let planarScaler = ClipScaler()
        let planar: Frame? =
            layout.planarOrigin == nil
            ? nil : try? Frame(size: layout.scanout, budget: budget, purpose: "a bench frame", layout: .nv12)
        let scratch =
            layout.scratchBytes > 0
            ? UnsafeMutableRawPointer.allocate(byteCount: layout.scratchBytes, alignment: 64) : nil
        defer { scratch?.deallocate() }
        var timing = ClipTiming(
            header: file.header, decoder: decoder.name, pictures: 0, decode: [], scale: [], scalePlanar: [], wall: 0)
        let start = MonotonicClock.seconds()
        var wallExtra = 0.0
        while true {
            let before = MonotonicClock.seconds()
            guard let picture = try decoder.next() else { break }
            let decoded = MonotonicClock.seconds()
            guard layout.draw(picture, into: frame, scaler: scaler, scratch: scratch) else {
                throw ImageError(file: path, reason: .decodeFailed("cannot scale picture \(timing.pictures + 1)"))
            }
            let scaled = MonotonicClock.seconds()
            timing.decode.append(decoded - before)
            timing.scale.append(scaled - decoded)
            timing.pictures += 1
            if let planar {
                guard layout.drawPlanar(picture, into: planar, scaler: planarScaler) else {
                    throw ImageError(
                        file: path, reason: .decodeFailed("cannot scale picture \(timing.pictures) to NV12"))
                }
                let planarDone = MonotonicClock.seconds()
                timing.scalePlanar.append(planarDone - scaled)
                // What the player's clip costs is without this second scaling: the clip's clock leaves it out.
                wallExtra += planarDone - scaled
            }
        }
        timing.wall = MonotonicClock.seconds() - start - wallExtra
        return timing
    }
}
