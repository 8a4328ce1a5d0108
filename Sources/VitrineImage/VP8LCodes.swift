import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why a lossless WebP bitstream cannot be decoded.
package struct VP8LError: Error {
    package var message: String
    package init(_ message: String) { self.message = message }
}

/// The bits of a VP8L bitstream, least significant first (RFC 9649, 3.2), read from the file 64 KiB at a time so
/// the coded data is never held whole. Past the end of the data it gives zeros and counts them: a decode that used
/// any is a truncated file. A value passed `inout` through the decode, so its hot fields live in registers.
struct VP8LBitReader {
    /// The file buffer, freed with the last copy of the reader.
    final class Storage {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: VP8LBitReader.bufferBytes)
        deinit { bytes.deallocate() }
    }

    private let storage = Storage()
    private let buffer: UnsafeMutablePointer<UInt8>
    private let descriptor: Int32
    private var next: Int
    private let end: Int
    private var bufferCount = 0
    private var bufferPosition = 0
    private var bits: UInt64 = 0
    private var count = 0
    /// Zero bits supplied past the end of the data (some may be unused when the decode stops).
    private var padding = 0
    private(set) var readFailure: Int32 = 0

    static let bufferBytes = 64 << 10

    /// Reads the bytes `range` of the file `descriptor`.
    init(descriptor: Int32, range: Range<Int>) {
        self.descriptor = descriptor
        next = range.lowerBound
        end = range.upperBound
        buffer = storage.bytes
    }

    /// Whether the decode has used bits past the end of the data.
    var overran: Bool { padding > count }

    private mutating func refill() {
        bufferPosition = 0
        bufferCount = 0
        while next < end {
            let wanted = min(Self.bufferBytes, end - next)
            let got = pread(descriptor, buffer, wanted, off_t(next))
            if got < 0 && errno == EINTR { continue }
            if got <= 0 {
                readFailure = got < 0 ? errno : 0
                next = end
                padding += 1 << 40
                return
            }
            next += got
            bufferCount = got
            return
        }
    }

    @inline(__always) private mutating func fill() {
        if bufferCount - bufferPosition >= 8 {
            // Eight bytes at once; only the whole bytes that fit above the bits held are taken.
            let word = UInt64(
                littleEndian: UnsafeRawPointer(buffer + bufferPosition).loadUnaligned(as: UInt64.self))
            bits |= word << UInt64(count)
            let taken = (63 - count) >> 3
            bufferPosition += taken
            count += taken * 8
            return
        }
        while count <= 56 {
            if bufferPosition == bufferCount { refill() }
            if bufferPosition < bufferCount {
                bits |= UInt64(buffer[bufferPosition]) << UInt64(count)
                bufferPosition += 1
            } else {
                padding += 8
            }
            count += 8
        }
    }

    /// The next `n` bits (n <= 32).
    @inline(__always) mutating func read(_ n: Int) -> Int {
        if count < n { fill() }
        let value = Int(truncatingIfNeeded: bits & ((1 << UInt64(n)) - 1))
        bits >>= UInt64(n)
        count -= n
        return value
    }

    /// The next 15 bits without using them (a prefix code's longest).
    @inline(__always) mutating func peek15() -> Int {
        if count < 15 { fill() }
        return Int(truncatingIfNeeded: bits & 0x7FFF)
    }

    @inline(__always) mutating func skip(_ n: Int) {
        bits >>= UInt64(n)
        count -= n
    }
}

/// One canonical prefix code (RFC 9649, 3.7.2) as a table: the next 8 bits index the root, and a code longer than 8
/// bits links to a second-level table for the rest, as zlib and libwebp do.
struct VP8LPrefixCode {
    /// Low 16 bits: the symbol (or a second-level table's offset); bits 16 to 23: the code's length (or the second
    /// level's index bits); bit 31: a link.
    private var table: [UInt32]

    private static let link: UInt32 = 1 << 31

    /// The code whose lengths (0: unused) are `lengths`; nil when they do not make a complete code. A single used
    /// symbol is a code of no bits.
    init?(lengths: [UInt8]) {
        var counts = [Int](repeating: 0, count: 16)
        var used = 0
        var only = 0
        for (symbol, length) in lengths.enumerated() where length > 0 {
            guard length <= 15 else { return nil }
            counts[Int(length)] += 1
            used += 1
            only = symbol
        }
        guard used > 0 else { return nil }
        if used == 1 {
            table = [UInt32](repeating: UInt32(only), count: 256)
            return
        }
        var left = 1
        for length in 1...15 {
            left = left * 2 - counts[length]
            guard left >= 0 else { return nil }
        }
        guard left == 0 else { return nil }
        var nextCode = [Int](repeating: 0, count: 16)
        var code = 0
        for length in 1...15 {
            code = (code + counts[length - 1]) << 1
            nextCode[length] = code
        }
        // Each symbol's code, bit-reversed: the bitstream gives a code's first bit first.
        var reversed = [Int](repeating: 0, count: lengths.count)
        var longest = [Int](repeating: 0, count: 256)
        for (symbol, length) in lengths.enumerated() where length > 0 {
            let length = Int(length)
            var value = nextCode[length]
            nextCode[length] += 1
            var flipped = 0
            for _ in 0..<length {
                flipped = flipped << 1 | value & 1
                value >>= 1
            }
            reversed[symbol] = flipped
            if length > 8 { longest[flipped & 0xFF] = max(longest[flipped & 0xFF], length) }
        }
        var table = [UInt32](repeating: 0, count: 256)
        var offsets = [Int](repeating: 0, count: 256)
        for root in 0..<256 where longest[root] > 8 {
            let extra = longest[root] - 8
            offsets[root] = table.count
            table[root] = Self.link | UInt32(extra) << 16 | UInt32(table.count)
            table += [UInt32](repeating: 0, count: 1 << extra)
        }
        for (symbol, length) in lengths.enumerated() where length > 0 {
            let length = Int(length)
            let code = reversed[symbol]
            let entry = UInt32(length) << 16 | UInt32(symbol)
            if length <= 8 {
                for index in stride(from: code, to: 256, by: 1 << length) { table[index] = entry }
            } else {
                let root = code & 0xFF
                let extra = longest[root] - 8
                for index in stride(from: code >> 8, to: 1 << extra, by: 1 << (length - 8)) {
                    table[offsets[root] + index] = entry
                }
            }
        }
        self.table = table
    }

    /// The next symbol.
    @inline(__always) func decode(_ reader: inout VP8LBitReader) -> Int {
        table.withUnsafeBufferPointer { Self.decode($0.baseAddress.unsafelyUnwrapped, &reader) }
    }

    /// The next symbol of the code whose table starts at `table` (as `copy(into:)` put it there).
    @inline(__always) static func decode(_ table: UnsafePointer<UInt32>, _ reader: inout VP8LBitReader) -> Int {
        let bits = reader.peek15()
        var entry = table[bits & 0xFF]
        if entry & link != 0 {
            let extra = Int(entry >> 16 & 0xFF)
            entry = table[Int(entry & 0xFFFF) + (bits >> 8 & ((1 << extra) - 1))]
        }
        reader.skip(Int(entry >> 16 & 0xFF))
        return Int(entry & 0xFFFF)
    }

    /// Entries held, for the memory the codes take.
    var entryCount: Int { table.count }

    /// Copies the table to `destination` (`entryCount` entries), where `decode(_:_:)` reads it without the
    /// reference counting an array in a loop costs.
    func copy(into destination: UnsafeMutablePointer<UInt32>) {
        table.withUnsafeBufferPointer { destination.update(from: $0.baseAddress.unsafelyUnwrapped, count: $0.count) }
    }

    /// Reads a prefix code for an alphabet of `size` symbols (RFC 9649, 3.7.2.1: simple and normal codes).
    static func read(_ reader: inout VP8LBitReader, alphabet size: Int) throws(VP8LError) -> VP8LPrefixCode {
        var lengths = [UInt8](repeating: 0, count: size)
        if reader.read(1) == 1 {
            let symbols = reader.read(1) + 1
            let first = reader.read(reader.read(1) == 1 ? 8 : 1)
            guard first < size else { throw VP8LError("a simple prefix code names symbol \(first) of \(size)") }
            lengths[first] = 1
            if symbols == 2 {
                let second = reader.read(8)
                guard second < size else { throw VP8LError("a simple prefix code names symbol \(second) of \(size)") }
                lengths[second] = 1
            }
        } else {
            let order = [17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
            var codeLengthLengths = [UInt8](repeating: 0, count: 19)
            for index in 0..<reader.read(4) + 4 { codeLengthLengths[order[index]] = UInt8(reader.read(3)) }
            guard let lengthCode = VP8LPrefixCode(lengths: codeLengthLengths) else {
                throw VP8LError("the code length code is not a prefix code")
            }
            var remaining = size
            if reader.read(1) == 1 {
                remaining = 2 + reader.read(2 + 2 * reader.read(3))
                guard remaining <= size else { throw VP8LError("a prefix code with \(remaining) of \(size) symbols") }
            }
            var symbol = 0
            var previous: UInt8 = 8
            while symbol < size && remaining > 0 {
                remaining -= 1
                let length = lengthCode.decode(&reader)
                if length < 16 {
                    lengths[symbol] = UInt8(length)
                    symbol += 1
                    if length != 0 { previous = UInt8(length) }
                    continue
                }
                let repeats = reader.read([2, 3, 7][length - 16]) + [3, 3, 11][length - 16]
                guard symbol + repeats <= size else { throw VP8LError("code lengths run past the alphabet") }
                let value = length == 16 ? previous : 0
                for _ in 0..<repeats {
                    lengths[symbol] = value
                    symbol += 1
                }
            }
        }
        guard let code = VP8LPrefixCode(lengths: lengths) else {
            throw VP8LError("code lengths that make no prefix code")
        }
        return code
    }
}
