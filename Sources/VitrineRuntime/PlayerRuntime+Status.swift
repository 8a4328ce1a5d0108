import CLinux
import VitrineCore
import VitrineDisplay
import VitrineImage
import VitrineLinks
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the player tells about itself: the control socket's answers and `status`, the metrics file and `--stats`.
extension PlayerRuntime {
    /// Rewrites the metrics file (when one is configured) with the figures as they are now.
    func writeMetrics() {
        guard let metricsWriter else { return }
        do {
            try metricsWriter.write(currentFigures())
        } catch {
            log(.warning, "\(error)")
        }
    }

    /// The figures as they are now.
    func currentFigures() -> MetricsWriter.Figures {
        (figures.residentBytes, figures.anonymousBytes) = ProcessMemory.resident()
        figures.budgetUsedBytes = budget.used
        figures.pauseReasons = show.player.timer.reasons
        figures.screenOn = show.display.isPoweredOn && show.player.screen.isOn
        figures.present = presenceAndButtons?.isPresent
        figures.screenConnected = !show.unplugged
        figures.mqttConnected = mqtt?.isConnected
        figures.mqttReconnects = mqtt?.reconnects ?? 0
        figures.cecTV = cec?.state.tvPower.rawValue
        figures.cecActiveSource = cec?.state.isActiveSource ?? false
        let now = MonotonicClock.seconds()
        let wall = WallClock.seconds()
        figures.sources = (syncs?.machines ?? []).map { machine in
            (
                machine.name, machine.state == .inSync, machine.lastSuccess.map { wall - (now - $0) } ?? 0,
                machine.bytesFetched + (machine.running?.bytes ?? 0)
            )
        }
        // The clip in play counts too; finished clips are in `figures` already (`stopClip`).
        var current = figures
        let mirrored = show.mirrors?.screens ?? []
        if shows.count > 1 || !mirrored.isEmpty {
            current.outputs = shows.map { show in
                MetricsWriter.Figures.Output(
                    name: show.name, slidesShown: show.presentedCount,
                    paused: !show.player.timer.reasons.subtracting([.loading, .playing]).isEmpty,
                    screenOn: show.display.isPoweredOn && show.player.screen.isOn, connected: !show.unplugged)
            }
            current.outputs += mirrored.map { screen in
                MetricsWriter.Figures.Output(
                    name: screen.name, slidesShown: screen.slidesShown, paused: nil,
                    screenOn: screen.display.isPoweredOn && show.player.screen.isOn, connected: !screen.unplugged)
            }
        }
        if let playback = show.clipPlayback, let decoder = playback.decoder {
            let live = playback.figures
            current.recordClip(decoder: decoder, shown: live.presented, dropped: live.dropped, late: live.late)
        }
        return current
    }

    /// The memory part of the stats lines: resident, anonymous, peak, and the budget in use.
    func memoryStats() -> String {
        let mib = { (bytes: Int) in JSONText.number(Double(bytes) / 1_048_576) }
        let memory = ProcessMemory.resident()
        return "rss \(mib(memory.total)) MiB anon \(mib(memory.anonymous)) MiB peak "
            + "\(mib(ProcessMemory.peakResidentBytes())) MiB budget \(mib(budget.used))/\(mib(budget.limit)) MiB"
    }

    func logStartStats() { log("stats: started \(memoryStats())") }

    /// One answer line for one control line.
    /// Answers a command line from the control socket, which may ask anything (its file's permissions decide who
    /// reaches it).
    func answer(_ line: String) -> String { answer(line, authority: .admin, setting: "") }

    /// Answers a command line from a transport that may ask what `authority` allows; `setting` names the config
    /// key that says so, for the refusal.
    func answer(_ line: String, authority: CommandAuthority, setting: String) -> String {
        // `@NAME COMMAND` addresses one output's show; without it a command goes to every show.
        var text = Substring(line)
        var addressed: Show?
        if text.hasPrefix("@") {
            let name = text.dropFirst().prefix { $0 != " " }
            text = text.dropFirst(name.count + 1).drop { $0 == " " }
            // A mirror's other screens play the first screen's show.
            let mirrored = show.mirrors?.screens.contains { $0.name == name } == true
            guard let named = shows.first(where: { $0.name == name }) ?? (mirrored ? show : nil) else {
                let have = shows.map { JSONText.quote($0.name) }.joined(separator: ", ")
                return "error: no output named \(JSONText.quote(String(name))) (have: \(have))"
            }
            addressed = named
        }
        let line = String(text)
        guard let command = ControlCommand.parse(line) else { return "error: \(ControlCommand.refusal(line))" }
        guard authority.permits(command) else {
            return "error: \(command.word) is not allowed here (\(setting) is \"\(authority.rawValue)\")"
        }
        var targets = addressed.map { [$0] } ?? shows
        if case .category(.named(let name)) = command {
            // Without an output, the shows that have the category take it.
            let having = targets.filter { $0.player.categories.contains(name) }
            guard !having.isEmpty else {
                let have = Set(targets.flatMap(\.player.categories)).sorted()
                    .map { $0.isEmpty ? "\"\" (the library root)" : JSONText.quote($0) }
                return "error: no category named \(JSONText.quote(name)) (have: \(have.joined(separator: ", ")))"
            }
            targets = having
        }
        let now = MonotonicClock.seconds()
        if command == .status { return statusLine(of: addressed, now: now) }
        if command == .reload { return reload(now: now).map { "error: \($0)" } ?? "ok" }
        if command == .rotateToken {
            guard let web else { return "error: the web remote is off (no web settings)" }
            do {
                _ = try web.rotateToken()
                return "ok"
            } catch {
                return "error: \(error)"
            }
        }
        for show in targets {
            // A slide asked for by name counts, in `--stats`, from the request.
            switch command {
            case .next, .previous, .first, .category: show.advanceDeadline = now
            default: break
            }
            show.send(.command(command, now: now))
        }
        var wakes = true
        if case .screen = command { wakes = false }
        sendAll(presenceAndButtons?.activity(now: now, wakes: wakes))
        return "ok"
    }

    /// The TV as CEC knows it, for `status`: null without CEC.
    private var cecStatus: String {
        guard let cec else { return "null" }
        let state = cec.state
        return "{\"adapter\":\(JSONText.quote(cec.device)),"
            + "\"address\":\(state.logicalAddress == nil ? "null" : JSONText.quote(CECAddress.physical(state.physicalAddress))),"
            + "\"tv\":\"\(state.tvPower.rawValue)\",\"active_source\":\(state.isActiveSource)}"
    }

    /// `status`: the player's state as one JSON object. With several screens, the first's show (or the one
    /// addressed) at the top as with one, and each show under `outputs` by its name.
    func statusLine(of addressed: Show? = nil, now: Double) -> String {
        let show = addressed ?? self.show
        let mib = { (bytes: Int) in JSONText.number(Double(bytes) / 1_048_576) }
        let memory = ProcessMemory.resident()
        var fields = show.statusFields(now: now)
        fields += [
            "\"presence\":\(presenceAndButtons?.isPresent.map { $0 ? "\"present\"" : "\"absent\"" } ?? "null")",
            "\"motion\":\(presenceAndButtons?.motion.map { $0 ? "true" : "false" } ?? "null")",
            "\"cec\":\(cecStatus)",
            "\"budget_used_mib\":\(mib(budget.used))",
            "\"budget_total_mib\":\(mib(budget.limit))",
            "\"rss_mib\":\(mib(memory.total))",
            "\"anon_mib\":\(mib(memory.anonymous))",
            "\"longest_turn_ms\":\(JSONText.number((longestTurn * 1000).rounded()))",
            "\"sources\":\(syncs?.statusJSON(now: now) ?? "[]")",
        ]
        let mirrored = self.show.mirrors?.screens ?? []
        if shows.count > 1 || addressed != nil || !mirrored.isEmpty {
            fields.append("\"output\":\(JSONText.quote(show.name))")
        }
        if shows.count > 1 || !mirrored.isEmpty, addressed == nil {
            var each = shows.map { show in
                "{\"name\":\(JSONText.quote(show.name)),\(show.statusFields(now: now).joined(separator: ","))}"
            }
            // A mirror's other screens: the slide each has up, which is the show's once its picture is made.
            each += mirrored.map { screen in
                let slide = screen.display.screen.slide
                return "{\"name\":\(JSONText.quote(screen.name)),\"mirrors\":\(JSONText.quote(self.show.name)),"
                    + "\"category\":\(slide.map { JSONText.quote($0.category) } ?? "null"),"
                    + "\"slide\":\(slide.map { JSONText.quote($0.slide) } ?? "null"),"
                    + "\"screen\":\(screen.display.isPoweredOn ? "\"on\"" : "\"off\""),"
                    + "\"unplugged\":\(screen.unplugged),"
                    + "\"flips\":\(screen.display.flips),\"modesets\":\(screen.display.modesets),"
                    + "\"size\":\"\(screen.display.size)\"}"
            }
            fields.append("\"outputs\":[\(each.joined(separator: ","))]")
        }
        longestTurn = 0
        return "{" + fields.joined(separator: ",") + "}"
    }
}

extension Show {
    /// This show's part of `status`.
    func statusFields(now: Double) -> [String] {
        let status = player.status(now: now)
        return [
            "\"category\":\(status.category.map(JSONText.quote) ?? "null")",
            "\"slide\":\(status.slide.map { JSONText.quote($0.name) } ?? "null")",
            "\"position\":\(status.position.map(String.init) ?? "null")",
            "\"count\":\(status.count)",
            "\"why\":\(status.why.map { JSONText.quote($0.rawValue) } ?? "null")",
            "\"favourite\":\(status.favourite)",
            "\"playlist\":\(playlistJSON(status))",
            "\"paused\":[\(status.paused.map { JSONText.quote($0.rawValue) }.joined(separator: ","))]",
            "\"seconds_left\":\(JSONText.number(status.secondsLeft))",
            "\"frames_cached\":\(status.framesCached)",
            "\"presented\":\(presentedCount)",
            "\"screen\":\(display.isPoweredOn ? "\"on\"" : "\"off\"")",
            "\"flips\":\(display.flips)",
            "\"modesets\":\(display.modesets)",
            "\"clip\":\(clipJSON(now: now))",
            "\"size\":\"\(display.size)\"",
        ]
    }
}

/// What a show tells of itself: its `--stats` lines and its parts of `status`.
extension Show {
    func logStats(_ record: PresentRecord, now: Double) {
        let mib = { (bytes: Int) in JSONText.number(Double(bytes) / 1_048_576) }
        // With a crossfade the change becomes visible at its first step.
        let visible = display.screen.firstShown ?? now
        let latency = advanceDeadline.map { "\(JSONText.number((visible - $0) * 1000)) ms" } ?? "-"
        let decode = record.decodeMilliseconds.map { "\(JSONText.number($0)) ms" } ?? "-"
        // Drivers without a real vblank count none (sequence 0 throughout): nothing to say then.
        let pacing = display.screen.lastPacing.flatMap {
            $0.vblanks > 0 ? " fade \($0.steps) steps over \($0.vblanks) vblanks" : nil
        }
        log(
            "stats: slide \(SlideID(category: record.category, name: record.slide)) decode \(decode) "
                + "deadline-to-present \(latency)\(pacing ?? "") \(house.memoryStats()) "
                + "MemAvailable \(mib(ProcessMemory.availableBytes())) MiB"
                + " at \(microseconds(visible))"
        )
    }

    /// CLOCK_MONOTONIC seconds to the microsecond, so a test can line a slide up with what else the machine did.
    private func microseconds(_ seconds: Double) -> String {
        let whole = Int((seconds * 1_000_000).rounded())
        return "\(whole / 1_000_000).\(String(whole % 1_000_000).leftPadded(to: 6))"
    }

    /// The day-part in force for `status` and MQTT: its name, until when (local time), and whether a category chosen
    /// by hand holds it off; null when `playlists` has none in force.
    func playlistJSON(_ status: Player.Status) -> String {
        guard let name = status.dayPart else { return "null" }
        return
            "{\"name\":\(JSONText.quote(name)),\"until\":\(dayPartUntil.map { JSONText.quote($0.description) } ?? "null"),"
            + "\"held_by_hand\":\(status.heldByHand)}"
    }

    /// The clip on screen (or the last one played): its decoder, where it is, and how its pictures went.
    func clipJSON(now: Double) -> String {
        let figures: ClipPacer.Figures
        var fields: [String] = []
        if let playback = clipPlayback {
            figures = playback.figures
            fields += [
                "\"slide\":\(JSONText.quote(playback.id.name))",
                "\"decoder\":\(playback.decoder.map(JSONText.quote) ?? "null")",
                "\"sound\":\(playback.sound.map(JSONText.quote) ?? "null")",
                "\"seconds\":\(JSONText.number((playback.pacer.position(now: now) * 1000).rounded() / 1000))",
                "\"playing\":\(playback.started && !playback.held)",
            ]
        } else if let last = clipFigures {
            figures = last
            fields.append("\"playing\":false")
        } else {
            return "null"
        }
        fields += [
            "\"presented\":\(figures.presented)", "\"dropped\":\(figures.dropped)", "\"late\":\(figures.late)",
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }
}
