/// The few functions of real numbers Core needs, written out: Core may not import the C library, and a result that
/// depends only on IEEE arithmetic is the same on every machine, so a draw order saved on one board replays on another.
enum SmallMath {
    static let ln2 = 0.693_147_180_559_945_309_4

    /// The natural logarithm of a positive finite number (−infinity for 0): the exponent's share plus
    /// 2·atanh((m−1)/(m+1)) for the mantissa m in [1, 2), whose series converges in a few dozen terms.
    static func log(_ value: Double) -> Double {
        guard value > 0 else { return value == 0 ? -Double.infinity : Double.nan }
        guard value.isFinite else { return value }
        let exponent = Double(value.exponent)
        let mantissa = value.significand
        let z = (mantissa - 1) / (mantissa + 1)
        let square = z * z
        var term = z
        var sum = 0.0
        var denominator = 1.0
        while true {
            let next = sum + term / denominator
            if next == sum { break }
            sum = next
            term *= square
            denominator += 2
        }
        return exponent * ln2 + 2 * sum
    }
}
