import VitrineCore

/// Mixes two XRGB8888 pictures, the crossfade's one step: `from * (256 - weight) + to * weight`, per channel.
///
/// Red and blue share one 32-bit multiply (they sit 16 bits apart, and 255 * 256 never reaches the next one), green
/// takes another, so a pixel costs two multiplies per picture; eight pixels go through at once in SIMD registers.
/// Weight 256 gives exactly `to` and 0 exactly `from`, so a fade ends on the very pixels of the new slide.
public enum FrameBlender {
    public static let fullWeight = 256

    /// Blends `count` pixels; `target` may be `from` or `to` (each pixel is read before it is written).
    public static func blend(
        from: UnsafePointer<UInt32>, to: UnsafePointer<UInt32>, weight: Int, into target: UnsafeMutablePointer<UInt32>,
        count: Int
    ) {
        let clamped = UInt32(min(max(weight, 0), fullWeight))
        let incoming = SIMD8<UInt32>(repeating: clamped)
        let outgoing = SIMD8<UInt32>(repeating: UInt32(fullWeight) - clamped)
        let redBlue = SIMD8<UInt32>(repeating: 0x00FF_00FF)
        let green = SIMD8<UInt32>(repeating: 0x0000_FF00)
        let lanes = 8
        var index = 0
        let rawFrom = UnsafeRawPointer(from)
        let rawTo = UnsafeRawPointer(to)
        let rawTarget = UnsafeMutableRawPointer(target)
        while index + lanes <= count {
            let offset = index * 4
            let a = rawFrom.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self)
            let b = rawTo.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self)
            let mixedRedBlue = (((a & redBlue) &* outgoing &+ (b & redBlue) &* incoming) &>> 8) & redBlue
            let mixedGreen = (((a & green) &* outgoing &+ (b & green) &* incoming) &>> 8) & green
            rawTarget.storeBytes(of: mixedRedBlue | mixedGreen, toByteOffset: offset, as: SIMD8<UInt32>.self)
            index += lanes
        }
        let scalarIn = clamped
        let scalarOut = UInt32(fullWeight) - clamped
        while index < count {
            let a = from[index]
            let b = to[index]
            let mixedRedBlue = (((a & 0x00FF_00FF) &* scalarOut &+ (b & 0x00FF_00FF) &* scalarIn) &>> 8) & 0x00FF_00FF
            let mixedGreen = (((a & 0x0000_FF00) &* scalarOut &+ (b & 0x0000_FF00) &* scalarIn) &>> 8) & 0x0000_FF00
            target[index] = mixedRedBlue | mixedGreen
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
}
