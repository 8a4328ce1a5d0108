/// One GPIO line as the config names it: by the line's name (`GPIO17`, as Raspberry Pi OS names its header
/// pins), optionally on a given chip, or by chip and offset. A chip is its device name (`gpiochip0`) or its label
/// (`pinctrl-bcm2835` on a Pi 4, `pinctrl-rp1` on a Pi 5, whose chip number changes between kernels).
public struct GPIOLine: Sendable, Equatable, CustomStringConvertible {
    public enum Bias: String, Sendable, CaseIterable {
        /// Leave the pin's bias as the firmware or device tree set it.
        case asIs = "as-is"
        case disabled
        case pullUp = "pull-up"
        case pullDown = "pull-down"
    }

    public var chip: String?
    public var offset: Int?
    public var name: String?
    public var bias: Bias
    /// The line reads low when active: a button wired to ground with a pull-up.
    public var activeLow: Bool

    public init(
        chip: String? = nil, offset: Int? = nil, name: String? = nil, bias: Bias = .asIs, activeLow: Bool = false
    ) {
        self.chip = chip
        self.offset = offset
        self.name = name
        self.bias = bias
        self.activeLow = activeLow
    }

    public static let keyNames = ["line", "chip", "offset", "bias", "activeLow"]
    /// gpiolib numbers a chip's lines with 16 bits (`ngpio` is a u16).
    static let largestOffset = 65535

    public var description: String {
        switch (name, chip, offset) {
        case (let name?, let chip?, _): return "\(name) on \(chip)"
        case (let name?, nil, _): return name
        case (nil, let chip?, let offset?): return "\(chip) line \(offset)"
        default: return "(no line)"
        }
    }

    /// Reads a line object; `defaults` gives the bias and polarity when the object does not (buttons are usually
    /// wired to ground with a pull-up, a PIR sensor drives its output).
    static func parse(_ object: ConfigObject, defaults: GPIOLine, otherKeys: [String] = []) throws(ConfigError)
        -> GPIOLine
    {
        try object.rejectUnknownKeys(allowed: keyNames + otherKeys)
        var line = defaults
        line.name = try object.string("line")
        line.chip = try object.string("chip")
        line.offset = try object.integer("offset", in: 0...largestOffset)
        if let name = line.name, name.isEmpty { throw object.failure("line", "must not be empty") }
        if let chip = line.chip, chip.isEmpty || chip.contains("/") && !chip.hasPrefix("/dev/") {
            throw object.failure("chip", "\"\(chip)\" is not a chip (expected e.g. gpiochip0 or pinctrl-bcm2835)")
        }
        switch (line.name, line.chip, line.offset) {
        case (_?, _, nil): break
        case (nil, _?, _?): break
        case (_?, _, _?):
            throw object.failure("offset", "give a line's name or its offset on a chip, not both")
        case (nil, nil, _?):
            throw object.failure("offset", "an offset needs the chip it is on (e.g. \"chip\": \"gpiochip0\")")
        case (nil, _, nil):
            throw ConfigError(
                file: object.file, line: object.value.line, path: object.path,
                message: "names no line (expected \"line\": \"GPIO17\", or \"chip\" and \"offset\")")
        }
        line.bias = try object.choice("bias", as: Bias.self) ?? defaults.bias
        line.activeLow = try object.bool("activeLow") ?? defaults.activeLow
        return line
    }
}
