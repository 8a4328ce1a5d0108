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

    /// The bytes the small copy and its blur buffer take.
    public static func workspaceBytes(region: Placement.Rect) -> Int {
        smallSize(of: region).pixelCount * 4 * 2
    }

    /// Fills the part of `region` (scanout pixels) outside `photo` (the rectangle the photo covers, inside the
    /// region) in `frame`.
    public static func fill(_ frame: Frame, region: Placement.Rect, photo: Placement.Rect) {
        guard photo.width > 0, photo.height > 0 else { return }
        let covers = photo.x <= region.x && photo.y <= region.y && photo.x + photo.width >= region.x + region.width
            && photo.y + photo.height >= region.y + region.height
        if covers { return }
        let small = smallSize(of: region)
        var pixels = shrink(frame, photo: photo, region: region, to: small)
        var scratch = [UInt32](repeating: 0, count: pixels.count)
        for _ in 0..<passes {
            boxBlur(&pixels, into: &scratch, size: small, horizontal: true)
            boxBlur(&scratch, into: &pixels, size: small, horizontal: false)
        }
        stretch(pixels, size: small, over: region, skipping: photo, in: frame)
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

    /// One pass of a box blur along rows or columns, edges clamped.
    private static func boxBlur(_ source: inout [UInt32], into target: inout [UInt32], size: Size, horizontal: Bool) {
        let length = horizontal ? size.width : size.height
        let lines = horizontal ? size.height : size.width
        let step = horizontal ? 1 : size.width
        let lineStep = horizontal ? size.width : 1
        let taps = UInt32(2 * radius + 1)
        for line in 0..<lines {
            let base = line * lineStep
            for position in 0..<length {
                var red: UInt32 = 0
                var green: UInt32 = 0
                var blue: UInt32 = 0
                for offset in -radius...radius {
                    let pixel = source[base + min(max(position + offset, 0), length - 1) * step]
                    red += pixel >> 16 & 0xFF
                    green += pixel >> 8 & 0xFF
                    blue += pixel & 0xFF
                }
                target[base + position * step] = (red / taps) << 16 | (green / taps) << 8 | blue / taps
            }
        }
    }

    /// Bilinear enlargement of the small copy over the region, writing only outside the photo.
    private static func stretch(
        _ small: [UInt32], size: Size, over region: Placement.Rect, skipping photo: Placement.Rect, in frame: Frame
    ) {
        // Fixed point: each output column's left source column and the right one's weight out of 256.
        func taps(_ count: Int, from sourceCount: Int) -> [(Int, UInt32)] {
            (0..<count).map { index in
                let position = max(0, (Double(index) + 0.5) * Double(sourceCount) / Double(count) - 0.5)
                let left = min(Int(position), sourceCount - 1)
                return (left, UInt32(((position - Double(left)) * 256).rounded()))
            }
        }
        let columns = taps(region.width, from: size.width)
        let rows = taps(region.height, from: size.height)
        var line = [UInt32](repeating: 0, count: size.width * 3)
        let photoRows = photo.y..<(photo.y + photo.height)
        for y in 0..<region.height {
            let (top, weight) = rows[y]
            let bottom = min(top + 1, size.height - 1)
            // The two source rows mixed once per output row; what remains per pixel is the horizontal mix.
            for x in 0..<size.width {
                let a = small[top * size.width + x]
                let b = small[bottom * size.width + x]
                for channel in 0..<3 {
                    let shift = UInt32(16 - 8 * channel)
                    line[x * 3 + channel] = (a >> shift & 0xFF) * (256 - weight) + (b >> shift & 0xFF) * weight
                }
            }
            let frameY = region.y + y
            let target = frame.pixels + frameY * frame.size.width
            func write(_ range: Range<Int>) {
                for x in range {
                    let (left, weightX) = columns[x - region.x]
                    let right = min(left + 1, size.width - 1)
                    var pixel: UInt32 = 0
                    for channel in 0..<3 {
                        let mixed = (line[left * 3 + channel] * (256 - weightX) + line[right * 3 + channel] * weightX)
                        pixel |= (mixed >> 16) << UInt32(16 - 8 * channel)
                    }
                    target[x] = pixel
                }
            }
            if photoRows.contains(frameY) {
                write(region.x..<max(region.x, photo.x))
                write(min(photo.x + photo.width, region.x + region.width)..<(region.x + region.width))
            } else {
                write(region.x..<(region.x + region.width))
            }
        }
    }
}
