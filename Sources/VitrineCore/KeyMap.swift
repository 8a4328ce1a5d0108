/// Which keys trigger which player actions (`keys` in `vitrine.json`).
public struct KeyMap: Sendable, Equatable {
    public enum Action: String, Sendable, CaseIterable {
        case next, previous, pause, nextCategory, previousCategory, firstSlide, quit
        /// Show the category and slide name (long press).
        case info
        /// Turn the screen off, or on again.
        case screen
        case category1, category2, category3, category4, category5, category6, category7, category8, category9

        /// 1...9 for the category keys.
        public var categoryNumber: Int? {
            guard rawValue.hasPrefix("category"), let number = Int(rawValue.dropFirst("category".count)) else {
                return nil
            }
            return number
        }
    }

    /// Key names as libinput reports them, without the `KEY_` prefix and in the case written here.
    public static let knownKeys: Set<String> = {
        var names: Set<String> = [
            "Right", "Left", "Up", "Down", "PageUp", "PageDown", "Home", "End", "Enter", "KeypadEnter", "Space",
            "Escape", "Backspace", "Tab", "Insert", "Delete", "NextSong", "PreviousSong", "PlayPause", "Play",
            "Pause", "Stop", "FastForward", "Rewind", "Select", "OK", "Back", "Menu", "Info", "ChannelUp",
            "ChannelDown", "Red", "Green", "Yellow", "Blue", "Power", "Sleep",
        ]
        for letter in UnicodeScalar("A").value...UnicodeScalar("Z").value {
            names.insert(String(Character(UnicodeScalar(letter) ?? "A")))
        }
        for digit in 0...9 { names.insert(String(digit)) }
        for function in 1...12 { names.insert("F\(function)") }
        return names
    }()

    public var bindings: [Action: [String]]

    public static let defaults = KeyMap(bindings: [
        // OK, Pause and the channel keys are a TV remote's, over HDMI-CEC.
        .next: ["Right", "PageDown", "Enter", "NextSong", "OK"],
        .previous: ["Left", "PageUp", "PreviousSong"],
        .pause: ["Space", "P", "PlayPause", "Pause"],
        .nextCategory: ["Down", "ChannelUp"],
        .previousCategory: ["Up", "ChannelDown"],
        .firstSlide: ["Home"],
        .info: ["I", "Info"],
        .screen: [],
        // A kiosk must not be closable from a keyboard unless its owner asks for it.
        .quit: [],
        .category1: ["1"], .category2: ["2"], .category3: ["3"], .category4: ["4"], .category5: ["5"],
        .category6: ["6"], .category7: ["7"], .category8: ["8"], .category9: ["9"],
    ])

    public init(bindings: [Action: [String]]) {
        self.bindings = bindings
    }

    public func action(forKey key: String) -> Action? {
        Action.allCases.first { bindings[$0]?.contains(key) ?? false }
    }

    /// Reads `keys`: each action present replaces that action's default keys.
    static func parse(_ object: ConfigObject) throws(ConfigError) -> KeyMap {
        try object.rejectUnknownKeys(allowed: Action.allCases.map(\.rawValue))
        var map = KeyMap.defaults
        for action in Action.allCases {
            guard let keys = try object.stringList(action.rawValue) else { continue }
            for key in keys where !knownKeys.contains(key) {
                throw object.failure(
                    action.rawValue, "unknown key name \"\(key)\" (examples: Right, PageDown, Space, P, 1, NextSong)")
            }
            map.bindings[action] = keys
        }
        var owner: [String: Action] = [:]
        for action in Action.allCases {
            for key in map.bindings[action] ?? [] {
                if let other = owner[key], other != action {
                    throw object.failure(
                        action.rawValue,
                        "key \"\(key)\" is bound to both \"\(other.rawValue)\" and \"\(action.rawValue)\"")
                }
                owner[key] = action
            }
        }
        return map
    }
}
