/// One line of the control protocol (`vitrine ctl`, the control socket).
public enum ControlCommand: Equatable, Sendable {
    public enum CategoryTarget: Equatable, Sendable {
        case next, previous
        case named(String)
        /// 1-based position in the category list (keys 1 to 9).
        case number(Int)
    }

    case next, previous, pause, resume, toggle, status
    /// Read the config file again (as SIGHUP does).
    case reload
    case category(CategoryTarget)
    case first
    /// Screen power: off blanks the output and holds the timer; on brings the picture back.
    case screen(on: Bool)
    /// Seconds each slide stays, from the next slide on, until the next reload or restart.
    case interval(Double)
    /// A new access token for the web remote: every paired phone must pair again.
    case rotateToken
    /// Star (true), unstar (false) or toggle (nil) the photo on screen as a favourite; both photos of a pair.
    case favourite(Bool?)

    /// Longer lines are refused: no command comes near this, and a client must not make the player buffer much.
    public static let maximumLineBytes = 1024

    public static let usage =
        "next, prev, pause, resume, toggle, first, category NAME|next|prev, screen on|off, interval SECONDS, status, "
        + "reload, token rotate, favourite [on|off|toggle]"
    /// The seconds `interval` takes, as the config file's `interval`.
    public static let intervalRange = 0.05...86400.0

    /// Why `parse` refused `line`, for the answer: what the command takes when the word is known.
    public static func refusal(_ line: String) -> String {
        let trimmed = line.trimmingWhitespace()
        let word = String(trimmed.prefix { $0 != " " })
        let shown = trimmed.count > 40 ? String(trimmed.prefix(40)) + "..." : trimmed
        let takes: String
        switch word {
        case "interval": takes = "interval takes seconds from 0.05 to 86400, e.g. interval 12.5"
        case "screen": takes = "screen takes on or off"
        case "category":
            takes =
                "category takes a name, next or prev; a name in JSON quotes is taken as it is, e.g. category \"next\""
        case "token": takes = "token takes rotate"
        case "favourite", "favorite": takes = "favourite takes on, off, toggle or nothing (toggle)"
        case "next", "prev", "previous", "pause", "resume", "toggle", "status", "reload", "first":
            takes = "\(word) takes nothing after it"
        default: return "unknown command \(JSONText.quote(shown)) (commands: \(usage))"
        }
        return "\(JSONText.quote(shown)): \(takes)"
    }

    public static func parse(_ line: String) -> ControlCommand? {
        let trimmed = line.trimmingWhitespace()
        let word = trimmed.prefix { $0 != " " }
        let rest = trimmed.dropFirst(word.count).trimmingWhitespace()
        switch (word, rest.isEmpty) {
        case ("next", true): return .next
        case ("prev", true), ("previous", true): return .previous
        case ("pause", true): return .pause
        case ("resume", true): return .resume
        case ("toggle", true): return .toggle
        case ("status", true): return .status
        case ("reload", true): return .reload
        case ("first", true): return .first
        case ("token", false) where rest == "rotate": return .rotateToken
        case ("favourite", _), ("favorite", _):
            switch rest {
            case "", "toggle": return .favourite(nil)
            case "on": return .favourite(true)
            case "off": return .favourite(false)
            default: return nil
            }
        case ("screen", false) where rest == "on": return .screen(on: true)
        case ("screen", false) where rest == "off": return .screen(on: false)
        case ("interval", false):
            guard let seconds = Double(rest), seconds.isFinite, intervalRange.contains(seconds) else { return nil }
            return .interval(seconds)
        case ("category", false):
            // A name in JSON quotes is that name exactly: the library root's own photos (""), a folder called
            // next, one with spaces at its ends, or quotes inside.
            if rest.hasPrefix("\"") {
                guard case .string(let name)? = (try? JSONParser.parse(rest))?.kind else { return nil }
                return .category(.named(name))
            }
            switch rest {
            case "next": return .category(.next)
            case "prev", "previous": return .category(.previous)
            default: return .category(.named(rest))
            }
        default: return nil
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing white space.
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[start...end]))
    }
}
