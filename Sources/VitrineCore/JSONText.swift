/// JSON text for the player's own output lines (status, state over MQTT, discovery payloads).
public enum JSONText {
    public static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let digits = Array("0123456789abcdef")
                result += "\\u00" + String([digits[Int(scalar.value >> 4)], digits[Int(scalar.value & 15)]])
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A number with at most three decimals.
    public static func number(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let sign = thousandths < 0 ? "-" : ""
        let magnitude = abs(thousandths)
        return "\(sign)\(magnitude / 1000).\(String(magnitude % 1000).leftPadded(to: 3))"
    }
}

extension String {
    /// The text padded with zeros in front to `width` characters.
    public func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
