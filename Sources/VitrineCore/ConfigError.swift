/// A configuration file that cannot be used, with enough detail for a person to fix it: the file, the line, the key
/// path (with the profile's index and id inside the device table) and what was expected.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var path: String
    public var message: String

    public init(file: String, line: Int?, path: String, message: String) {
        self.file = file
        self.line = line
        self.path = path
        self.message = message
    }

    public var description: String {
        let location = line.map { "\(file):\($0)" } ?? file
        return path.isEmpty ? "\(location): \(message)" : "\(location): \(path): \(message)"
    }
}
