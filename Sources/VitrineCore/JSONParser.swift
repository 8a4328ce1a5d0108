/// A small strict JSON parser (RFC 8259) that records line and column for every value.
///
/// FoundationEssentials' decoder reports neither the line nor a path a person can act on, and config errors must
/// name both, so Vitrine reads its JSON with this instead.
public struct JSONParser {
    public struct SyntaxError: Error, Equatable, Sendable {
        public var message: String
        public var line: Int
        public var column: Int
    }

    /// Nesting beyond this is refused rather than risking deep recursion on hostile input.
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    public static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8))
        return try parser.parseDocument()
    }

    public static func parse(bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseDocument()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var column: Int { index - lineStart + 1 }

    private func error(_ message: String) -> SyntaxError {
        SyntaxError(message: message, line: line, column: column)
    }

    private mutating func parseDocument() throws(SyntaxError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if index < bytes.count {
            throw error("unexpected text after the end of the JSON document")
        }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D:
                index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(SyntaxError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        guard index < bytes.count else { throw error("unexpected end of file, expected a value") }
        let startLine = line
        let startColumn = column
        let kind: JSONValue.Kind
        switch bytes[index] {
        case UInt8(ascii: "{"): kind = try parseObject(depth: depth)
        case UInt8(ascii: "["): kind = try parseArray(depth: depth)
        case UInt8(ascii: "\""): kind = .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); kind = .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); kind = .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); kind = .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): kind = .number(try parseNumber())
        default:
            throw error("unexpected character '\(Self.printable(bytes[index]))', expected a value")
        }
        return JSONValue(kind, line: startLine, column: startColumn)
    }

    private static func printable(_ byte: UInt8) -> String {
        (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\u{\(String(byte, radix: 16))}"
    }

    private mutating func expectLiteral(_ literal: String) throws(SyntaxError) {
        for expected in literal.utf8 {
            guard index < bytes.count, bytes[index] == expected else {
                throw error("invalid literal, expected '\(literal)'")
            }
            index += 1
        }
    }

    private mutating func parseObject(depth: Int) throws(SyntaxError) -> JSONValue.Kind {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a quoted key")
            }
            let keyLine = line
            let keyColumn = column
            let key = try parseString()
            if members.contains(where: { $0.key == key }) {
                throw SyntaxError(message: "duplicate key \"\(key)\"", line: keyLine, column: keyColumn)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file inside an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            throw error("expected ',' or '}' in an object")
        }
    }

    private mutating func parseArray(depth: Int) throws(SyntaxError) -> JSONValue.Kind {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file inside an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            throw error("expected ',' or ']' in an array")
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var pendingUTF8: [UInt8] = []
        func flush() {
            if !pendingUTF8.isEmpty {
                scalars.append(contentsOf: String(decoding: pendingUTF8, as: UTF8.self).unicodeScalars)
                pendingUTF8.removeAll(keepingCapacity: true)
            }
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate in \\u escape") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    scalars.append(scalar)
                default:
                    throw error("invalid escape '\\\(Self.printable(escape))'")
                }
            case 0x00..<0x20:
                throw error("control character in string (use an escape)")
            default:
                pendingUTF8.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(SyntaxError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        guard index < bytes.count else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw error("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits() == 0 { throw error("invalid number: digits expected after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            if digits() == 0 { throw error("invalid number: digits expected in exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw error("number out of range") }
        return value
    }
}
