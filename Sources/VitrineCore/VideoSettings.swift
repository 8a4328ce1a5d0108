/// The `video` section: how clips play.
public struct VideoSettings: Sendable, Equatable {
    /// Which decoder: `auto` (the board's hardware where it has one for the codec, else software).
    public var decoder = VideoDecoding.auto
    /// Clips longer than this end here (nil: each plays to its end).
    public var maxSeconds: Double?
    /// Whether clips play their sound (off by default: a frame in a living room or a shop is silent unless asked).
    public var audio = false
    /// The ALSA device the sound goes to: `default`, or a name from `aplay -L` (a Raspberry Pi's HDMI is
    /// `hdmi:CARD=vc4hdmi0,DEV=0`).
    public var audioDevice = "default"

    public init() {}

    public static let keyNames = ["decoder", "maxSeconds", "audio", "audioDevice"]

    static func parse(_ object: ConfigObject) throws(ConfigError) -> VideoSettings {
        try object.rejectUnknownKeys(allowed: keyNames)
        var settings = VideoSettings()
        settings.decoder = try object.choice("decoder", as: VideoDecoding.self) ?? .auto
        settings.maxSeconds = try object.number("maxSeconds", in: 1...86_400)
        settings.audio = try object.bool("audio") ?? false
        if let device = try object.string("audioDevice") {
            guard !device.isEmpty, device.utf8.count <= 200, !device.unicodeScalars.contains(where: { $0.value < 0x20 })
            else {
                throw object.failure(
                    "audioDevice", "expected an ALSA device name such as default or hdmi:CARD=vc4hdmi0")
            }
            settings.audioDevice = device
        }
        return settings
    }
}
