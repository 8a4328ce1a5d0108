/// Player settings (`Config/vitrine.json`). Every key is optional; relative paths are taken from the config file's
/// folder, so a checkout's `Config/vitrine.json` finds the sample library beside it.
public struct Settings: Sendable, Equatable {
    public var library = "sample-library"
    public var deviceTable = "devices.json"
    /// The config file named `deviceTable` itself (else the default `devices.json` beside it is used only when it is
    /// there, and the built-in table otherwise).
    public var deviceTableIsSet = false
    /// Seconds each slide stays on screen.
    public var interval: Double = 10
    public var order = PlaybackOrder.name
    /// What `shuffle` draws from: shares for on this day, favourites, recent photos and the rest.
    public var mix = SelectionMix.plain
    /// Photos rated lower (XMP `xmp:Rating`; unrated counts as 0) are left out; nil shows every photo.
    public var minRating: Int?
    /// Photos rated this many stars or more are favourites (besides those starred on the frame).
    public var favouriteRating = 4
    /// `playlists`: day-parts for signage; nil: none.
    public var dayParts: DayParts?
    /// Where stars given on the frame are kept; nil means `$STATE_DIRECTORY/favourites.txt` under systemd (else
    /// none: stars last until the player stops), "" means never.
    public var favouritesFile: String?
    /// Overrides the device profile's fit when set.
    public var fit: Fit?
    public var background = RGBColor.black
    public var startCategory: String?
    /// Seconds the show holds after a touch or key before it moves on by itself.
    public var pauseOnInput: Double = 30
    /// Overrides the device profile's memory budget when set.
    public var memoryBudgetMiB: Int?
    /// Photos above this many megapixels are refused before anything is allocated for them.
    public var maxMegapixels: Double = 1000
    /// Photos with a colour profile (ICC, or a HEIF/AVIF nclx description) are converted to sRGB; off shows their
    /// numbers as if they were sRGB.
    public var colorManagement = true
    public var display = DisplaySelection()
    /// Control socket path; nil means `$XDG_RUNTIME_DIR/vitrine.sock`, else `/run/vitrine/vitrine.sock`.
    public var controlSocket: String?
    public var keys = KeyMap.defaults
    /// A daily time the screen goes off and one it comes back on, local time.
    public var screenSchedule: ScreenSchedule?
    /// The TrueType font for on-screen text; nil means DejaVu Sans from fonts-dejavu-core.
    public var fontPath: String?
    /// Overrides the device profile's transition when set.
    public var transition: Transition?
    /// Overrides the device profile's crossfade length when set.
    public var transitionSeconds: Double?
    /// On a landscape panel, two portrait photos in a row share the screen as one slide.
    public var pairPortraits = false
    /// Where renditions of photos refused for memory are made in the background (mirroring the library's
    /// folders); nil means `$STATE_DIRECTORY/renditions` under systemd (else none), "" means none.
    public var renditionCacheFolder: String?
    /// What each photo's caption says and where; `locale` nil means the date style of `$LC_ALL`/`$LC_TIME`/`$LANG`.
    public var caption = CaptionStyle()
    public var locale: DateStyle?
    /// The place index `{place}` captions are looked up in; nil means the installed one (see
    /// `PlaceIndex.installedPaths`), "" means none.
    public var placesFile: String?
    /// A Prometheus textfile the player keeps up to date (for node_exporter's textfile collector); nil for none.
    public var metricsFile: String?
    /// Seconds between rewrites of `metricsFile`.
    public var metricsInterval: Double = 15
    /// Where the slide on screen is kept for a restart; nil means `$STATE_DIRECTORY/position.json` under systemd
    /// (else none), "" means never.
    public var positionFile: String?
    /// Seconds between saves of the position while the show goes on (an SD card wears with every write); it is
    /// always saved at exit.
    public var positionSaveInterval: Double = 1800
    /// Seconds between reads of a library on a network or FUSE filesystem, which sends no inotify events for
    /// changes made elsewhere.
    public var rescanInterval: Double = 300
    /// Where capture dates and photo sizes are kept across restarts (a file per category); nil means
    /// `$STATE_DIRECTORY/headers` under systemd (else none), "" means never.
    public var headerCacheFolder: String?
    /// Push buttons on GPIO lines, and the time a press is held to be a long press.
    public var buttons: [GPIOButton] = []
    public var longPressSeconds = GPIOButton.defaultLongPress
    /// The motion sensor and the empty-room timeout; nil: the screen never goes off for an empty room.
    public var presence: PresenceSettings?
    /// The MQTT broker for Home Assistant and fleets; nil: no MQTT.
    public var mqtt: MQTTSettings?
    /// HDMI-CEC to the TV; nil: the player does not speak CEC.
    public var cec: CECSettings?
    /// The clock, the date and MQTT texts over the picture; nil: none.
    public var overlay: OverlaySettings?
    /// How clips play (`video`).
    public var video = VideoSettings()
    /// The web remote; nil: no HTTP server.
    public var web: WebSettings?
    /// Remote folders mirrored into the library (WebDAV, SMB).
    public var sources: [SourceSettings] = []
    /// The screens a board drives, each with its own show (or, with `mirror`, one show on all); empty: one screen,
    /// `display`'s.
    public var outputs: [OutputSettings] = []
    /// One show on every connected screen (those `outputs` names, else all), each at its own resolution.
    public var mirror = false
    /// Turns the picture for a panel mounted sideways, over the device table's (an output's `rotation`).
    public var rotation: Rotation?
    /// Only these categories of the library are shown (an output's `categories`); nil: all.
    public var categories: [String]?

    public init() {}

    public static let keyNames = [
        "library", "deviceTable", "interval", "order", "fit", "background", "startCategory", "pauseOnInput",
        "memoryBudgetMiB", "maxMegapixels", "colorManagement", "display", "controlSocket", "keys", "screenSchedule",
        "fontPath", "placesFile",
        "transition", "transitionSeconds", "pairPortraits", "caption", "captionPosition", "captionSize", "locale",
        "metricsFile", "metricsInterval", "positionFile", "positionSaveInterval", "rescanInterval",
        "headerCacheFolder", "renditionCacheFolder", "gpio", "presence", "mqtt", "cec", "web", "overlay",
        "sources", "mix", "minRating", "favouriteRating", "favouritesFile", "playlists", "playlistHold", "video",
        "outputs", "mirror",
    ]
    public static let displayKeyNames = ["backend", "device", "connector", "mode", "headlessSize", "vtSwitching"]

    /// These settings with their relative paths taken against `base`, the config file's folder.
    public func resolvingPaths(relativeTo base: String) -> Settings {
        var settings = self
        settings.library = PathText.resolve(settings.library, relativeTo: base)
        settings.deviceTable = PathText.resolve(settings.deviceTable, relativeTo: base)
        settings.controlSocket = settings.controlSocket.map { PathText.resolve($0, relativeTo: base) }
        settings.fontPath = settings.fontPath.map { PathText.resolve($0, relativeTo: base) }
        settings.placesFile = settings.placesFile.map { $0.isEmpty ? $0 : PathText.resolve($0, relativeTo: base) }
        settings.metricsFile = settings.metricsFile.map { PathText.resolve($0, relativeTo: base) }
        settings.positionFile = settings.positionFile.map { $0.isEmpty ? $0 : PathText.resolve($0, relativeTo: base) }
        settings.favouritesFile = settings.favouritesFile.map {
            $0.isEmpty ? $0 : PathText.resolve($0, relativeTo: base)
        }
        settings.headerCacheFolder = settings.headerCacheFolder.map {
            $0.isEmpty ? $0 : PathText.resolve($0, relativeTo: base)
        }
        settings.renditionCacheFolder = settings.renditionCacheFolder.map {
            $0.isEmpty ? $0 : PathText.resolve($0, relativeTo: base)
        }
        settings.mqtt = settings.mqtt?.resolved(relativeTo: base)
        settings.web = settings.web?.resolved(relativeTo: base)
        settings.sources = settings.sources.map { $0.resolved(relativeTo: base) }
        settings.outputs = settings.outputs.map { output in
            var output = output
            output.library = output.library.map { PathText.resolve($0, relativeTo: base) }
            return output
        }

        return settings
    }

    /// The settings one output's show plays with: these, with what the output says differently.
    public func forOutput(_ output: OutputSettings) -> Settings {
        var settings = self
        settings.outputs = []
        settings.mirror = false
        settings.display.connector = output.connector
        settings.display.mode = output.mode ?? display.mode
        settings.rotation = output.rotation ?? rotation
        settings.library = output.library ?? library
        settings.categories = output.categories
        settings.startCategory = output.startCategory ?? startCategory
        settings.interval = output.interval ?? interval
        settings.order = output.order ?? order
        settings.fit = output.fit ?? fit
        settings.background = output.background ?? background
        settings.transition = output.transition ?? transition
        settings.transitionSeconds = output.transitionSeconds ?? transitionSeconds
        if let overlay = output.overlay { settings.overlay = overlay }
        if let schedule = output.screenSchedule { settings.screenSchedule = schedule }
        return settings
    }

    public static func parse(_ text: String, file: String) throws(ConfigError) -> Settings {
        let root: JSONValue
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw ConfigError(file: file, line: error.line, path: "", message: "invalid JSON: \(error.message)")
        }
        let object = try ConfigObject(root, file: file, path: "")
        try object.rejectUnknownKeys(allowed: keyNames)
        var settings = Settings()
        if let library = try object.string("library") {
            guard !library.isEmpty else { throw object.failure("library", "must not be empty") }
            settings.library = library
        }
        if let table = try object.string("deviceTable") {
            guard !table.isEmpty else { throw object.failure("deviceTable", "must not be empty") }
            settings.deviceTable = table
            settings.deviceTableIsSet = true
        }
        settings.interval = try object.number("interval", in: 0.05...86400) ?? settings.interval
        let order = try object.choice("order", as: PlaybackOrder.self)
        settings.order = order ?? settings.order
        if let mix = try object.object("mix") {
            settings.mix = try SelectionMix.parse(mix)
            // A mix is what shuffle draws from: it makes the order shuffle unless another order is asked for.
            guard order == nil || order == .shuffle else {
                throw object.failure(
                    "mix", "a mix is for \"order\": \"shuffle\" (the order here is \"\(settings.order.rawValue)\")")
            }
            settings.order = .shuffle
        }
        settings.minRating = try object.integer("minRating", in: -1...5)
        settings.favouriteRating = try object.integer("favouriteRating", in: 1...5) ?? settings.favouriteRating
        if let favourites = try object.string("favouritesFile") {
            guard !favourites.hasSuffix("/") else {
                throw object.failure(
                    "favouritesFile", "\"\(favourites)\" is not a file path (expected e.g. favourites.txt)")
            }
            settings.favouritesFile = favourites
        }
        settings.fit = try object.choice("fit", as: Fit.self)
        settings.background = try object.color("background") ?? settings.background
        settings.startCategory = try object.string("startCategory")
        settings.pauseOnInput = try object.number("pauseOnInput", in: 0...86400) ?? settings.pauseOnInput
        settings.memoryBudgetMiB = try object.integer("memoryBudgetMiB", in: 8...65536)
        settings.maxMegapixels = try object.number("maxMegapixels", in: 0.01...1000) ?? settings.maxMegapixels
        settings.colorManagement = try object.bool("colorManagement") ?? settings.colorManagement
        if let display = try object.object("display") {
            settings.display = try parseDisplay(display)
        }
        settings.controlSocket = try object.string("controlSocket")
        settings.fontPath = try object.string("fontPath")
        settings.transition = try object.choice("transition", as: Transition.self)
        settings.transitionSeconds = try object.number("transitionSeconds", in: 0.05...10)
        settings.pairPortraits = try object.bool("pairPortraits") ?? false
        settings.renditionCacheFolder = try object.string("renditionCacheFolder") ?? settings.renditionCacheFolder
        if let caption = try object.string("caption") {
            do {
                settings.caption.template = try CaptionTemplate(parsing: caption)
            } catch {
                throw object.failure("caption", error.message)
            }
        }
        settings.caption.position =
            try object.choice("captionPosition", as: CaptionStyle.Position.self) ?? settings.caption.position
        settings.caption.size = try object.number("captionSize", in: 0.01...0.25) ?? settings.caption.size
        settings.locale = try object.choice("locale", as: DateStyle.self)
        if let places = try object.string("placesFile") {
            guard !places.hasSuffix("/") else {
                throw object.failure(
                    "placesFile", "\"\(places)\" is not a file path (expected e.g. places.vgeo, or \"\" for none)")
            }
            settings.placesFile = places
        }
        if let metrics = try object.string("metricsFile") {
            guard !metrics.isEmpty, !metrics.hasSuffix("/") else {
                throw object.failure("metricsFile", "\"\(metrics)\" is not a file path (expected e.g. vitrine.prom)")
            }
            settings.metricsFile = metrics
        }
        settings.metricsInterval = try object.number("metricsInterval", in: 1...3600) ?? settings.metricsInterval
        settings.rescanInterval = try object.number("rescanInterval", in: 1...86400) ?? settings.rescanInterval
        settings.positionSaveInterval =
            try object.number("positionSaveInterval", in: 1...86400) ?? settings.positionSaveInterval
        if let position = try object.string("positionFile") {
            guard !position.hasSuffix("/") else {
                throw object.failure("positionFile", "\"\(position)\" is not a file path (expected e.g. position.json)")
            }
            settings.positionFile = position
        }
        settings.headerCacheFolder = try object.string("headerCacheFolder") ?? settings.headerCacheFolder
        if let keys = try object.object("keys") {
            settings.keys = try KeyMap.parse(keys)
        }
        if let gpio = try object.object("gpio") {
            (settings.buttons, settings.longPressSeconds) = try GPIOButton.parseSection(gpio)
        }
        if let presence = try object.object("presence") {
            settings.presence = try PresenceSettings.parse(presence)
        }
        if let cec = try object.object("cec") {
            settings.cec = try CECSettings.parse(cec)
        }
        let overlaySection = try object.object("overlay")
        if let overlaySection {
            settings.overlay = try OverlaySettings.parse(overlaySection)
        }
        if let web = try object.object("web") {
            settings.web = try WebSettings.parse(web)
        }
        if let video = try object.object("video") {
            settings.video = try VideoSettings.parse(video)
        }
        if let sources = try object.array("sources") {
            settings.sources = try SourceSettings.parseList(sources, file: file)
        }
        if let mqtt = try object.object("mqtt") {
            settings.mqtt = try MQTTSettings.parse(mqtt)
        }
        if let overlaySection, settings.overlay?.texts.isEmpty == false, settings.mqtt == nil {
            throw overlaySection.failure(
                "texts", "the texts come from MQTT topics: add an mqtt section naming the broker")
        }
        let hold = try object.number("playlistHold", in: 1...1440)
        if let playlists = try object.array("playlists") {
            settings.dayParts = try DayParts.parse(playlists, hold: hold, file: file)
        } else if hold != nil {
            throw object.failure("playlistHold", "holds the playlists off, and there are none (add \"playlists\")")
        }
        if let schedule = try object.object("screenSchedule") {
            settings.screenSchedule = try ScreenSchedule.parse(schedule)
        }
        settings.mirror = try object.bool("mirror") ?? false
        if let outputs = try object.array("outputs") {
            settings.outputs = try OutputSettings.parseList(
                outputs, mirror: settings.mirror, file: file, listPath: object)
            if settings.display.connector != nil, let display = try object.object("display") {
                throw display.failure(
                    "connector", "the screens are named in \"outputs\" (one \"connector\" each); leave this one out")
            }
        }
        return settings
    }

    private static func parseDisplay(_ object: ConfigObject) throws(ConfigError) -> DisplaySelection {
        try object.rejectUnknownKeys(allowed: displayKeyNames)
        var display = DisplaySelection()
        display.backend = try object.choice("backend", as: DisplaySelection.Backend.self) ?? .auto
        display.device = try object.string("device")
        if let device = display.device, !device.hasPrefix("/dev/") {
            throw object.failure("device", "\"\(device)\" is not a device path (expected e.g. /dev/dri/card0)")
        }
        display.connector = try object.string("connector")
        display.mode = try object.mode("mode")
        display.headlessSize = try object.size("headlessSize") ?? display.headlessSize
        display.vtSwitching = try object.bool("vtSwitching") ?? true
        return display
    }
}
