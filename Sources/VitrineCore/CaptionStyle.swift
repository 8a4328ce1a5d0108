/// The line of text drawn over each photo: what it says, where, how large, and how dates are written.
public struct CaptionStyle: Sendable, Equatable {
    public enum Position: String, Sendable, CaseIterable {
        case topLeft = "top-left"
        case topCenter = "top-center"
        case topRight = "top-right"
        case bottomLeft = "bottom-left"
        case bottomCenter = "bottom-center"
        case bottomRight = "bottom-right"
    }

    public var template: CaptionTemplate
    public var position: Position
    /// Text height as a fraction of the picture's shorter side.
    public var size: Double
    public var locale: DateStyle

    public init(
        template: CaptionTemplate = .none, position: Position = .bottomRight, size: Double = 0.045,
        locale: DateStyle = .english
    ) {
        self.template = template
        self.position = position
        self.size = size
        self.locale = locale
    }

    /// The caption of one photo, or nil when there is nothing to say (no token of the template has a value).
    /// `name` is the slide name, of which a folder prefix is not part of what the viewer reads; `place` is where it
    /// was taken ("Lyon, France"), `age` how long ago ("3 years ago today"), each nil when unknown.
    public func text(name: String, exifDate: String?, place: String? = nil, age: String? = nil) -> String? {
        let shortName = name.split(separator: "/").last.map(String.init) ?? name
        let date = exifDate.flatMap { locale.format(exifDate: $0) }
        return template.fill { token in
            switch token {
            case .date: return date
            case .name: return shortName
            case .place: return place
            case .age: return age
            }
        }
    }
}

/// What a caption says: text with `{date}`, `{name}`, `{place}` and `{age}` in it, e.g. `{date} · {place}`. The
/// keywords of earlier versions are templates too: `date`, `name`, `date+name` (`{date} · {name}`) and `none`.
///
/// A token without a value is left out together with the separator before it (after it, for the first token
/// shown), so `{date} · {place}` reads "3 May 2020" for a photo without a position and "Lyon, France" for one
/// without a date, never with a dangling " · ". The text before the first token and after the last is kept
/// whenever anything is shown; with no token filled there is no caption.
public struct CaptionTemplate: Sendable, Equatable, CustomStringConvertible {
    public enum Token: String, Sendable, CaseIterable {
        case date, name, place, age
    }

    /// A template that cannot be read, with what is wrong.
    public struct Failure: Error, Equatable, Sendable {
        public var message: String

        public init(message: String) {
            self.message = message
        }
    }

    /// The keywords and the templates they stand for.
    public static let keywords: [(keyword: String, template: String)] = [
        ("none", ""), ("date", "{date}"), ("name", "{name}"), ("date+name", "{date} · {name}"),
    ]

    public static let none = CaptionTemplate(text: "none", literals: [""], tokens: [])
    public static let date = CaptionTemplate(text: "date", literals: ["", ""], tokens: [.date])
    public static let name = CaptionTemplate(text: "name", literals: ["", ""], tokens: [.name])
    public static let dateAndName = CaptionTemplate(
        text: "date+name", literals: ["", " · ", ""], tokens: [.date, .name])

    /// As written in the config or on the command line.
    public let text: String
    /// The text around the tokens: one more than there are tokens (before the first, between, after the last).
    let literals: [String]
    let tokens: [Token]

    private init(text: String, literals: [String], tokens: [Token]) {
        self.text = text
        self.literals = literals
        self.tokens = tokens
    }

    /// A keyword, else a template: braces only around one of the tokens, and at least one token (text with none is
    /// almost always a mistyped keyword, which would otherwise be written over every photo).
    public init(parsing text: String) throws(Failure) {
        if let keyword = Self.keywords.first(where: { $0.keyword == text }) {
            let template = try CaptionTemplate(parsing: keyword.template, as: text)
            self = template
            return
        }
        guard !text.isEmpty else { throw Failure(message: "must not be empty (\"none\" for no caption)") }
        self = try CaptionTemplate(parsing: text, as: text)
        guard !tokens.isEmpty else {
            let keywords = Self.keywords.map { "\"\($0.keyword)\"" }.joined(separator: ", ")
            throw Failure(
                message:
                    "\"\(text)\" is neither a keyword (\(keywords)) nor a template with a token (\(Self.tokenList))")
        }
    }

    private init(parsing template: String, as text: String) throws(Failure) {
        var literals = [""]
        var tokens: [Token] = []
        var rest = Substring(template)
        while let character = rest.first {
            rest = rest.dropFirst()
            switch character {
            case "{":
                guard let close = rest.firstIndex(of: "}"), !rest[..<close].contains("{") else {
                    throw Failure(message: "\"\(template)\" has a { without its } (tokens: \(Self.tokenList))")
                }
                let word = String(rest[..<close])
                guard let token = Token(rawValue: word) else {
                    throw Failure(message: "unknown token {\(word)} in \"\(template)\" (expected \(Self.tokenList))")
                }
                tokens.append(token)
                literals.append("")
                rest = rest[rest.index(after: close)...]
            case "}":
                throw Failure(message: "\"\(template)\" has a } without its { (tokens: \(Self.tokenList))")
            default:
                literals[literals.count - 1].append(character)
            }
        }
        self.init(text: text, literals: literals, tokens: tokens)
    }

    static let tokenList = "{date}, {name}, {place} or {age}"

    public var description: String { text }

    /// Whether the caption can say anything at all (`none` cannot).
    public var showsAnything: Bool { !tokens.isEmpty }

    public func uses(_ token: Token) -> Bool { tokens.contains(token) }

    /// The template with each token's value (nil or empty: left out, see above); nil when none has one.
    public func fill(_ value: (Token) -> String?) -> String? {
        var result = ""
        var shown = false
        for (index, token) in tokens.enumerated() {
            guard let text = value(token), !text.isEmpty else { continue }
            result += shown ? literals[index] : literals[0]
            result += text
            shown = true
        }
        return shown ? result + literals[literals.count - 1] : nil
    }
}
