/// How the clock overlay writes the time: a pattern of `HH` (00-23), `H` (0-23), `hh` (01-12), `h` (1-12), `mm`
/// (00-59) and `a` (AM/PM); anything else is written as it is, and text in single quotes too. The default follows
/// the locale: 12-hour with AM/PM for American English, 24-hour elsewhere.
public struct ClockFormat: Sendable, Equatable {
    enum Part: Sendable, Equatable {
        case hour24(padded: Bool)
        case hour12(padded: Bool)
        case minute
        case meridiem
        case text(String)
    }

    let parts: [Part]
    public let pattern: String

    public init?(_ pattern: String) {
        var parts: [Part] = []
        var characters = Array(pattern)[...]
        var literal = ""
        func flush() {
            if !literal.isEmpty { parts.append(.text(literal)) }
            literal = ""
        }
        while let character = characters.popFirst() {
            switch character {
            case "H", "h":
                flush()
                let padded = characters.first == character
                if padded { characters.removeFirst() }
                if characters.first == character { return nil }
                parts.append(character == "H" ? .hour24(padded: padded) : .hour12(padded: padded))
            case "m":
                guard characters.popFirst() == "m", characters.first != "m" else { return nil }
                flush()
                parts.append(.minute)
            case "a":
                flush()
                parts.append(.meridiem)
            case "'":
                guard let end = characters.firstIndex(of: "'") else { return nil }
                literal += String(characters[..<end])
                characters = characters[(end + 1)...]
            default:
                literal.append(character)
            }
        }
        flush()
        guard parts.contains(where: { if case .text = $0 { return false } else { return true } }) else { return nil }
        self.parts = parts
        self.pattern = pattern
    }

    public static func `default`(for style: DateStyle) -> ClockFormat {
        style == .americanEnglish
            ? ClockFormat(
                parts: [.hour12(padded: false), .text(":"), .minute, .text(" "), .meridiem], pattern: "h:mm a")
            : ClockFormat(parts: [.hour24(padded: true), .text(":"), .minute], pattern: "HH:mm")
    }

    private init(parts: [Part], pattern: String) {
        self.parts = parts
        self.pattern = pattern
    }

    public func format(_ time: LocalTime) -> String {
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let twelve = time.hour % 12 == 0 ? 12 : time.hour % 12
        return parts.map { part in
            switch part {
            case .hour24(let padded): return padded ? pad(time.hour) : "\(time.hour)"
            case .hour12(let padded): return padded ? pad(twelve) : "\(twelve)"
            case .minute: return pad(time.minute)
            case .meridiem: return time.hour < 12 ? "AM" : "PM"
            case .text(let text): return text
            }
        }.joined()
    }
}
