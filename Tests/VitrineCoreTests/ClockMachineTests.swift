import Testing

@testable import VitrineCore

/// The clock overlay against a manual wall clock: minute alignment, a suspend across minutes, a daylight-saving
/// change, 12 and 24 hours, the date on its own.
@Suite struct ClockMachineTests {
    /// A zone one hour ahead of UTC that moves to two hours ahead at `summerFrom` (the way Central Europe does),
    /// standing in for `localtime_r`.
    struct Zone {
        var summerFrom = Int.max

        func local(_ epoch: Int) -> LocalTime {
            let shifted = epoch + (epoch >= summerFrom ? 7200 : 3600)
            let days = shifted / 86400
            let secondOfDay = shifted - days * 86400
            let (year, month, day) = Self.civil(days)
            return LocalTime(
                epoch: epoch, year: year, month: month, day: day, hour: secondOfDay / 3600,
                minute: secondOfDay / 60 % 60, second: secondOfDay % 60)
        }

        /// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's civil_from_days).
        static func civil(_ days: Int) -> (Int, Int, Int) {
            let z = days + 719_468
            let era = z / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
        }
    }

    /// 2026-03-29 00:59:30 UTC, half a minute before Central European summer time starts (01:00 UTC).
    static let beforeSummer = 1_774_745_970
    static let twentyFour = ClockMachine.Settings(clock: ClockFormat("HH:mm"))

    static func shown(_ actions: [ClockMachine.Action]) -> [String]? {
        for case .show(let lines) in actions { return lines }
        return nil
    }

    static func wake(_ actions: [ClockMachine.Action]) -> Int?? {
        for case .wake(let epoch) in actions { return .some(epoch) }
        return nil
    }

    @Test func theClockWakesAtEachMinuteAndRedrawsOnlyWhenTheTextChanges() throws {
        let zone = Zone()
        var machine = ClockMachine(settings: Self.twentyFour)
        let start = Self.beforeSummer - 3600  // 00:59:30 local (+1)
        let first = machine.tick(zone.local(start))
        #expect(Self.shown(first) == ["00:59"])
        #expect(Self.wake(first) == .some(start + 30))
        // The timer fires on the minute: a new text and the next minute.
        let next = machine.tick(zone.local(start + 30))
        #expect(Self.shown(next) == ["01:00"])
        #expect(Self.wake(next) == .some(start + 90))
        // Woken early (a stray wake-up within the minute): nothing is redrawn, the same minute is asked for.
        let early = machine.tick(zone.local(start + 50))
        #expect(Self.shown(early) == nil)
        #expect(Self.wake(early) == .some(start + 90))
    }

    @Test func aSuspendAcrossMinutesIsCaughtUpAtOnce() {
        let zone = Zone()
        var machine = ClockMachine(settings: Self.twentyFour)
        _ = machine.tick(zone.local(Self.beforeSummer - 7200 + 10))  // 23:59:40
        // The board slept 7 min 33 s; the runtime's timer comes back cancelled (clock jump) and ticks.
        let woke = machine.tick(zone.local(Self.beforeSummer - 7200 + 10 + 453))  // 00:07:13
        #expect(Self.shown(woke) == ["00:07"])
        #expect(Self.wake(woke) == .some(Self.beforeSummer - 7200 + 10 + 453 + 47))
    }

    @Test func theDaylightSavingChangeMovesTheClockAnHour() {
        let zone = Zone(summerFrom: Self.beforeSummer + 30)
        var machine = ClockMachine(
            settings: ClockMachine.Settings(clock: ClockFormat("HH:mm"), date: .iso))
        #expect(Self.shown(machine.tick(zone.local(Self.beforeSummer))) == ["01:59", "2026-03-29"])
        // One minute later by the epoch is 03:00 on the wall.
        let changed = machine.tick(zone.local(Self.beforeSummer + 30))
        #expect(Self.shown(changed) == ["03:00", "2026-03-29"])
        #expect(Self.wake(changed) == .some(Self.beforeSummer + 90))
    }

    @Test func twelveAndTwentyFourHours() throws {
        let zone = Zone()
        let afternoon = zone.local(Self.beforeSummer - 3600 + 13 * 3600 + 30)  // 14:00 local
        let midnight = zone.local(Self.beforeSummer - 3600 - 59 * 60 + 30 - 30)  // 00:00:30 local
        #expect(ClockFormat.default(for: .americanEnglish).format(afternoon) == "2:00 PM")
        #expect(ClockFormat.default(for: .americanEnglish).format(midnight) == "12:00 AM")
        #expect(ClockFormat.default(for: .german).format(afternoon) == "14:00")
        #expect(ClockFormat.default(for: .german).format(midnight) == "00:00")
        #expect(
            try #require(ClockFormat("hh:mm a")).format(zone.local(Self.beforeSummer - 3600 + 8 * 3600)) == "08:59 AM")
        #expect(try #require(ClockFormat("H'h'mm")).format(afternoon) == "14h00")
        for bad in ["", "HHH:mm", "H:m", "'open", "text only"] {
            #expect(ClockFormat(bad) == nil, "\(bad)")
        }
    }

    @Test func theDateIsOnOrOffIndependently() {
        let zone = Zone()
        let time = zone.local(Self.beforeSummer)
        var dateOnly = ClockMachine(settings: ClockMachine.Settings(date: .english))
        #expect(Self.shown(dateOnly.tick(time)) == ["29 March 2026"])
        var clockOnly = ClockMachine(settings: Self.twentyFour)
        #expect(Self.shown(clockOnly.tick(time)) == ["01:59"])
        var neither = ClockMachine(settings: ClockMachine.Settings())
        #expect(neither.tick(time) == [.wake(atEpoch: nil)])
        // Turning the date off later takes only its line away.
        var both = ClockMachine(settings: ClockMachine.Settings(clock: ClockFormat("HH:mm"), date: .english))
        _ = both.tick(time)
        #expect(Self.shown(both.update(Self.twentyFour, now: time)) == ["01:59"])
        #expect(both.update(ClockMachine.Settings(), now: time) == [.hide, .wake(atEpoch: nil)])
    }

    @Test func nothingIsDrawnWhileTheScreenIsOff() {
        let zone = Zone()
        var machine = ClockMachine(settings: Self.twentyFour)
        _ = machine.tick(zone.local(Self.beforeSummer))
        #expect(machine.screen(on: false, now: zone.local(Self.beforeSummer + 5)) == [.hide, .wake(atEpoch: nil)])
        #expect(machine.tick(zone.local(Self.beforeSummer + 600)) == [.wake(atEpoch: nil)])
        let on = machine.screen(on: true, now: zone.local(Self.beforeSummer + 3600))
        #expect(Self.shown(on) == ["02:59"])
        // A new picture comes without the overlay: it is drawn again though the text is the same.
        #expect(Self.shown(machine.pictureReplaced(now: zone.local(Self.beforeSummer + 3601))) == ["02:59"])
    }
}

/// The `overlay` section.
@Suite struct OverlaySettingsTests {
    /// The section in a file that names a broker (the texts need one).
    static func overlay(_ text: String, broker: Bool = true) throws(ConfigError) -> OverlaySettings? {
        let mqtt = broker ? ",\n\"mqtt\": {\"host\": \"broker.lan\"}" : ""
        return try Settings.parse("{\n\"overlay\": \(text)\(mqtt)\n}", file: "frame.json").overlay
    }

    @Test func theSectionReadsItsParts() throws {
        #expect(try Settings.parse("{}", file: "frame.json").overlay == nil)
        let plain = try #require(try Self.overlay("{\"clock\": true, \"date\": true}"))
        #expect(plain.clock == .locale)
        #expect(plain.clock.format(locale: .americanEnglish)?.pattern == "h:mm a")
        #expect(plain.date && plain.corner == .topRight && plain.look == .shadow)
        let full = try #require(
            try Self.overlay(
                "{\"clock\": \"H'h'mm\", \"corner\": \"bottom-left\", \"size\": 0.1, \"look\": \"plate\", \"texts\": "
                    + "[{\"topic\": \"home/outside\", \"field\": \"attributes.temperature\", \"format\": \"{value} °C\", "
                    + "\"staleSeconds\": 1800}]}"))
        #expect(full.clock.format(locale: .english)?.pattern == "H'h'mm")
        #expect(full.corner == .bottomLeft && full.size == 0.1 && full.look == .plate)
        let text = try #require(full.texts.first)
        #expect(text.topic == "home/outside" && text.field == "attributes.temperature" && text.staleSeconds == 1800)
        #expect(text.line(value: "7.5") == "7.5 °C")
        #expect(try Self.overlay("{\"clock\": false}")?.clock == .off)
    }

    @Test func badValuesAreRefusedWithTheirLineAndField() {
        let cases: [(String, String, String)] = [
            ("{\"clock\": \"HHH\"}", "overlay.clock", "not a clock pattern"),
            ("{\"clock\": 24}", "overlay.clock", "expected true, false or a pattern"),
            ("{\"size\": 0.5}", "overlay.size", ""),
            ("{\"corner\": \"middle\"}", "overlay.corner", ""),
            ("{\"texts\": [{\"topic\": \"home/+/temp\"}]}", "overlay.texts[0].topic", "without wildcards"),
            ("{\"texts\": [{\"topic\": \"t\", \"format\": \"°C\"}]}", "overlay.texts[0].format", "{value}"),
            ("{\"texts\": [{\"topic\": \"t\", \"field\": \"a..b\"}]}", "overlay.texts[0].field", "field path"),
            ("{\"texts\": [{\"field\": \"a\"}]}", "overlay.texts[0].topic", ""),
            ("{\"colour\": 1}", "overlay.colour", ""),
        ]
        for (text, field, words) in cases {
            do {
                _ = try Self.overlay(text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.line == 2, "\(text): \(error)")
                #expect("\(error)".contains(field), "\(text): \(error)")
                #expect("\(error)".contains(words), "\(text): \(error)")
            }
        }
        // Texts without a broker to hear them from.
        for (text, field, words) in [("{\"texts\": [{\"topic\": \"t\"}]}", "overlay.texts", "add an mqtt section")] {
            do {
                _ = try Self.overlay(text, broker: false)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.line == 2, "\(text): \(error)")
                #expect("\(error)".contains(field), "\(text): \(error)")
                #expect("\(error)".contains(words), "\(text): \(error)")
            }
        }
    }
}

/// The overlay's MQTT texts: what a payload becomes, and staleness on a manual clock.
@Suite struct OverlayTextsTests {
    static func text(_ topic: String, field: String? = nil, format: String = "{value}", stale: Double? = nil)
        -> OverlaySettings.Text
    {
        var text = OverlaySettings.Text(topic: topic)
        text.field = field
        text.format = format
        text.staleSeconds = stale
        return text
    }

    @Test func payloadsAndFieldsBecomeLines() {
        var texts = OverlayTexts(texts: [
            Self.text("home/outside", field: "attributes.temperature", format: "{value} °C"),
            Self.text("home/doorbell"),
            Self.text("home/outside", field: "state"),
        ])
        #expect(texts.topics == ["home/outside", "home/doorbell"])
        #expect(texts.lines(now: 0).isEmpty)
        let outside = Array("{\"state\": \"sunny\", \"attributes\": {\"temperature\": 7.5}}".utf8)
        #expect(texts.received(topic: "home/outside", payload: outside, now: 1).changed)
        #expect(texts.lines(now: 1) == ["7.5 °C", "sunny"])
        #expect(texts.received(topic: "home/doorbell", payload: Array("  Parcel at the door \n".utf8), now: 2).changed)
        #expect(texts.lines(now: 2) == ["7.5 °C", "Parcel at the door", "sunny"])
        // The same values again change nothing to draw.
        #expect(!texts.received(topic: "home/outside", payload: outside, now: 3).changed)
    }

    @Test func anUnreadablePayloadKeepsTheLastValueAndSaysWhy() {
        var texts = OverlayTexts(texts: [Self.text("t", field: "temperature")])
        _ = texts.received(topic: "t", payload: Array("{\"temperature\": 21}".utf8), now: 0)
        let broken = texts.received(topic: "t", payload: Array("21 degrees".utf8), now: 1)
        #expect(!broken.changed)
        #expect(broken.problems == ["overlay text from t: not JSON, so it has no field temperature"])
        let missing = texts.received(topic: "t", payload: Array("{\"humidity\": 40}".utf8), now: 2)
        #expect(missing.problems == ["overlay text from t: no field temperature"])
        #expect(texts.lines(now: 2) == ["21"])
    }

    @Test func aQuietSensorHidesAfterItsLimit() {
        var texts = OverlayTexts(texts: [Self.text("a", stale: 60), Self.text("b")])
        _ = texts.received(topic: "a", payload: Array("1".utf8), now: 100)
        _ = texts.received(topic: "b", payload: Array("2".utf8), now: 100)
        #expect(texts.nextStale(now: 100) == 160)
        #expect(texts.lines(now: 159.9) == ["1", "2"])
        #expect(texts.lines(now: 160) == ["2"])
        #expect(texts.nextStale(now: 160) == nil)
        _ = texts.received(topic: "a", payload: Array("3".utf8), now: 200)
        #expect(texts.lines(now: 200) == ["3", "2"])
    }

    @Test func longValuesAreShortened() {
        var texts = OverlayTexts(texts: [Self.text("t")])
        _ = texts.received(topic: "t", payload: Array(String(repeating: "x", count: 500).utf8), now: 0)
        #expect(texts.lines(now: 0).first?.count == OverlayTexts.maximumValueLength + 1)
    }
}

/// Which rectangles an overlay must copy between two scanout buffers.
@Suite struct BufferDamageTests {
    static func rect(_ x: Int, _ y: Int, _ width: Int, _ height: Int) -> Placement.Rect {
        Placement.Rect(x: x, y: y, width: width, height: height)
    }

    @Test func onlyTheChangedPlacesOfTheSamePictureAreCopied() {
        var damage = BufferDamage(bufferCount: 2)
        #expect(damage.rectsToCopy(into: 1, from: 0) == nil, "nothing known: the whole frame")
        damage.picturePainted(into: 0)
        #expect(damage.rectsToCopy(into: 1, from: 0) == nil, "another picture in the back buffer")
        damage.overlayPainted(into: 1, from: 0, touched: [Self.rect(400, 10, 60, 20)])
        // Back to buffer 0, which has the bare picture: the corner buffer 1 changed.
        #expect(damage.rectsToCopy(into: 0, from: 1) == [Self.rect(400, 10, 60, 20)])
        damage.overlayPainted(into: 0, from: 1, touched: [Self.rect(396, 10, 64, 20), Self.rect(100, 300, 80, 16)])
        // Overlapping corners merge; the banner stays apart.
        #expect(damage.rectsToCopy(into: 1, from: 0) == [Self.rect(396, 10, 64, 20), Self.rect(100, 300, 80, 16)])
        damage.picturePainted(into: 1)
        #expect(damage.rectsToCopy(into: 0, from: 1) == nil, "a new slide: the whole frame once")
        damage.forget()
        #expect(damage.rectsToCopy(into: 1, from: 0) == nil)
    }

    @Test func tooManySeparatePlacesMeanTheWholeFrame() {
        var damage = BufferDamage(bufferCount: 2)
        damage.picturePainted(into: 0)
        damage.overlayPainted(
            into: 1, from: 0, touched: (0...BufferDamage.maximumRects).map { Self.rect($0 * 20, 0, 10, 10) })
        #expect(damage.rectsToCopy(into: 0, from: 1) == nil)
    }
}

/// New overlay settings keep what the sensors last said.
@Suite struct OverlayTextsReloadTests {
    @Test func aNewFormatOrLimitKeepsTheValueAndANewFieldWaitsForTheNextMessage() {
        var outside = OverlaySettings.Text(topic: "home/outside")
        outside.field = "temperature"
        var old = OverlayTexts(texts: [outside])
        _ = old.received(topic: "home/outside", payload: Array("{\"temperature\": 18}".utf8), now: 10)
        var reformatted = outside
        reformatted.format = "{value} °C"
        reformatted.staleSeconds = 600
        var humidity = OverlaySettings.Text(topic: "home/outside")
        humidity.field = "humidity"
        let new = OverlayTexts(texts: [reformatted, humidity], keeping: old)
        #expect(new.lines(now: 20) == ["18 °C"])
        #expect(new.nextStale(now: 20) == 610, "the limit counts from the message, not the reload")
    }
}
