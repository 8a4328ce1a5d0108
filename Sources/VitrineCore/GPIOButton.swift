/// A push button on a GPIO line (`gpio.buttons` in `vitrine.json`): the line, its action and long-press action
/// (the same actions keys have), and its debounce time.
public struct GPIOButton: Sendable, Equatable {
    public var line: GPIOLine
    public var binding: ButtonMachine.Binding
    public var debounceSeconds: Double

    public init(line: GPIOLine, binding: ButtonMachine.Binding, debounceSeconds: Double = GPIOButton.defaultDebounce) {
        self.line = line
        self.binding = binding
        self.debounceSeconds = debounceSeconds
    }

    /// Contacts of the tactile switches frames use bounce for a few milliseconds; 20 ms settles them without a
    /// delay anyone notices.
    public static let defaultDebounce = 0.02
    public static let defaultLongPress = 1.0
    /// A button wired from the pin to ground, with the SoC's pull-up: the usual way, and the Pi's header
    /// documentation's.
    public static let defaultLine = GPIOLine(bias: .pullUp, activeLow: true)
    public static let sectionKeyNames = ["buttons", "debounceMs", "longPressSeconds"]
    public static let buttonKeyNames = ["action", "longPress", "debounceMs"]

    /// Reads the `gpio` section: its buttons and the long-press time they share.
    static func parseSection(_ object: ConfigObject) throws(ConfigError) -> (
        buttons: [GPIOButton], longPressSeconds: Double
    ) {
        try object.rejectUnknownKeys(allowed: sectionKeyNames)
        let debounce = (try object.number("debounceMs", in: 0...1000) ?? defaultDebounce * 1000) / 1000
        let longPress = try object.number("longPressSeconds", in: 0.2...30) ?? defaultLongPress
        var buttons: [GPIOButton] = []
        for (index, element) in (try object.array("buttons") ?? []).enumerated() {
            let button = try ConfigObject(element, file: object.file, path: "\(object.childPath("buttons"))[\(index)]")
            let line = try GPIOLine.parse(button, defaults: defaultLine, otherKeys: buttonKeyNames)
            guard let action = try button.choice("action", as: KeyMap.Action.self) else {
                throw button.failure("action", "missing (expected one of the key actions, e.g. \"next\")")
            }
            let long = try button.choice("longPress", as: KeyMap.Action.self)
            let own = try button.number("debounceMs", in: 0...1000).map { $0 / 1000 }
            if let earlier = buttons.firstIndex(where: { $0.line.sameLine(as: line) }) {
                throw button.failure(
                    button["line"] != nil ? "line" : "offset",
                    "\(line) is already button \(earlier + 1)'s line")
            }
            buttons.append(
                GPIOButton(
                    line: line, binding: .init(action: action, longAction: long), debounceSeconds: own ?? debounce))
        }
        return (buttons, longPress)
    }
}

extension GPIOLine {
    /// Whether two configured lines are the same pin as written (by name, or by chip and offset).
    func sameLine(as other: GPIOLine) -> Bool {
        name != nil ? name == other.name && chip == other.chip : chip == other.chip && offset == other.offset
    }
}
