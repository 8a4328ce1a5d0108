import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The player's figures for a fleet, as a Prometheus text-format file for node_exporter's textfile collector.
/// The file is written whole under a temporary name in the same folder and renamed over the old one, so the
/// collector (which reads `*.prom` only) never sees half a file.
public final class MetricsWriter {
    public struct Figures {
        public var slidesShown = 0
        public var filesSkipped = 0
        /// Decode times in seconds, counted into `decodeBuckets`.
        public var decodeCounts: [Int] = Array(repeating: 0, count: MetricsWriter.decodeBuckets.count + 1)
        public var decodeSum = 0.0
        public var residentBytes = 0
        /// Resident bytes that are not file-backed: heap, stacks, frames (the part the kernel cannot drop).
        public var anonymousBytes = 0
        public var budgetUsedBytes = 0
        public var budgetLimitBytes = 0
        public var pauseReasons: Set<PauseReason> = []
        public var screenOn = true
        /// Whether someone is in the room (motion or input within the presence timeout); nil without presence.
        public var present: Bool?
        public var screenConnected = true
        /// Whether the MQTT broker is connected; nil without MQTT.
        public var mqttConnected: Bool?
        /// Connections to the broker made again after the first.
        public var mqttReconnects = 0
        /// The TV's power as CEC says (on, standby, unknown); nil without CEC.
        public var cecTV: String?
        public var cecActiveSource = false
        /// Wall-clock seconds when the last slide reached the screen, 0 before the first.
        public var lastSlideTime = 0.0
        public var startTime = 0.0
        /// Each source's sync: whether its last sync ended in sync, when the last good one ended (Unix time, 0
        /// before the first), the bytes fetched since start.
        public var sources: [(name: String, inSync: Bool, lastSync: Double, bytes: Int64)] = []
        /// Clips' pictures by decoder ("h264 (software)", "h264_v4l2m2m (V4L2 hardware)"): shown, dropped, late.
        public var clipPictures: [String: (shown: Int, dropped: Int, late: Int)] = [:]
        /// Each screen where there are several (`outputs`, `mirror`); empty with one.
        public var outputs: [Output] = []

        public struct Output {
            public var name: String
            public var slidesShown: Int
            /// Whether its show's slide timer is held (a mirrored screen follows the first one's show: nil).
            public var paused: Bool?
            public var screenOn: Bool
            public var connected: Bool

            public init(name: String, slidesShown: Int, paused: Bool?, screenOn: Bool, connected: Bool) {
                self.name = name
                self.slidesShown = slidesShown
                self.paused = paused
                self.screenOn = screenOn
                self.connected = connected
            }
        }

        public init() {}

        /// A clip's pictures, added to its decoder's totals.
        public mutating func recordClip(decoder: String, shown: Int, dropped: Int, late: Int) {
            let before = clipPictures[decoder] ?? (0, 0, 0)
            clipPictures[decoder] = (before.shown + shown, before.dropped + dropped, before.late + late)
        }

        public mutating func recordDecode(seconds: Double) {
            let bucket = MetricsWriter.decodeBuckets.firstIndex { seconds <= $0 } ?? MetricsWriter.decodeBuckets.count
            decodeCounts[bucket] += 1
            decodeSum += seconds
        }
    }

    /// Upper bounds (seconds) of the decode-time histogram: a rendition decodes in milliseconds, a 20 MP original
    /// on a Pi Zero in seconds.
    public static let decodeBuckets: [Double] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// Writes the figures through `FileBytes.writeAtomically`, whose temporary name does not end in `.prom`, so the
    /// collector skips it; an error names the file and errno.
    public func write(_ figures: Figures) throws(RuntimeError) {
        do {
            try FileBytes.writeAtomically(Array(Self.render(figures).utf8), to: path)
        } catch {
            throw RuntimeError("write the metrics (\(error.operation))", path: error.path, errno: error.errno)
        }
    }

    public static func render(_ figures: Figures) -> String {
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { text += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        func number(_ value: Double) -> String { JSONText.number(value) }
        metric(
            "vitrine_slides_shown_total", "counter", "Slides that reached the screen.", [("", "\(figures.slidesShown)")]
        )
        metric(
            "vitrine_files_skipped_total", "counter", "Photos that could not be shown and were skipped.",
            [("", "\(figures.filesSkipped)")])
        var cumulative = 0
        var buckets: [(labels: String, value: String)] = []
        for (index, bound) in decodeBuckets.enumerated() {
            cumulative += figures.decodeCounts[index]
            buckets.append(("{le=\"\(number(bound))\"}", "\(cumulative)"))
        }
        cumulative += figures.decodeCounts[decodeBuckets.count]
        buckets.append(("{le=\"+Inf\"}", "\(cumulative)"))
        text += "# HELP vitrine_decode_seconds Time to turn a photo into a panel frame.\n"
        text += "# TYPE vitrine_decode_seconds histogram\n"
        for bucket in buckets { text += "vitrine_decode_seconds_bucket\(bucket.labels) \(bucket.value)\n" }
        text += "vitrine_decode_seconds_sum \(number(figures.decodeSum))\n"
        text += "vitrine_decode_seconds_count \(cumulative)\n"
        metric(
            "vitrine_resident_memory_bytes", "gauge", "Resident set size of the player.",
            [("", "\(figures.residentBytes)")])
        metric(
            "vitrine_anonymous_memory_bytes", "gauge",
            "Resident memory of the player that is not file-backed (heap, stacks, frames).",
            [("", "\(figures.anonymousBytes)")])
        metric(
            "vitrine_memory_budget_used_bytes", "gauge", "Frame and decode memory in use.",
            [("", "\(figures.budgetUsedBytes)")])
        metric(
            "vitrine_memory_budget_bytes", "gauge", "The memory budget for frames and decoding.",
            [("", "\(figures.budgetLimitBytes)")])
        metric(
            "vitrine_paused", "gauge", "1 while the slide timer is held for any reason.",
            [("", figures.pauseReasons.subtracting([.loading, .playing]).isEmpty ? "0" : "1")])
        metric(
            "vitrine_pause_reason", "gauge", "1 for each reason the slide timer is held.",
            PauseReason.allCases.map { ("{reason=\"\($0.rawValue)\"}", figures.pauseReasons.contains($0) ? "1" : "0") })
        if !figures.clipPictures.isEmpty {
            let decoders = figures.clipPictures.keys.sorted()
            func label(_ decoder: String) -> String { "{decoder=\"\(decoder.replacingQuotes)\"}" }
            metric(
                "vitrine_clip_pictures_shown_total", "counter", "Clip pictures that reached the screen, by decoder.",
                decoders.map { (label($0), "\(figures.clipPictures[$0]?.shown ?? 0)") })
            metric(
                "vitrine_clip_pictures_dropped_total", "counter",
                "Clip pictures passed over because a later one was already due, by decoder.",
                decoders.map { (label($0), "\(figures.clipPictures[$0]?.dropped ?? 0)") })
            metric(
                "vitrine_clip_pictures_late_total", "counter",
                "Clip pictures that reached the screen more than one vblank after they were due, by decoder.",
                decoders.map { (label($0), "\(figures.clipPictures[$0]?.late ?? 0)") })
        }
        metric("vitrine_screen_on", "gauge", "1 while the screen is on.", [("", figures.screenOn ? "1" : "0")])
        if let present = figures.present {
            metric(
                "vitrine_presence", "gauge", "1 while someone is in the room (motion or input), 0 when it is empty.",
                [("", present ? "1" : "0")])
        }
        metric(
            "vitrine_screen_connected", "gauge", "1 while a screen is connected.",
            [("", figures.screenConnected ? "1" : "0")])
        if let connected = figures.mqttConnected {
            metric(
                "vitrine_mqtt_connected", "gauge", "1 while the MQTT broker is connected.",
                [("", connected ? "1" : "0")])
            metric(
                "vitrine_mqtt_reconnects_total", "counter", "Connections to the MQTT broker made again after a loss.",
                [("", "\(figures.mqttReconnects)")])
        }
        if let tv = figures.cecTV {
            metric(
                "vitrine_cec_tv_power", "gauge", "1 for the TV's power state as HDMI-CEC says.",
                ["on", "standby", "unknown"].map { ("{state=\"\($0)\"}", $0 == tv ? "1" : "0") })
            metric(
                "vitrine_cec_active_source", "gauge", "1 while the TV shows the player.",
                [("", figures.cecActiveSource ? "1" : "0")])
        }
        if !figures.sources.isEmpty {
            let label = { (name: String) in "{source=\(JSONText.quote(name))}" }
            metric(
                "vitrine_source_in_sync", "gauge", "1 while the source's last sync ended in sync.",
                figures.sources.map { (label($0.name), $0.inSync ? "1" : "0") })
            metric(
                "vitrine_source_last_sync_timestamp_seconds", "gauge",
                "When the source's last successful sync ended (Unix time), 0 before the first.",
                figures.sources.map { (label($0.name), number($0.lastSync)) })
            metric(
                "vitrine_source_fetched_bytes_total", "counter", "Bytes the source's syncs fetched since start.",
                figures.sources.map { (label($0.name), "\($0.bytes)") })
        }
        if !figures.outputs.isEmpty {
            let label = { (name: String) in "{output=\"\(name.replacingQuotes)\"}" }
            let outputs = figures.outputs
            metric(
                "vitrine_output_slides_shown_total", "counter", "Slides that reached each screen.",
                outputs.map { (label($0.name), "\($0.slidesShown)") })
            metric(
                "vitrine_output_paused", "gauge", "1 while the screen's show holds its slide timer for any reason.",
                outputs.compactMap { output in output.paused.map { (label(output.name), $0 ? "1" : "0") } })
            metric(
                "vitrine_output_screen_on", "gauge", "1 while the screen is on.",
                outputs.map { (label($0.name), $0.screenOn ? "1" : "0") })
            metric(
                "vitrine_output_screen_connected", "gauge", "1 while the screen is connected.",
                outputs.map { (label($0.name), $0.connected ? "1" : "0") })
        }
        metric(
            "vitrine_last_slide_timestamp_seconds", "gauge", "When the last slide reached the screen (Unix time).",
            [("", number(figures.lastSlideTime))])
        metric(
            "vitrine_start_time_seconds", "gauge", "When the player started (Unix time).",
            [("", number(figures.startTime))])
        return text
    }
}

extension String {
    /// A Prometheus label value: backslashes and double quotes escaped.
    fileprivate var replacingQuotes: String {
        var out = ""
        for character in self {
            if character == "\\" || character == "\"" { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
