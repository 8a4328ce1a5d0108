/// "Natural" ordering of names, as people expect in a photo folder: `img2` before `img10`, case ignored.
public enum NaturalOrder {
    public static func less(_ lhs: String, _ rhs: String) -> Bool {
        // Sorting a 100,000-photo folder makes about two million comparisons: names that are all ASCII (nearly
        // every camera's and phone's) are compared byte by byte without allocating.
        if let ascii = asciiLess(lhs.utf8, rhs.utf8) { return ascii }
        return scalarLess(lhs, rhs)
    }

    /// The same order for two names given as UTF-8 bytes (a packed catalog's).
    public static func less(bytes lhs: ArraySlice<UInt8>, _ rhs: ArraySlice<UInt8>) -> Bool {
        if let ascii = asciiLess(lhs, rhs) { return ascii }
        return scalarLess(String(decoding: lhs, as: UTF8.self), String(decoding: rhs, as: UTF8.self))
    }

    /// The same order for two ASCII names; nil when either is not ASCII.
    private static func asciiLess<Bytes: Collection<UInt8>>(_ lhs: Bytes, _ rhs: Bytes) -> Bool? {
        var left = lhs.startIndex
        var right = rhs.startIndex
        while left != lhs.endIndex, right != rhs.endIndex {
            let first = lhs[left]
            let second = rhs[right]
            if first >= 0x80 || second >= 0x80 { return nil }
            if isDigit(first), isDigit(second) {
                var leftEnd = left
                var rightEnd = right
                while leftEnd != lhs.endIndex, isDigit(lhs[leftEnd]) { lhs.formIndex(after: &leftEnd) }
                while rightEnd != rhs.endIndex, isDigit(rhs[rightEnd]) { rhs.formIndex(after: &rightEnd) }
                var leftNumber = left
                var rightNumber = right
                while leftNumber != leftEnd, lhs[leftNumber] == UInt8(ascii: "0") { lhs.formIndex(after: &leftNumber) }
                while rightNumber != rightEnd, rhs[rightNumber] == UInt8(ascii: "0") {
                    rhs.formIndex(after: &rightNumber)
                }
                let leftCount = lhs.distance(from: leftNumber, to: leftEnd)
                let rightCount = rhs.distance(from: rightNumber, to: rightEnd)
                if leftCount != rightCount { return leftCount < rightCount }
                while leftNumber != leftEnd {
                    if lhs[leftNumber] != rhs[rightNumber] { return lhs[leftNumber] < rhs[rightNumber] }
                    lhs.formIndex(after: &leftNumber)
                    rhs.formIndex(after: &rightNumber)
                }
                left = leftEnd
                right = rightEnd
                continue
            }
            let lowerFirst = lowercased(first)
            let lowerSecond = lowercased(second)
            if lowerFirst != lowerSecond { return lowerFirst < lowerSecond }
            lhs.formIndex(after: &left)
            rhs.formIndex(after: &right)
        }
        // The rest of the longer name must be ASCII too for the answer to be this path's.
        for byte in lhs[left...] where byte >= 0x80 { return nil }
        for byte in rhs[right...] where byte >= 0x80 { return nil }
        if (left == lhs.endIndex) != (right == rhs.endIndex) { return left == lhs.endIndex }
        return lhs.lexicographicallyPrecedes(rhs)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// The order on Unicode scalars of the lowercased names, for names that are not all ASCII (and the reference
    /// the ASCII path is tested against).
    static func scalarLess(_ lhs: String, _ rhs: String) -> Bool {
        var left = Array(lhs.lowercased().unicodeScalars)[...]
        var right = Array(rhs.lowercased().unicodeScalars)[...]
        while let first = left.first, let second = right.first {
            if first.properties.numericType != nil, second.properties.numericType != nil,
                first.isASCII, second.isASCII
            {
                let leftDigits = left.prefix { $0.isASCII && $0.properties.numericType != nil }
                let rightDigits = right.prefix { $0.isASCII && $0.properties.numericType != nil }
                let leftNumber = leftDigits.drop { $0 == "0" }
                let rightNumber = rightDigits.drop { $0 == "0" }
                if leftNumber.count != rightNumber.count { return leftNumber.count < rightNumber.count }
                if !leftNumber.elementsEqual(rightNumber) {
                    return leftNumber.lexicographicallyPrecedes(rightNumber) { $0.value < $1.value }
                }
                left = left.dropFirst(leftDigits.count)
                right = right.dropFirst(rightDigits.count)
                continue
            }
            if first != second { return first.value < second.value }
            left = left.dropFirst()
            right = right.dropFirst()
        }
        if left.isEmpty != right.isEmpty { return left.isEmpty }
        return lhs < rhs
    }
}
