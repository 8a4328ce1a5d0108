import VitrineCore

/// One of a VP8L bitstream's transforms (RFC 9649, 4), inverted one row at a time.
struct VP8LTransform {
    /// 0 predictor, 1 colour, 2 subtract green, 3 colour indexing.
    let kind: Int
    /// The width of the rows the transform gives back.
    let width: Int
    /// The width of the rows it takes: narrower for colour indexing that packs several pixels into one.
    let codedWidth: Int
    /// The block size (predictor and colour) or, for colour indexing, the bits per packed index.
    private let bits: Int
    private let blocksWide: Int
    /// The transform's own image: a mode or multipliers per block, or the colour table (256 entries).
    private let data: [UInt32]
    /// The predictor's previous row of output.
    private let previousRow: RowBuffer?
    private var previous: UnsafeMutablePointer<UInt32>? { previousRow?.pixels }

    /// A row of pixels that frees itself.
    final class RowBuffer {
        let pixels: UnsafeMutablePointer<UInt32>
        init(width: Int) {
            pixels = .allocate(capacity: max(1, width))
            pixels.initialize(repeating: 0, count: max(1, width))
        }
        deinit { pixels.deallocate() }
    }

    init(kind: Int, width: Int, height: Int, reader: inout VP8LBitReader, codeEntries: inout Int) throws(VP8LError) {
        self.kind = kind
        self.width = width
        switch kind {
        case 0, 1:
            bits = reader.read(3) + 2
            blocksWide = (width + (1 << bits) - 1) >> bits
            let blocksHigh = (height + (1 << bits) - 1) >> bits
            data = try VP8LImage.whole(
                reader: &reader, width: blocksWide, height: blocksHigh, codeEntries: &codeEntries)
            codedWidth = width
            previousRow = kind == 0 ? RowBuffer(width: width) : nil
        case 2:
            (bits, blocksWide, data, codedWidth, previousRow) = (0, 0, [], width, nil)
        default:
            let size = reader.read(8) + 1
            var table = try VP8LImage.whole(reader: &reader, width: size, height: 1, codeEntries: &codeEntries)
            // Coded as differences from the entry before, channel by channel.
            for index in 1..<max(1, size) { table[index] = Self.add(table[index], table[index - 1]) }
            table += [UInt32](repeating: 0, count: 256 - size)
            data = table
            // Up to 16 colours pack 2, 4 or 8 indices into one coded pixel's green.
            let packing = size <= 2 ? 3 : size <= 4 ? 2 : size <= 16 ? 1 : 0
            bits = packing
            blocksWide = 0
            codedWidth = (width + (1 << packing) - 1) >> packing
            previousRow = nil
        }
    }

    @inline(__always) static func add(_ a: UInt32, _ b: UInt32) -> UInt32 {
        ((a & 0xFF00_FF00) &+ (b & 0xFF00_FF00)) & 0xFF00_FF00 | ((a & 0x00FF_00FF) &+ (b & 0x00FF_00FF)) & 0x00FF_00FF
    }

    @inline(__always) static func average(_ a: UInt32, _ b: UInt32) -> UInt32 {
        (((a ^ b) & 0xFEFE_FEFE) >> 1) &+ (a & b)
    }

    @inline(__always) static func channel(_ value: UInt32, _ shift: UInt32) -> Int { Int(value >> shift & 0xFF) }

    /// Turns coded row `row` (`codedWidth` pixels) into the row before this transform (`width` pixels). `output`
    /// may be `input`: each pixel is read before it is written, and a packed row is unpacked from its end.
    func invert(row: Int, input: UnsafePointer<UInt32>, output: UnsafeMutablePointer<UInt32>) {
        switch kind {
        case 0: invertPredictor(row: row, input: input, output: output)
        case 1:
            for x in 0..<width {
                let element = data[(row >> bits) * blocksWide + (x >> bits)]
                let argb = input[x]
                let green = Int(Int8(truncatingIfNeeded: argb >> 8))
                var red = Self.channel(argb, 16)
                var blue = Self.channel(argb, 0)
                red = (red + (Int(Int8(truncatingIfNeeded: element)) * green) >> 5) & 0xFF
                blue = (blue + (Int(Int8(truncatingIfNeeded: element >> 8)) * green) >> 5) & 0xFF
                blue =
                    (blue + (Int(Int8(truncatingIfNeeded: element >> 16)) * Int(Int8(truncatingIfNeeded: red))) >> 5)
                    & 0xFF
                output[x] = argb & 0xFF00_FF00 | UInt32(red) << 16 | UInt32(blue)
            }
        case 2:
            for x in 0..<width {
                let argb = input[x]
                let green = argb >> 8 & 0xFF
                output[x] = argb & 0xFF00_FF00 | ((argb & 0x00FF_00FF) &+ (green << 16 | green)) & 0x00FF_00FF
            }
        default:
            if bits == 0 {
                for x in 0..<width { output[x] = data[Int(input[x] >> 8 & 0xFF)] }
                return
            }
            let perPixel = 8 >> bits
            let mask = (1 << perPixel) - 1
            let lanes = (1 << bits) - 1
            for x in (0..<width).reversed() {
                let packed = Int(input[x >> bits] >> 8 & 0xFF)
                output[x] = data[packed >> ((x & lanes) * perPixel) & mask]
            }
        }
    }

    private func invertPredictor(row: Int, input: UnsafePointer<UInt32>, output: UnsafeMutablePointer<UInt32>) {
        guard let previous else { return }
        if row == 0 {
            output[0] = Self.add(input[0], 0xFF00_0000)
            for x in 1..<max(1, width) { output[x] = Self.add(input[x], output[x - 1]) }
            previous.update(from: output, count: width)
            return
        }
        output[0] = Self.add(input[0], previous[0])
        // One mode per block: the mode is chosen once for each run of pixels, not for every pixel.
        let blockRow = (row >> bits) * blocksWide
        var x = 1
        while x < width {
            let runEnd = min(width, ((x >> bits) + 1) << bits)
            let mode = Int(data[blockRow + (x >> bits)] >> 8 & 0xF)
            @inline(__always) func run(_ predict: (UInt32, UInt32, UInt32, UInt32) -> UInt32) {
                // The last column's top-right is the first pixel of this row, as the rows lie in memory.
                let last = runEnd == width ? runEnd - 1 : runEnd
                while x < last {
                    output[x] = Self.add(
                        input[x], predict(output[x - 1], previous[x], previous[x - 1], previous[x + 1]))
                    x += 1
                }
                if x < runEnd {
                    output[x] = Self.add(input[x], predict(output[x - 1], previous[x], previous[x - 1], output[0]))
                    x += 1
                }
            }
            switch mode {
            case 1: run { left, _, _, _ in left }
            case 2: run { _, top, _, _ in top }
            case 3: run { _, _, _, topRight in topRight }
            case 4: run { _, _, topLeft, _ in topLeft }
            case 5: run { left, top, _, topRight in Self.average(Self.average(left, topRight), top) }
            case 6: run { left, _, topLeft, _ in Self.average(left, topLeft) }
            case 7: run { left, top, _, _ in Self.average(left, top) }
            case 8: run { _, top, topLeft, _ in Self.average(topLeft, top) }
            case 9: run { _, top, _, topRight in Self.average(top, topRight) }
            case 10:
                run { left, top, topLeft, topRight in
                    Self.average(Self.average(left, topLeft), Self.average(top, topRight))
                }
            case 11...13: run { Self.predict(mode, left: $0, top: $1, topLeft: $2, topRight: $3) }
            default: run { _, _, _, _ in 0xFF00_0000 }
            }
        }
        previous.update(from: output, count: width)
    }

    @inline(__always) static func predict(_ mode: Int, left: UInt32, top: UInt32, topLeft: UInt32, topRight: UInt32)
        -> UInt32
    {
        switch mode {
        case 1: return left
        case 2: return top
        case 3: return topRight
        case 4: return topLeft
        case 5: return average(average(left, topRight), top)
        case 6: return average(left, topLeft)
        case 7: return average(left, top)
        case 8: return average(topLeft, top)
        case 9: return average(top, topRight)
        case 10: return average(average(left, topLeft), average(top, topRight))
        case 11:
            // The neighbour nearer (in Manhattan distance over the channels) to left + top - top-left.
            @inline(__always) func distance(_ a: UInt32, _ b: UInt32, _ shift: UInt32) -> Int {
                abs(channel(a, shift) - channel(b, shift))
            }
            let towardTop =
                distance(left, topLeft, 0) + distance(left, topLeft, 8) + distance(left, topLeft, 16)
                + distance(left, topLeft, 24) - distance(top, topLeft, 0) - distance(top, topLeft, 8)
                - distance(top, topLeft, 16) - distance(top, topLeft, 24)
            return towardTop <= 0 ? top : left
        case 12:
            @inline(__always) func full(_ shift: UInt32) -> UInt32 {
                UInt32(min(255, max(0, channel(left, shift) + channel(top, shift) - channel(topLeft, shift)))) << shift
            }
            return full(0) | full(8) | full(16) | full(24)
        case 13:
            let mean = average(left, top)
            @inline(__always) func half(_ shift: UInt32) -> UInt32 {
                let a = channel(mean, shift)
                return UInt32(min(255, max(0, a + (a - channel(topLeft, shift)) / 2))) << shift
            }
            return half(0) | half(8) | half(16) | half(24)
        default: return 0xFF00_0000
        }
    }
}
