/// What a transport or topic may ask of the player. Steering changes what is shown (next, category, pause,
/// screen, interval) and reads the state; administration changes access or configuration (a new web token, a
/// reload). Which transport has which is the user's choice in the config file; anyone who can publish on a fleet
/// topic should not be able to log every phone out.
public enum CommandAuthority: String, Sendable, Equatable, CaseIterable, Comparable {
    /// Nothing: every command is refused.
    case none
    /// Steering and `status`.
    case steer
    /// Everything, administration included.
    case admin

    public static func < (left: CommandAuthority, right: CommandAuthority) -> Bool {
        allCases.firstIndex(of: left) ?? 0 < allCases.firstIndex(of: right) ?? 0
    }

    /// Whether a transport with this authority may send `command`.
    public func permits(_ command: ControlCommand) -> Bool { self >= command.authorityNeeded }
}

extension ControlCommand {
    /// The authority a transport needs to send this command.
    public var authorityNeeded: CommandAuthority {
        switch self {
        case .reload, .rotateToken: return .admin
        case .next, .previous, .pause, .resume, .toggle, .status, .category, .first, .screen, .interval, .favourite:
            return .steer
        }
    }

    /// The command's first word, for messages.
    public var word: String {
        switch self {
        case .next: return "next"
        case .previous: return "prev"
        case .pause: return "pause"
        case .resume: return "resume"
        case .toggle: return "toggle"
        case .status: return "status"
        case .reload: return "reload"
        case .category: return "category"
        case .first: return "first"
        case .screen: return "screen"
        case .interval: return "interval"
        case .rotateToken: return "token rotate"
        case .favourite: return "favourite"
        }
    }
}
