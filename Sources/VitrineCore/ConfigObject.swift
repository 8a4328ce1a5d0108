/// Typed, validating access to one JSON object of a configuration file. Every failure becomes a `ConfigError` that
/// names the file, the line of the offending value and its key path.
public struct ConfigObject: Sendable {
    public let file: String
    public let path: String
    public let value: JSONValue
    private let members: [(key: String, value: JSONValue)]

    public init(_ value: JSONValue, file: String, path: String) throws(ConfigError) {
        guard case .object(let members) = value.kind else {
            throw ConfigError(
                file: file, line: value.line, path: path, message: "expected an object, found \(value.typeName)")
        }
        self.file = file
        self.path = path
        self.value = value
        self.members = members
    }

    public var keys: [String] { members.map(\.key) }

    public func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    public func failure(_ key: String, _ message: String) -> ConfigError {
        ConfigError(file: file, line: self[key]?.line ?? value.line, path: childPath(key), message: message)
    }

    public subscript(key: String) -> JSONValue? { members.first { $0.key == key }?.value }

    /// Refuses keys the loader does not know, which are nearly always typos that would otherwise be ignored.
    public func rejectUnknownKeys(allowed: [String]) throws(ConfigError) {
        for member in members where !allowed.contains(member.key) {
            let expected = allowed.joined(separator: ", ")
            throw ConfigError(
                file: file, line: member.value.line, path: childPath(member.key),
                message: "unknown key (expected one of: \(expected))")
        }
    }

    private func present(_ key: String, required: Bool) throws(ConfigError) -> JSONValue? {
        guard let found = self[key], found.kind != .null else {
            if required { throw ConfigError(file: file, line: value.line, path: childPath(key), message: "missing") }
            return nil
        }
        return found
    }

    private func typeError(_ key: String, _ found: JSONValue, expected: String) -> ConfigError {
        ConfigError(
            file: file, line: found.line, path: childPath(key), message: "expected \(expected), found \(found.typeName)"
        )
    }

    public func string(_ key: String, required: Bool = false) throws(ConfigError) -> String? {
        guard let found = try present(key, required: required) else { return nil }
        guard case .string(let text) = found.kind else { throw typeError(key, found, expected: "a string") }
        return text
    }

    public func requiredString(_ key: String) throws(ConfigError) -> String {
        guard let text = try string(key, required: true) else { throw failure(key, "missing") }
        return text
    }

    public func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let found = try present(key, required: false) else { return nil }
        guard case .bool(let flag) = found.kind else { throw typeError(key, found, expected: "true or false") }
        return flag
    }

    public func number(_ key: String, in range: ClosedRange<Double>, required: Bool = false) throws(ConfigError)
        -> Double?
    {
        guard let found = try present(key, required: required) else { return nil }
        guard case .number(let number) = found.kind else { throw typeError(key, found, expected: "a number") }
        guard range.contains(number) else {
            throw ConfigError(
                file: file, line: found.line, path: childPath(key),
                message: "\(Self.format(number)) is out of range (expected \(Self.format(range.lowerBound))"
                    + "...\(Self.format(range.upperBound)))")
        }
        return number
    }

    public func integer(_ key: String, in range: ClosedRange<Int>, required: Bool = false) throws(ConfigError) -> Int? {
        guard let found = try present(key, required: required) else { return nil }
        guard case .number(let number) = found.kind, number.rounded() == number, abs(number) < 1e15 else {
            throw typeError(key, found, expected: "an integer")
        }
        guard range.contains(Int(number)) else {
            throw ConfigError(
                file: file, line: found.line, path: childPath(key),
                message: "\(Int(number)) is out of range (expected \(range.lowerBound)...\(range.upperBound))")
        }
        return Int(number)
    }

    public func size(_ key: String, required: Bool = false) throws(ConfigError) -> Size? {
        guard let text = try string(key, required: required) else { return nil }
        guard let size = Size(parsing: text) else {
            throw failure(
                key, "\"\(text)\" is not a size (expected WIDTHxHEIGHT, each 1...\(Size.maximumSide), e.g. 800x480)")
        }
        return size
    }

    public func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, as type: Choice.Type)
        throws(ConfigError) -> Choice? where Choice.RawValue == String
    {
        guard let text = try string(key) else { return nil }
        guard let choice = Choice(rawValue: text) else {
            let allowed = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw failure(key, "\"\(text)\" is not allowed (expected one of: \(allowed))")
        }
        return choice
    }

    public func object(_ key: String, required: Bool = false) throws(ConfigError) -> ConfigObject? {
        guard let found = try present(key, required: required) else { return nil }
        return try ConfigObject(found, file: file, path: childPath(key))
    }

    public func array(_ key: String, required: Bool = false) throws(ConfigError) -> [JSONValue]? {
        guard let found = try present(key, required: required) else { return nil }
        guard case .array(let elements) = found.kind else { throw typeError(key, found, expected: "an array") }
        return elements
    }

    /// A string or an array of strings; a single string is read as a one-element list.
    public func stringList(_ key: String) throws(ConfigError) -> [String]? {
        guard let found = try present(key, required: false) else { return nil }
        switch found.kind {
        case .string(let text):
            return [text]
        case .array(let elements):
            var strings: [String] = []
            for (index, element) in elements.enumerated() {
                guard case .string(let text) = element.kind else {
                    throw ConfigError(
                        file: file, line: element.line, path: "\(childPath(key))[\(index)]",
                        message: "expected a string, found \(element.typeName)")
                }
                strings.append(text)
            }
            return strings
        default:
            throw typeError(key, found, expected: "a string or an array of strings")
        }
    }

    /// An `RRGGBB` colour.
    public func color(_ key: String) throws(ConfigError) -> RGBColor? {
        guard let text = try string(key) else { return nil }
        guard let color = RGBColor(parsing: text) else {
            throw failure(key, "\"\(text)\" is not a colour (expected RRGGBB, e.g. 000000)")
        }
        return color
    }

    /// A `WxH` or `WxH@Hz` mode, as written.
    public func mode(_ key: String) throws(ConfigError) -> String? {
        guard let text = try string(key) else { return nil }
        guard DisplaySelection.isValidMode(text) else {
            throw failure(key, "\"\(text)\" is not a mode (expected WxH or WxH@Hz, e.g. 1920x1080@60)")
        }
        return text
    }

    public static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}
