import VitrineCore

/// The `contain-blur` margins: the photo already placed in the frame is shrunk to about an eighth of its region,
/// cropped to cover it, blurred and darkened there, and stretched back over the region's margins. All the blurring
/// happens on the small copy, so the cost is one pass over the photo's pixels and one bilinear write per margin
/// pixel.
public enum BlurFill {
    /// The small copy is this many times smaller than the region on each side.
    static let reduction = 8
    /// Box blur radius on the small copy, and the passes that make the box a near-Gaussian.
    static let radius = 3
    static let passes = 3
    /// Brightness kept, out of 256, so the sharp photo stands out from its margins.
    static let brightness: UInt32 = 150

    static func smallSize(of region: Placement.Rect) -> Size {
        Size(width: max(1, region.width / reduction), height: max(1, region.height / reduction))
    }

    /// The bytes the small copy, its blur buffer and its rows widened to the region take.
    public static func workspaceBytes(region: Placement.Rect) -> Int {
        let small = smallSize(of: region)
        return small.pixelCount * 4 * 2 + small.height * region.width * 4
    }

    /// Fills the part of `region` (scanout pixels) outside `photo` (the rectangle the photo covers, inside the
    /// region) in `frame`. A `translucent` photo was written premultiplied with its alpha in the fourth byte; it
    /// is composed over the blur too, which is then made of the photo as if over black.
    public static func fill(_ frame: Frame, region: Placement.Rect, photo: Placement.Rect, translucent: Bool = false) {
        guard photo.width > 0, photo.height > 0 else { return }
        let covers =
            photo.x <= region.x && photo.y <= region.y && photo.x + photo.width >= region.x + region.width
            && photo.y + photo.height >= region.y + region.height
        if covers && !translucent { return }
        let small = smallSize(of: region)
        var pixels = shrink(frame, photo: photo, region: region, to: small)
        var scratch = [UInt32](repeating: 0, count: pixels.count)
        for _ in 0..<passes {
            boxBlur(&pixels, into: &scratch, size: small, horizontal: true)
            boxBlur(&scratch, into: &pixels, size: small, horizontal: false)
        }
        stretch(pixels, size: small, over: region, skipping: photo, translucent: translucent, in: frame)
    }

    /// Area-averages the centred part of the photo that covers the region's shape into `small`, darkened.
    private static func shrink(_ frame: Frame, photo: Placement.Rect, region: Placement.Rect, to small: Size)
        -> [UInt32]
    {
        let scale = max(Double(region.width) / Double(photo.width), Double(region.height) / Double(photo.height))
        let windowWidth = min(Double(photo.width), Double(region.width) / scale)
        let windowHeight = min(Double(photo.height), Double(region.height) / scale)
        let windowX = Double(photo.x) + (Double(photo.width) - windowWidth) / 2
        let windowY = Double(photo.y) + (Double(photo.height) - windowHeight) / 2
        let stride = frame.size.width
        func span(_ index: Int, _ count: Int, origin: Double, length: Double, limit: Int) -> Range<Int> {
            let start = Int(origin + length * Double(index) / Double(count))
            let end = Int((origin + length * Double(index + 1) / Double(count)).rounded(.up))
            let clampedStart = min(max(start, 0), limit - 1)
            return clampedStart..<min(max(end, clampedStart + 1), limit)
        }
        let columns = (0..<small.width).map {
            span($0, small.width, origin: windowX, length: windowWidth, limit: frame.size.width)
        }
        var result = [UInt32](repeating: 0, count: small.pixelCount)
        for y in 0..<small.height {
            let rows = span(y, small.height, origin: windowY, length: windowHeight, limit: frame.size.height)
            for x in 0..<small.width {
                var red: UInt32 = 0
                var green: UInt32 = 0
                var blue: UInt32 = 0
                let area = UInt32(rows.count * columns[x].count)
                for row in rows {
                    let line = frame.pixels + row * stride
                    for column in columns[x] {
                        let pixel = line[column]
                        red &+= pixel >> 16 & 0xFF
                        green &+= pixel >> 8 & 0xFF
                        blue &+= pixel & 0xFF
                    }
                }
                let darken = { (sum: UInt32) in (sum / area * brightness) >> 8 }
                result[y * small.width + x] = darken(red) << 16 | darken(green) << 8 | darken(blue)
            }
        }
        return result
    }

    /// One pass of a box blur along rows or columns, edges clamped; a running sum makes it a few adds per pixel
    /// whatever the radius.
    private static func boxBlur(_ source: inout [UInt32], into target: inout [UInt32], size: Size, horizontal: Bool) {
        let length = horizontal ? size.width : size.height
        let lines = horizontal ? size.height : size.width
        let step = horizontal ? 1 : size.width
        let lineStep = horizontal ? size.width : 1
        let taps = UInt32(2 * radius + 1)
        source.withUnsafeBufferPointer { input in
            target.withUnsafeMutableBufferPointer { output in
                for line in 0..<lines {
                    let base = line * lineStep
                    func pixel(_ position: Int) -> UInt32 { input[base + min(max(position, 0), length - 1) * step] }
                    var red: UInt32 = 0
                    var green: UInt32 = 0
                    var blue: UInt32 = 0
                    for offset in -radius...radius {
                        let value = pixel(offset)
                        red += value >> 16 & 0xFF
                        green += value >> 8 & 0xFF
                        blue += value & 0xFF
                    }
                    for position in 0..<length {
                        output[base + position * step] = (red / taps) << 16 | (green / taps) << 8 | blue / taps
                        let leaving = pixel(position - radius)
                        let entering = pixel(position + radius + 1)
                        red = red &+ (entering >> 16 & 0xFF) &- (leaving >> 16 & 0xFF)
                        green = green &+ (entering >> 8 & 0xFF) &- (leaving >> 8 & 0xFF)
                        blue = blue &+ (entering & 0xFF) &- (leaving & 0xFF)
                    }
                }
            }
        }
    }

    /// Bilinear enlargement of the small copy over the region, writing only outside the photo, or under it when
    /// it is translucent. Separable: each small row is first widened to the region's width (few rows, so cheap),
    /// then every output row mixes two widened rows with the crossfade's SIMD blend.
    private static func stretch(
        _ small: [UInt32], size: Size, over region: Placement.Rect, skipping photo: Placement.Rect,
        translucent: Bool, in frame: Frame
    ) {
        // Fixed point: each output position's left (or upper) source index and the next one's weight out of 256.
        func taps(_ count: Int, from sourceCount: Int) -> [(index: Int, weight: Int)] {
            (0..<count).map { index in
                let position = max(0, (Double(index) + 0.5) * Double(sourceCount) / Double(count) - 0.5)
                let left = min(Int(position), sourceCount - 1)
                return (left, Int(((position - Double(left)) * 256).rounded()))
            }
        }
        let columns = taps(region.width, from: size.width)
        var widened = [UInt32](repeating: 0, count: size.height * region.width)
        small.withUnsafeBufferPointer { source in
            widened.withUnsafeMutableBufferPointer { target in
                columns.withUnsafeBufferPointer { columnTaps in
                    for row in 0..<size.height {
                        let line = source.baseAddress.map { $0 + row * size.width }
                        let out = target.baseAddress.map { $0 + row * region.width }
                        guard let line, let out else { return }
                        for x in 0..<region.width {
                            let (left, weight) = columnTaps[x]
                            let a = line[left]
                            let b = line[min(left + 1, size.width - 1)]
                            let incoming = UInt32(truncatingIfNeeded: weight)
                            let outgoing = 256 &- incoming
                            let redBlue = ((a & 0x00FF_00FF) &* outgoing &+ (b & 0x00FF_00FF) &* incoming) >> 8
                            let green = ((a & 0x0000_FF00) &* outgoing &+ (b & 0x0000_FF00) &* incoming) >> 8
                            out[x] = redBlue & 0x00FF_00FF | green & 0x0000_FF00
                        }
                    }
                }
            }
        }
        let rows = taps(region.height, from: size.height)
        let photoRows = photo.y..<(photo.y + photo.height)
        let regionRight = region.x + region.width
        let photoColumns = max(region.x, photo.x)..<min(photo.x + photo.width, regionRight)
        let under = UnsafeMutablePointer<UInt32>.allocate(capacity: translucent ? max(1, photoColumns.count) : 1)
        defer { under.deallocate() }
        widened.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for y in 0..<region.height {
                let (top, weight) = rows[y]
                let upper = base + top * region.width
                let lower = base + min(top + 1, size.height - 1) * region.width
                let target = frame.pixels + (region.y + y) * frame.size.width
                func write(_ range: Range<Int>) {
                    guard !range.isEmpty else { return }
                    let offset = range.lowerBound - region.x
                    FrameBlender.blend(
                        from: upper + offset, to: lower + offset, weight: weight, into: target + range.lowerBound,
                        count: range.count)
                }
                if photoRows.contains(region.y + y) {
                    write(region.x..<max(region.x, photo.x))
                    write(min(photo.x + photo.width, regionRight)..<regionRight)
                    guard translucent, !photoColumns.isEmpty else { continue }
                    let offset = photoColumns.lowerBound - region.x
                    FrameBlender.blend(
                        from: upper + offset, to: lower + offset, weight: weight, into: under,
                        count: photoColumns.count)
                    composePremultiplied(target + photoColumns.lowerBound, over: under, count: photoColumns.count)
                } else {
                    write(region.x..<regionRight)
                }
            }
        }
    }

    /// Premultiplied pixels (alpha in the fourth byte) composed over `back`, written opaque. The resampler's
    /// overshoot can leave a channel above its alpha, so sums are clamped.
    private static func composePremultiplied(
        _ pixels: UnsafeMutablePointer<UInt32>, over back: UnsafePointer<UInt32>, count: Int
    ) {
        for index in 0..<count {
            let pixel = pixels[index]
            let behind = ColorConversion.blend(0, over: back[index], alpha: pixel &>> 24)
            let red = min(255, (pixel &>> 16 & 0xFF) &+ (behind &>> 16 & 0xFF))
            let green = min(255, (pixel &>> 8 & 0xFF) &+ (behind &>> 8 & 0xFF))
            let blue = min(255, (pixel & 0xFF) &+ (behind & 0xFF))
            pixels[index] = red &<< 16 | green &<< 8 | blue
        }
    }
}
