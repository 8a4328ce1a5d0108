import Testing
import VitrineCore

@testable import VitrineLinks

struct MetricsWriterTests {
    @Test func metricsAreValidTextFormatWithACumulativeHistogram() throws {
        var figures = MetricsWriter.Figures()
        figures.slidesShown = 12
        figures.filesSkipped = 1
        for seconds in [0.004, 0.02, 0.02, 0.3, 12.0] { figures.recordDecode(seconds: seconds) }
        figures.pauseReasons = [.user]
        figures.screenOn = false
        figures.mqttConnected = true
        figures.mqttReconnects = 3
        figures.cecTV = "standby"
        figures.sources = [("family", true, 1_700_000_000, 11_100_000), ("nas \"x\"", false, 0, 0)]
        figures.outputs = [
            .init(name: "menu", slidesShown: 7, paused: false, screenOn: true, connected: true),
            .init(name: "offers", slidesShown: 3, paused: true, screenOn: true, connected: false),
            .init(name: "till", slidesShown: 7, paused: nil, screenOn: false, connected: true),
        ]
        let text = MetricsWriter.render(figures)
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        func value(_ name: String) -> String? {
            samples.first { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
        }
        #expect(value("vitrine_slides_shown_total") == "12")
        #expect(value("vitrine_decode_seconds_bucket{le=\"0.010\"}") == "1")
        #expect(value("vitrine_decode_seconds_bucket{le=\"0.025\"}") == "3")
        #expect(value("vitrine_decode_seconds_bucket{le=\"0.500\"}") == "4")
        #expect(value("vitrine_decode_seconds_bucket{le=\"10.000\"}") == "4")
        #expect(value("vitrine_decode_seconds_bucket{le=\"+Inf\"}") == "5")
        #expect(value("vitrine_decode_seconds_count") == "5")
        #expect(value("vitrine_decode_seconds_sum") == "12.344")
        #expect(value("vitrine_paused") == "1")
        #expect(value("vitrine_pause_reason{reason=\"user\"}") == "1")
        #expect(value("vitrine_pause_reason{reason=\"loading\"}") == "0")
        #expect(value("vitrine_screen_on") == "0")
        #expect(value("vitrine_mqtt_connected") == "1")
        #expect(value("vitrine_mqtt_reconnects_total") == "3")
        #expect(value("vitrine_cec_tv_power{state=\"standby\"}") == "1")
        #expect(value("vitrine_cec_tv_power{state=\"on\"}") == "0")
        #expect(value("vitrine_cec_active_source") == "0")
        #expect(!MetricsWriter.render(MetricsWriter.Figures()).contains("vitrine_cec"), "no CEC, no CEC metrics")
        #expect(value("vitrine_source_in_sync{source=\"family\"}") == "1")
        #expect(value("vitrine_source_in_sync{source=\"nas \\\"x\\\"\"}") == "0")
        #expect(value("vitrine_source_last_sync_timestamp_seconds{source=\"family\"}") == "1700000000.000")
        #expect(value("vitrine_source_fetched_bytes_total{source=\"family\"}") == "11100000")
        #expect(!MetricsWriter.render(MetricsWriter.Figures()).contains("vitrine_source"), "no sources, no metrics")
        // Each screen where there are several; a mirrored screen has no show of its own to be paused.
        #expect(value("vitrine_output_slides_shown_total{output=\"offers\"}") == "3")
        #expect(value("vitrine_output_paused{output=\"offers\"}") == "1")
        #expect(value("vitrine_output_paused{output=\"menu\"}") == "0")
        #expect(value("vitrine_output_paused{output=\"till\"}") == nil)
        #expect(value("vitrine_output_screen_on{output=\"till\"}") == "0")
        #expect(value("vitrine_output_screen_connected{output=\"offers\"}") == "0")
        #expect(!MetricsWriter.render(MetricsWriter.Figures()).contains("vitrine_output"), "one screen, no outputs")
        // Every sample belongs to a metric declared with HELP and TYPE just before it.
        var declared: Set<String> = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") { declared.insert(String(line.split(separator: " ")[2])) }
            if line.hasPrefix("#") { continue }
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            let family = ["_bucket", "_sum", "_count"].reduce(name) { name, suffix in
                name.hasSuffix(suffix) && name.hasPrefix("vitrine_decode_seconds")
                    ? String(name.dropLast(suffix.count)) : name
            }
            #expect(declared.contains(family), "\(line)")
        }
    }
}
