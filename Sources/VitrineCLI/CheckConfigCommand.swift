import VitrineCore
import VitrineLibrary
import VitrineLinks
import VitrinePlatform
import VitrineRuntime
import VitrineSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `vitrine check-config [FILE...]`: validates config and device-table files with the player's own loaders and
/// says what they mean, so a mistake is found at the desk rather than on the wall.
struct CheckConfigCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "check-config",
        synopsis: "[FILE...]",
        summary: """
            Checks each FILE with the loader the player uses: a file with "profiles" is a device table, any other a
            player config (whose device table is checked too). An error names the file, line and key; a valid file
            is explained: every setting with its value and whether it is the default, what the library holds, and
            what would go wrong at run time (a missing library folder or font, an unwritable metrics folder).
            Without FILE, checks the config the player would read. Exits 0 when every file is valid, else 1.
            See Config/schema/ for the JSON Schema of both files.
            """,
        options: [],
        maximumArguments: nil)

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        var files = parsed.arguments
        if files.isEmpty {
            guard let found = ConfigContext.searchPath.first(where: { FileBytes.exists($0) }) else {
                let looked = ConfigContext.searchPath.joined(separator: ", ")
                console.error("vitrine check-config: no config file found (looked for \(looked))\n")
                return 1
            }
            files = [found]
        }
        var valid = true
        for file in files {
            let text: String
            do {
                text = try FileBytes.readText(file)
            } catch {
                console.error("\(file): cannot read: \(error.reason)\n")
                valid = false
                continue
            }
            let isTable = (try? JSONParser.parse(text)).map { Self.isDeviceTable($0) } ?? false
            valid = (isTable ? checkTable(file) : checkSettings(file)) && valid
        }
        return valid ? 0 : 1
    }

    private func checkTable(_ file: String) -> Bool {
        let table: DeviceTable
        do {
            table = try DeviceTable.load(path: file)
        } catch {
            console.error("\(error)\n")
            return false
        }
        console.out("\(file): valid device table, \(table.profiles.count) profiles\n")
        for profile in table.profiles {
            let connectors = profile.connectors.isEmpty ? "any connector" : profile.connectors.joined(separator: "/")
            let edid = profile.edidName.map { ", EDID \"\($0)\"" } ?? ""
            console.out(
                "  \(profile.id): \(profile.mode) on \(connectors)\(edid) -> compose \(profile.compose), rotation "
                    + "\(profile.rotation.rawValue), renditions \(profile.rendition), \(profile.fit.rawValue), "
                    + "\(profile.memoryBudgetMiB) MiB, \(profile.transition.rawValue)\n")
        }
        let fallback = table.fallback
        console.out(
            "  other panels: composed at up to \(fallback.maxComposePixels) pixels, \(fallback.fit.rawValue), "
                + "\(fallback.baseMemoryMiB) MiB + \(fallback.framesInBudget) frames\n")
        return true
    }

    private func checkSettings(_ file: String) -> Bool {
        let settings: Settings
        do {
            settings = try Settings.load(path: file)
        } catch {
            console.error("\(error)\n")
            return false
        }
        let defaults = Settings()
        let written = Self.writtenKeys(file)
        var warnings: [String] = []
        console.out("\(file): valid player config\n")
        func line(_ key: String, _ value: String, default isDefault: Bool? = nil) {
            let source = written.contains(key) ? "set" : "default"
            console.out("  \(key.padding(18))\(value) (\(isDefault == true ? "default" : source))\n")
        }
        let library = Library(root: settings.library)
        if let categories = try? library.categories() {
            let photos = categories.reduce(0) { $0 + ((try? library.slides(in: $1).count) ?? 0) }
            line("library", "\(settings.library): \(categories.count) categories, \(photos) slides")
        } else {
            line("library", "\(settings.library)")
            warnings.append("library \(settings.library) is not a folder the player can read; it will wait for it")
        }
        var valid = true
        do {
            let context = ConfigContext(settings: settings, path: file)
            let table = try context.deviceTable(explicit: nil)
            line("deviceTable", "\(context.deviceTableSource): \(table.profiles.count) profiles")
        } catch {
            line("deviceTable", settings.deviceTable)
            console.error("\(error)\n")
            valid = false
        }
        line("interval", "\(ConfigObject.format(settings.interval)) s")
        line("order", settings.order.rawValue)
        if settings.order == .shuffle {
            line("mix", settings.mix.summary + "; every photo once per round, across restarts with a position file")
        }
        line(
            "minRating",
            settings.minRating.map { "\($0): photos rated lower (or unrated) are left out" } ?? "none: every photo")
        line("favouriteRating", "\(settings.favouriteRating) stars and more, and photos starred on the frame")
        if let dayParts = settings.dayParts {
            line(
                "playlists",
                "\(dayParts.parts.count), the first in force wins; a category chosen by hand holds them off "
                    + (dayParts.hold.map { "for \(ConfigObject.format($0 / 60)) min" } ?? "until the next boundary"))
            for part in dayParts.parts {
                let categories = part.categories.map { $0.weight == 1 ? $0.name : "\($0.name) ×\($0.weight)" }
                let dates = part.dates.map { ", \($0.from) to \($0.to)" } ?? ""
                let interval = part.interval.map { ", \(ConfigObject.format($0)) s a slide" } ?? ""
                console.out("    \(part.name): \(categories.joined(separator: ", "))\(dates)\(interval)\n")
            }
            // The week as it comes, from this week's Monday.
            let today = LocalMinute(LocalTime.now())
            console.out("    this week:\n")
            for row in dayParts.week(from: today.day - (today.weekday - 1)) { console.out("      \(row)\n") }
        }
        line(
            "favouritesFile",
            FavouritesStore.path(settings: settings) ?? "none (stars given on the frame last until the player stops)")
        line("fit", settings.fit?.rawValue ?? "the device profile's")
        line("background", settings.background.description)
        line("startCategory", settings.startCategory ?? "the first")
        line("pauseOnInput", "\(ConfigObject.format(settings.pauseOnInput)) s after a touch or key")
        line("memoryBudgetMiB", settings.memoryBudgetMiB.map { "\($0) MiB" } ?? "the device profile's")
        line("maxMegapixels", ConfigObject.format(settings.maxMegapixels))
        line("colorManagement", settings.colorManagement ? "on: colour profiles are converted to sRGB" : "off")
        let display = settings.display
        var screen = display.backend.rawValue
        if let device = display.device { screen += " \(device)" }
        if let connector = display.connector { screen += " connector \(connector)" }
        if let mode = display.mode { screen += " mode \(mode)" }
        line(
            "display",
            "\(screen), headless size \(display.headlessSize), VT switching "
                + (display.vtSwitching ? "with Ctrl+Alt+F1...F12" : "forbidden"))
        line("controlSocket", settings.controlSocket ?? ControlServer.defaultPath())
        let bound = KeyMap.Action.allCases.compactMap { action in
            settings.keys.bindings[action].flatMap {
                $0.isEmpty ? nil : "\(action.rawValue)=\($0.joined(separator: "/"))"
            }
        }
        line("keys", bound.joined(separator: " "), default: settings.keys == defaults.keys)
        line("screenSchedule", settings.screenSchedule.map { "off \($0.off), on \($0.on)" } ?? "always on")
        let buttons = settings.buttons.map { button in
            "\(button.line)=\(button.binding.action.rawValue)"
                + (button.binding.longAction.map { "/long \($0.rawValue)" } ?? "")
        }
        line(
            "gpio",
            buttons.isEmpty
                ? "no buttons"
                : buttons.joined(separator: " ")
                    + ", long press \(ConfigObject.format(settings.longPressSeconds)) s")
        line(
            "presence",
            settings.presence.map { presence in
                "screen off after \(ConfigObject.format(presence.offAfterMinutes)) min without "
                    + (presence.sensor.map { "motion on \($0) or " } ?? "") + "input"
                    + (presence.wakeOutsideSchedule ? ", motion wakes it outside the schedule" : "")
            } ?? "off (the screen stays on whoever is there)")
        if let mqtt = settings.mqtt {
            let topics = MQTTTopics(mqtt, hostname: MQTTClient.hostname())
            line(
                "mqtt",
                "\(mqtt.host):\(mqtt.port)\(mqtt.tls == nil ? "" : " over TLS") as \(topics.id)"
                    + (mqtt.id == nil ? " (the hostname)" : "")
                    + (mqtt.credentialsFile.map { ", user and password from \($0)" } ?? ", no user name"))
            console.out("    state on \(topics.state), availability on \(topics.availability)\n")
            console.out("    commands on \(topics.commandTopics.joined(separator: ", ")), answers on \(topics.reply)\n")
            let authorities = MQTTSettings.Commands.Topic.allCases.map {
                "\($0.rawValue) \(mqtt.commands[$0].rawValue)"
            }
            console.out("    what they may ask: \(authorities.joined(separator: ", ")); retained ones are ignored\n")
            console.out(
                "    Home Assistant discovery "
                    + (mqtt.discovery ? "under \(mqtt.discoveryPrefix)/ as \(topics.nodeID)" : "off") + "\n")
            do {
                _ = try MQTTClient(MQTTClient.options(for: mqtt, topics: topics))
            } catch {
                console.error("\(file): \(error)\n")
                valid = false
            }
        } else {
            line("mqtt", "off (no broker)")
        }
        line("sources", settings.sources.isEmpty ? "none" : "\(settings.sources.count), synced by vitrine sync --once")
        if !settings.sources.isEmpty, FileBytes.exists(settings.library), access(settings.library, W_OK) != 0 {
            warnings.append(
                "sources: the library \(settings.library) is not writable here, so nothing can be synced into it "
                    + "(deploy/install.sh --sources lets the service write it)")
        }
        for source in settings.sources {
            console.out("    \(Self.sourceLine(source))\n")
            if let problem = Self.sourceProblem(source) {
                console.error("\(file): sources: \(source.name): \(problem)\n")
                valid = false
            }
        }
        line("overlay", Self.overlayLine(settings))
        for text in settings.overlay?.texts ?? [] {
            console.out(
                "    \(text.format.replacing("{value}", with: text.field.map { "<\($0)>" } ?? "<payload>")) from "
                    + "\(text.topic)"
                    + (text.staleSeconds.map { ", hidden \(ConfigObject.format($0)) s after its last message" } ?? "")
                    + "\n")
        }
        if let font = settings.fontPath, !FileBytes.exists(font) {
            warnings.append("fontPath \(font) does not exist; banners and captions will be missing")
        }
        line("fontPath", settings.fontPath ?? "DejaVu Sans")
        line("transition", settings.transition?.rawValue ?? "the device profile's")
        line("transitionSeconds", settings.transitionSeconds.map { "\(ConfigObject.format($0)) s" } ?? "the profile's")
        line("pairPortraits", settings.pairPortraits ? "yes" : "no")
        line("caption", settings.caption.template.text)
        line("captionPosition", settings.caption.position.rawValue)
        line("captionSize", ConfigObject.format(settings.caption.size))
        line("locale", settings.locale?.rawValue ?? "from LC_ALL/LC_TIME/LANG")
        valid = checkPlaces(settings, file: file, line: line, warnings: &warnings) && valid
        if let metrics = settings.metricsFile {
            let folder = PathText.directory(of: metrics)
            if !FileBytes.exists(folder) { warnings.append("metricsFile: the folder \(folder) does not exist") }
        }
        line("metricsFile", settings.metricsFile ?? "none")
        line("metricsInterval", "\(ConfigObject.format(settings.metricsInterval)) s")
        line("positionFile", PositionStore.path(settings: settings) ?? "none (the show starts from the top)")
        line("rescanInterval", "\(ConfigObject.format(settings.rescanInterval)) s (network and FUSE libraries)")
        line("positionSaveInterval", "\(ConfigObject.format(settings.positionSaveInterval)) s")
        line(
            "renditionCacheFolder",
            StateDirectory.renditionCacheFolder(settings: settings)
                ?? "none (photos refused for memory are skipped)")
        line(
            "headerCacheFolder",
            StateDirectory.headerCacheFolder(settings: settings) ?? "none (headers are read again at every start)")
        for warning in warnings { console.out("  warning: \(warning)\n") }
        return valid
    }

    /// The `placesFile` line: the index found (checked record by record) and its attribution, or that there is
    /// none and `{place}` stays empty. An index that cannot be read makes the config invalid: the player would run
    /// without place names.
    private func checkPlaces(
        _ settings: Settings, file: String, line: (String, String, Bool?) -> Void, warnings: inout [String]
    ) -> Bool {
        let usesPlace = settings.caption.template.uses(.place)
        guard let path = PlaceIndex.path(settings: settings) else {
            let looked =
                settings.placesFile == nil
                ? "none found (looked for \(PlaceIndex.installedPaths().joined(separator: ", ")))" : "none"
            line("placesFile", looked + ": {place} stays empty", nil)
            if usesPlace { warnings.append("caption uses {place}, but there is no place index: it stays empty") }
            return true
        }
        do {
            let index = try PlaceIndex.load(path: path)
            try index.validate()
            line(
                "placesFile",
                "\(path): \(index.placeCount) places, \(index.regionCount) regions, \(index.countryCount) countries"
                    + (usesPlace ? "" : " (the caption has no {place})"), nil)
            console.out("    \(index.attribution)\n")
            return true
        } catch {
            line("placesFile", path, nil)
            console.error("\(file): placesFile: \(error)\n")
            return false
        }
    }

    /// `family: webdav https://cloud.example.com/... into Family, every 900 s, login from family.login`.
    static func sourceLine(_ source: SourceSettings) -> String {
        var text = "\(source.name): \(source.kind.rawValue) \(source.location)"
        if let token = source.shareToken { text += " (the share link \(token))" }
        switch source.filing {
        case .category(let category): text += " into \(category)"
        case .subfolders: text += " into one category per subfolder (photos at the top into \(source.name))"
        }
        text += ", every \(ConfigObject.format(source.interval)) s"
        text += source.credentialsFile.map { ", login from \($0)" } ?? ", no login"
        if let caFile = source.caFile { text += ", CA \(caFile)" }
        if let limit = source.bandwidthKiBps { text += ", at most \(limit) KiB/s" }
        if let limit = source.cacheLimitMiB { text += ", cache at most \(limit) MiB" }
        return text
    }

    /// What would stop the source's sync before it reaches the server: its login file, its CA file.
    static func sourceProblem(_ source: SourceSettings) -> String? {
        do {
            _ = try SyncEngine.login(for: source)
        } catch {
            return error.description
        }
        if let caFile = source.caFile, (try? FileBytes.read(caFile, limit: 1 << 20)) == nil {
            return "caFile \(caFile) cannot be read"
        }
        return nil
    }

    /// `clock 14:05 (HH:mm), date 2 December 2026, 1 text, top-right, 6 % of the picture's height, shadow`.
    static func overlayLine(_ settings: Settings) -> String {
        guard let overlay = settings.overlay else { return "off (no clock, date or texts over the photos)" }
        let locale = settings.locale ?? DateStyle.processDefault()
        let now = LocalTime.now()
        var parts: [String] = []
        if let clock = overlay.clock.format(locale: locale) {
            parts.append("clock \(clock.format(now)) (\(clock.pattern))")
        }
        if overlay.date, let date = ClockMachine(settings: .init(date: locale)).lines(at: now).first {
            parts.append("date \(date)")
        }
        if !overlay.texts.isEmpty { parts.append("\(overlay.texts.count) text(s) from MQTT") }
        if parts.isEmpty { parts.append("nothing to show") }
        return parts.joined(separator: ", ")
            + ", \(overlay.corner.rawValue), \(ConfigObject.format(overlay.size * 100)) % of the picture's height, "
            + overlay.look.rawValue
    }

    /// A device table has profiles; anything else is read as player settings.
    static func isDeviceTable(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value.kind else { return false }
        return members.contains { $0.key == "profiles" }
    }

    /// The top-level keys the file itself sets (not null), to tell settings from defaults.
    static func writtenKeys(_ file: String) -> Set<String> {
        guard let text = try? FileBytes.readText(file), let value = try? JSONParser.parse(text),
            case .object(let members) = value.kind
        else { return [] }
        return Set(members.filter { $0.value.kind != .null }.map(\.key))
    }
}
