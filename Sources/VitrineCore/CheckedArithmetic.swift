/// Sizes computed from numbers a file declares. A crafted file can declare anything (a PNG up to 2^31 on a side),
/// and Swift traps on overflow: a size that does not fit is `Int.max` instead, which every budget and limit
/// refuses with a message, so no file can stop the player.
extension Int {
    /// `self * other`, or `Int.max` when it does not fit (both are sizes, never negative).
    public func saturatingTimes(_ other: Int) -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow || product < 0 ? .max : product
    }

    /// `self + other`, or `Int.max` when it does not fit.
    public func saturatingPlus(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// The product of sizes, or `Int.max` when it does not fit.
    public static func saturatingProduct(_ factors: Int...) -> Int {
        factors.reduce(1) { $0.saturatingTimes($1) }
    }

    /// The sum of sizes, or `Int.max` when it does not fit.
    public static func saturatingSum(_ terms: Int...) -> Int {
        terms.reduce(0) { $0.saturatingPlus($1) }
    }
}
