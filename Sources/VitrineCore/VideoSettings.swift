/// The `video` section: how clips play.
public struct VideoSettings: Sendable, Equatable {
    /// Which decoder: `auto` (the board's hardware where it has one for the codec, else software).
    public var decoder = VideoDecoding.auto
    /// Clips longer than this end here (nil: each plays to its end).
    public var maxSeconds: Double?

    public init() {}

    public static let keyNames = ["decoder", "maxSeconds"]

    static func parse(_ object: ConfigObject) throws(ConfigError) -> VideoSettings {
        try object.rejectUnknownKeys(allowed: keyNames)
        var settings = VideoSettings()
        settings.decoder = try object.choice("decoder", as: VideoDecoding.self) ?? .auto
        settings.maxSeconds = try object.number("maxSeconds", in: 1...86_400)
        return settings
    }
}
