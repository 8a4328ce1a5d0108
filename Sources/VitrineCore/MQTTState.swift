/// What `PREFIX/ID/state` says: only what a dashboard shows or an automation reacts to, so it changes when the
/// show does and not with every tick of the timer.
public struct MQTTState: Equatable, Sendable {
    public var category: String?
    public var slide: String?
    public var position: Int?
    public var count: Int
    public var paused: [PauseReason]
    public var screenOn: Bool
    public var present: Bool?
    public var interval: Double
    public var profile: String
    public var version: String
    /// Why the slide on screen was chosen (`SelectionReason`), and whether it is a favourite.
    public var why: String?
    public var favourite = false
    /// The day-part of `playlists` in force; absent from the JSON without playlists.
    public var playlist: String?
    /// Each source's sync, as `status` says it; absent from the JSON without sources.
    public var sources: [Source] = []

    public struct Source: Equatable, Sendable {
        public var name: String
        /// `in sync`, `syncing`, `offline`, `busy`, `refused`, `error`, `starting`.
        public var state: String
        /// While syncing: photos fetched of those to fetch.
        public var progress: (done: Int, total: Int)?

        public init(name: String, state: String, progress: (done: Int, total: Int)? = nil) {
            self.name = name
            self.state = state
            self.progress = progress
        }

        public static func == (a: Source, b: Source) -> Bool {
            a.name == b.name && a.state == b.state && a.progress?.done == b.progress?.done
                && a.progress?.total == b.progress?.total
        }

        var json: String {
            "{\"name\":\(JSONText.quote(name)),\"state\":\(JSONText.quote(state))"
                + (progress.map { ",\"done\":\($0.done),\"total\":\($0.total)" } ?? "") + "}"
        }
    }

    public init(
        category: String?, slide: String?, position: Int?, count: Int, paused: [PauseReason], screenOn: Bool,
        present: Bool?, interval: Double, profile: String, version: String = VitrineVersion.string
    ) {
        self.category = category
        self.slide = slide
        self.position = position
        self.count = count
        self.paused = paused
        self.screenOn = screenOn
        self.present = present
        self.interval = interval
        self.profile = profile
        self.version = version
    }

    public var json: String {
        let fields = [
            "\"category\":\(category.map(JSONText.quote) ?? "null")",
            "\"slide\":\(slide.map(JSONText.quote) ?? "null")",
            "\"position\":\(position.map(String.init) ?? "null")",
            "\"count\":\(count)",
            "\"why\":\(why.map(JSONText.quote) ?? "null")",
            "\"favourite\":\(favourite)",
            "\"paused\":[\(paused.map { JSONText.quote($0.rawValue) }.joined(separator: ","))]",
            "\"screen\":\(screenOn ? "\"on\"" : "\"off\"")",
            "\"presence\":\(present.map { $0 ? "\"present\"" : "\"absent\"" } ?? "null")",
            "\"interval\":\(ConfigObject.format(interval))",
            "\"profile\":\(JSONText.quote(profile))",
            "\"version\":\(JSONText.quote(version))",
        ]
        let list = sources.isEmpty ? [] : ["\"sources\":[\(sources.map(\.json).joined(separator: ","))]"]
        let playlist = self.playlist.map { ["\"playlist\":\(JSONText.quote($0))"] } ?? []
        return "{" + (fields + playlist + list).joined(separator: ",") + "}"
    }
}
