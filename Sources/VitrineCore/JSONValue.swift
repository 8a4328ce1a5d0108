/// A parsed JSON value that remembers where it stood in its file, so configuration errors can name the line.
public struct JSONValue: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONValue])
        /// Members in file order; duplicates are rejected by the parser.
        case object([(key: String, value: JSONValue)])

        public static func == (lhs: Kind, rhs: Kind) -> Bool {
            switch (lhs, rhs) {
            case (.null, .null): return true
            case (.bool(let a), .bool(let b)): return a == b
            case (.number(let a), .number(let b)): return a == b
            case (.string(let a), .string(let b)): return a == b
            case (.array(let a), .array(let b)): return a == b
            case (.object(let a), .object(let b)):
                return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            default: return false
            }
        }
    }

    public var kind: Kind
    public var line: Int
    public var column: Int

    public init(_ kind: Kind, line: Int, column: Int) {
        self.kind = kind
        self.line = line
        self.column = column
    }

    /// The JSON type name used in error messages.
    public var typeName: String {
        switch kind {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
