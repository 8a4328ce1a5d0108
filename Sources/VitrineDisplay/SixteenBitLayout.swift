import CLinux

/// A 16-bit framebuffer's layout: 5 bits of red and blue, 6 of green at bit 5. Most SPI panels are RGB565 (red at
/// bit 11); panels wired the other way, and the kernel's vfb, are BGR565 (red at bit 0).
enum SixteenBitLayout: Equatable {
    case rgb565, bgr565

    /// Nil for any other pixel format.
    init?(_ variable: fb_var_screeninfo) {
        guard variable.bits_per_pixel == 16, variable.green.offset == 5, variable.green.length == 6,
            variable.red.length == 5, variable.blue.length == 5
        else { return nil }
        switch (variable.red.offset, variable.blue.offset) {
        case (11, 0): self = .rgb565
        case (0, 11): self = .bgr565
        default: return nil
        }
    }

    /// One XRGB8888 pixel in this layout (each channel's high bits).
    func pack(_ pixel: UInt32) -> UInt16 {
        let red = pixel >> 19 & 0x1F
        let green = pixel >> 10 & 0x3F
        let blue = pixel >> 3 & 0x1F
        let packed = self == .rgb565 ? red << 11 | green << 5 | blue : blue << 11 | green << 5 | red
        return UInt16(truncatingIfNeeded: packed)
    }

    func convert(row source: UnsafePointer<UInt32>, count: Int, to destination: UnsafeMutableRawPointer) {
        let out = destination.bindMemory(to: UInt16.self, capacity: count)
        for x in 0..<count { out[x] = pack(source[x]) }
    }
}
