/// How fast a board decodes a clip, judged before it is shown: the CPU time its software decoder took, on one
/// thread, for the pictures after the first (a key picture costs several ordinary ones), scaled to the threads a
/// clip plays on. CPU time rather than the clock's: the judgement is made while another clip may be playing, and
/// a busy board must not make a clip look slower than it is.
public struct ClipSpeed: Sendable, Equatable {
    /// Pictures decoded after the first.
    public var pictures: Int
    public var cpuSeconds: Double
    /// The threads the clip's decoder plays on (two, or one on a one-CPU board).
    public var threads: Int

    public init(pictures: Int, cpuSeconds: Double, threads: Int) {
        self.pictures = pictures
        self.cpuSeconds = cpuSeconds
        self.threads = max(1, threads)
    }

    /// Pictures a second the board decodes in play. Frame threads gain less than their number: they wait on each
    /// other's reference pictures.
    public var rate: Double {
        guard pictures > 0 else { return .infinity }
        let threading = threads == 1 ? 1 : Double(threads) * Self.threadGain
        return Double(pictures) / max(cpuSeconds, 1e-6) * threading
    }

    static let threadGain = 0.9

    /// Below this share of a clip's rate it is not played: more than half its pictures would be missing. Between
    /// this and the whole rate it plays with the pictures nothing refers to passed over, and says so once.
    public static let leastShare = 0.5

    /// True when the board cannot play a clip of `frameRate` pictures a second (30 where the file does not say).
    public func tooSlow(frameRate: Double) -> Bool {
        rate < (frameRate > 0 ? frameRate : 30) * Self.leastShare
    }

    /// Whether enough has been decoded to judge: a quarter of a second of the clip (six pictures at least), or
    /// half a second of CPU (a board that needs that long for a few pictures is answered already). The judgement
    /// doubled the time a 720p clip's first picture took; on a slow board with a short interval the slide before
    /// it stayed up longer, so it is kept short.
    public static func enough(pictures: Int, cpuSeconds: Double, frameRate: Double) -> Bool {
        let wanted = max(6, Int(((frameRate > 0 ? frameRate : 30) * 0.25).rounded(.up)))
        return pictures >= wanted || (pictures >= 1 && cpuSeconds >= 0.5)
    }

    /// "1.4 pictures a second", in one decimal.
    public var rateText: String {
        let tenths = Int((rate * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) pictures a second"
    }
}
