/// "Natural" ordering of names, as people expect in a photo folder: `img2` before `img10`, case ignored.
public enum NaturalOrder {
    public static func less(_ lhs: String, _ rhs: String) -> Bool {
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
