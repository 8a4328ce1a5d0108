/// One screen's show where a board drives several (`outputs`: a Raspberry Pi 4 or 5 has two HDMI ports): the
/// connector it plays on and what its show does differently from the config's top level. What is not said here is
/// the top level's.
public struct OutputSettings: Sendable, Equatable {
    /// How commands address the output (`ctl --output NAME`, MQTT, the web remote): `name`, else the connector's.
    public var name: String
    /// A connector's name (`HDMI-A-1`, `HDMI-A-2`, `DSI-1`) or a screen's EDID monitor name.
    public var connector: String
    /// `WxH` or `WxH@Hz`; nil: the device table's choice for the screen.
    public var mode: String?
    /// Turns the picture for a panel mounted sideways; nil: the device table's.
    public var rotation: Rotation?
    /// The keyboard (and touchscreens mapped to no screen) steer this show alone; when no output says so, every
    /// show. A touchscreen mapped to a screen (udev's `WL_OUTPUT`) steers that screen's show whatever this says.
    public var keyboard = false
    public var library: String?
    /// Only these categories of the library are shown there; nil: all of them.
    public var categories: [String]?
    public var startCategory: String?
    public var interval: Double?
    public var order: PlaybackOrder?
    public var fit: Fit?
    public var background: RGBColor?
    public var transition: Transition?
    public var transitionSeconds: Double?
    /// The corner's clock and texts there: `.some(nil)` for none (`"overlay": false`), nil: the top level's.
    public var overlay: OverlaySettings??
    /// `.some(nil)` for a screen that never goes off by the clock (`"screenSchedule": false`), nil: the top level's.
    public var screenSchedule: ScreenSchedule??

    public init(name: String, connector: String) {
        self.name = name
        self.connector = connector
    }

    /// Keys that place a screen; the rest shape its show, which a mirror shares.
    public static let placeKeyNames = ["name", "connector", "mode", "rotation", "keyboard"]
    public static let showKeyNames = [
        "library", "categories", "startCategory", "interval", "order", "fit", "background", "transition",
        "transitionSeconds", "overlay", "screenSchedule",
    ]

    /// The `outputs` list; with `mirror` each entry only places a screen (one show goes to all of them).
    static func parseList(_ elements: [JSONValue], mirror: Bool, file: String, listPath: ConfigObject)
        throws(ConfigError) -> [OutputSettings]
    {
        guard !elements.isEmpty else {
            throw listPath.failure("outputs", "is empty (name one screen or more, or leave \"outputs\" out)")
        }
        var outputs: [OutputSettings] = []
        for (index, element) in elements.enumerated() {
            let object = try ConfigObject(element, file: file, path: "outputs[\(index)]")
            if mirror, let key = showKeyNames.first(where: { object[$0].map { $0.kind != .null } ?? false }) {
                throw object.failure(
                    key, "a mirror shows one show on every screen: \"\(key)\" belongs at the top level")
            }
            let output = try parse(object)
            if outputs.contains(where: { $0.connector == output.connector }) {
                throw object.failure(
                    "connector", "\"\(output.connector)\" is another output's screen too (one show per screen)")
            }
            if outputs.contains(where: { $0.name == output.name }) {
                throw object.failure(
                    object["name"] == nil ? "connector" : "name",
                    "\"\(output.name)\" names another output too; give each its own name")
            }
            if output.keyboard, outputs.contains(where: \.keyboard) {
                throw object.failure("keyboard", "another output takes the keyboard already (one may)")
            }
            outputs.append(output)
        }
        return outputs
    }

    static func parse(_ object: ConfigObject) throws(ConfigError) -> OutputSettings {
        try object.rejectUnknownKeys(allowed: placeKeyNames + showKeyNames)
        let connector = try object.requiredString("connector")
        guard !connector.isEmpty else {
            throw object.failure("connector", "must not be empty (expected e.g. \"HDMI-A-1\")")
        }
        let name = try object.string("name") ?? connector
        guard !name.isEmpty, !name.contains(where: { $0 == " " || $0 == "/" || $0 == "#" || $0 == "+" }) else {
            throw object.failure(
                "name",
                "\"\(name)\" cannot address an output (no spaces, \"/\", \"#\" or \"+\": it is an MQTT topic level)")
        }
        var output = OutputSettings(name: name, connector: connector)
        output.mode = try object.mode("mode")
        if let degrees = try object.integer("rotation", in: 0...270) {
            guard let rotation = Rotation(rawValue: degrees) else {
                throw object.failure("rotation", "\(degrees) is not a turn (expected 0, 90, 180 or 270)")
            }
            output.rotation = rotation
        }
        output.keyboard = try object.bool("keyboard") ?? false
        if let library = try object.string("library") {
            guard !library.isEmpty else { throw object.failure("library", "must not be empty") }
            output.library = library
        }
        if let categories = try object.stringList("categories") {
            guard !categories.isEmpty, !categories.contains(where: \.isEmpty) else {
                throw object.failure("categories", "names no category (expected e.g. [\"Menu\", \"Offers\"])")
            }
            output.categories = categories
        }
        output.startCategory = try object.string("startCategory")
        output.interval = try object.number("interval", in: 0.05...86400)
        output.order = try object.choice("order", as: PlaybackOrder.self)
        output.fit = try object.choice("fit", as: Fit.self)
        output.background = try object.color("background")
        output.transition = try object.choice("transition", as: Transition.self)
        output.transitionSeconds = try object.number("transitionSeconds", in: 0.05...10)
        if object["overlay"] != nil {
            if try object.offSwitch("overlay") {
                output.overlay = .some(nil)
            } else if let overlay = try object.object("overlay") {
                output.overlay = .some(try OverlaySettings.parse(overlay))
            }
        }
        if object["screenSchedule"] != nil {
            if try object.offSwitch("screenSchedule") {
                output.screenSchedule = .some(nil)
            } else if let schedule = try object.object("screenSchedule") {
                output.screenSchedule = .some(try ScreenSchedule.parse(schedule))
            }
        }
        if let start = output.startCategory, let categories = output.categories, !categories.contains(start) {
            throw object.failure("startCategory", "\"\(start)\" is not among this output's categories")
        }
        return output
    }
}

extension ConfigObject {
    /// Whether `key` is `false` (a section turned off for one output); true is refused, an object is left to the
    /// caller.
    fileprivate func offSwitch(_ key: String) throws(ConfigError) -> Bool {
        guard let value = self[key], case .bool(let on) = value.kind else { return false }
        guard !on else { throw failure(key, "true says nothing here (expected false, or the section itself)") }
        return true
    }
}
