import VitrineCore
import VitrineRuntime

/// Minimal JSON output for `--json` (keys in the given order, strings escaped per RFC 8259).
enum JSONWriter {
    enum Value {
        case string(String)
        case number(Int)
        /// Written with at most three decimals.
        case decimal(Double)
        case bool(Bool)
        case null
        case object([(String, Value)])
        case array([Value])
    }

    static func write(_ value: Value, indent: String = "") -> String {
        switch value {
        case .string(let text): return quote(text)
        case .number(let number): return String(number)
        case .decimal(let number): return JSONText.number(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        case .array(let elements):
            if elements.isEmpty { return "[]" }
            let inner = indent + "  "
            return "[\n" + elements.map { inner + write($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            let inner = indent + "  "
            let body = members.map { "\(inner)\(quote($0.0)): \(write($0.1, indent: inner))" }
            return "{\n" + body.joined(separator: ",\n") + "\n\(indent)}"
        }
    }

    static func quote(_ text: String) -> String { JSONText.quote(text) }
}
