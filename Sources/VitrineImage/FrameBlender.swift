import VitrineCore

// The 16-bit lanes below take a pixel's bytes in little-endian order (x86_64 and aarch64, the targets).
#if _endian(big)
    #error("FrameBlender assumes a little-endian machine")
#endif

/// Mixes two XRGB8888 pictures, the crossfade's one step: `from * (256 - weight) + to * weight`, per channel.
///
/// Each channel is worked on in a 16-bit lane: blue and red sit in the low bytes of a pixel's two 16-bit halves,
/// green and the unused byte in the high bytes (shifted down first), and 255 * 256 never leaves a lane. So the
/// multiplies are 16-bit ones (`pmullw` on x86's baseline SSE2, NEON's `mul` of halfwords), sixteen lanes at once:
/// a 32-bit multiply per lane has no SSE2 instruction and is emulated with shuffles, which made a blend 2.6 times
/// slower here and 4 times slower under QEMU's TCG. Weight 256 gives exactly `to` and 0 exactly `from`, so a fade
/// ends on the very pixels of the new slide. The unused byte is mixed like the others: masking it alone costs the
/// compiler a shuffle per register.
public enum FrameBlender {
    public static let fullWeight = 256

    /// Blends `count` pixels; `target` may be `from` or `to` (each pixel is read before it is written).
    public static func blend(
        from: UnsafePointer<UInt32>, to: UnsafePointer<UInt32>, weight: Int, into target: UnsafeMutablePointer<UInt32>,
        count: Int
    ) {
        let clamped = UInt16(min(max(weight, 0), fullWeight))
        let incoming = SIMD16<UInt16>(repeating: clamped)
        let outgoing = SIMD16<UInt16>(repeating: UInt16(fullWeight) - clamped)
        let lowByte = SIMD16<UInt16>(repeating: 0x00FF)
        let highByte = SIMD16<UInt16>(repeating: 0xFF00)
        let lanes = 8
        var index = 0
        let rawFrom = UnsafeRawPointer(from)
        let rawTo = UnsafeRawPointer(to)
        let rawTarget = UnsafeMutableRawPointer(target)
        while index + lanes <= count {
            let offset = index * 4
            let a = rawFrom.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt16>.self)
            let b = rawTo.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt16>.self)
            let blueRed = ((a & lowByte) &* outgoing &+ (b & lowByte) &* incoming) &>> 8
            let greenUnused = ((a &>> 8) &* outgoing &+ (b &>> 8) &* incoming) & highByte
            rawTarget.storeBytes(of: blueRed | greenUnused, toByteOffset: offset, as: SIMD16<UInt16>.self)
            index += lanes
        }
        let scalarIn = UInt32(clamped)
        let scalarOut = UInt32(fullWeight) - scalarIn
        while index < count {
            let a = from[index]
            let b = to[index]
            let blueRed = (((a & 0x00FF_00FF) &* scalarOut &+ (b & 0x00FF_00FF) &* scalarIn) &>> 8) & 0x00FF_00FF
            let greenUnused =
                (((a &>> 8) & 0x00FF_00FF) &* scalarOut &+ ((b &>> 8) & 0x00FF_00FF) &* scalarIn) & 0xFF00_FF00
            target[index] = blueRed | greenUnused
            index += 1
        }
    }

    /// Blends two frames of one size into a buffer with `pitch` bytes per row (a scanout buffer).
    public static func blend(
        from: UnsafePointer<UInt32>, to: UnsafePointer<UInt32>, size: Size, weight: Int,
        into target: UnsafeMutableRawPointer, pitch: Int
    ) {
        for row in 0..<size.height {
            let rowTarget = (target + row * pitch).assumingMemoryBound(to: UInt32.self)
            blend(
                from: from + row * size.width, to: to + row * size.width, weight: weight, into: rowTarget,
                count: size.width)
        }
    }

    /// How long one step of a fade at `size` takes on this machine, measured on a strip of it (a few hundred
    /// kilobytes, freed at once) and scaled to the whole picture: the fastest of a few runs, so a moment's
    /// preemption does not count.
    public static func stepSeconds(at size: Size, clock: () -> Double) -> Double {
        let rows = min(size.height, 32)
        let count = size.width * rows
        guard count > 0 else { return 0 }
        let strips = UnsafeMutablePointer<UInt32>.allocate(capacity: count * 3)
        defer { strips.deallocate() }
        for index in 0..<count * 2 { strips[index] = UInt32(truncatingIfNeeded: index &* 2_654_435_761) }
        var fastest = Double.infinity
        for run in 0..<5 {
            let start = clock()
            blend(from: strips, to: strips + count, weight: 64 + run, into: strips + 2 * count, count: count)
            fastest = min(fastest, clock() - start)
        }
        return fastest * Double(size.height) / Double(rows)
    }
}
