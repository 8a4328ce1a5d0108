import CLinux
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The fbdev fallback for boards without KMS (`/dev/fbN`): the resolution from FBIOGET_VSCREENINFO, XRGB8888 or
/// RGB565 pixels. When the driver lets the virtual screen be twice as tall, frames alternate between its halves
/// and FBIOPAN_DISPLAY flips between them (paced by FBIO_WAITFORVSYNC where the driver has it); otherwise there is
/// one buffer and each frame is one copy into it. Power is FBIOBLANK. The console is switched to graphics mode
/// while Vitrine draws, and back to text (which redraws it) on close.
public final class FbdevDisplay: DisplayExecutor {
    public let size: Size
    public let path: String
    public var name: String { path }
    public var eventDescriptors: [Int32] { [completion.descriptor] }
    public var bufferCount: Int { doubleBuffered ? 2 : 1 }
    /// Panning between two halves changes the picture whole; with one buffer every step would be drawn on screen,
    /// and RGB565 panels are not given fades.
    public var blendsCleanly: Bool { doubleBuffered && bytesPerPixel == 4 }
    /// Panning between two halves, or one buffer.
    public let doubleBuffered: Bool
    private let descriptor: Int32
    private let pixels: UnsafeMutableRawPointer
    private let mappedBytes: Int
    private let lineLength: Int
    private let bytesPerPixel: Int
    private var variable: fb_var_screeninfo
    private let original: fb_var_screeninfo
    /// Pans complete at once (after the vblank when the driver can wait for one); the completion is reported
    /// through the event loop like a flip event.
    private let completion: MonotonicTimer
    private var completed: UInt64?
    /// FBIO_WAITFORVSYNC worked last time (tried until it fails once).
    private var waitsForVsync = true
    /// FBIOBLANK is missing: off painted black over the picture, which must be drawn again when the screen is on.
    private var pictureLost = false
    private let console: Int32
    private var closed = false

    public init(path: String) throws(PlayError) {
        self.path = path
        descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw PlayError("\(RuntimeError.last("open", path: path))") }
        var variable = fb_var_screeninfo()
        var fixed = fb_fix_screeninfo()
        guard vitrine_ioctl_pointer(descriptor, VITRINE_FBIOGET_VSCREENINFO, &variable) == 0,
            vitrine_ioctl_pointer(descriptor, VITRINE_FBIOGET_FSCREENINFO, &fixed) == 0
        else {
            let failure = RuntimeError.last("read the framebuffer's screen info", path: path)
            Glibc.close(descriptor)
            throw PlayError("\(failure)")
        }
        original = variable
        let xrgb = variable.bits_per_pixel == 32 && variable.red.offset == 16 && variable.blue.offset == 0
        let rgb565 = variable.bits_per_pixel == 16 && variable.red.offset == 11 && variable.green.length == 6
        guard xrgb || rgb565 else {
            Glibc.close(descriptor)
            throw PlayError(
                "\(path): \(variable.bits_per_pixel)-bit pixels with red at bit \(variable.red.offset) "
                    + "(only XRGB8888 and RGB565 are supported)")
        }
        bytesPerPixel = xrgb ? 4 : 2
        size = Size(width: Int(variable.xres), height: Int(variable.yres))
        lineLength = Int(fixed.line_length)
        let frameBytes = lineLength * size.height
        var tall = variable
        tall.yres_virtual = variable.yres * 2
        tall.yoffset = 0
        if Int(fixed.smem_len) >= frameBytes * 2,
            vitrine_ioctl_pointer(descriptor, VITRINE_FBIOPUT_VSCREENINFO, &tall) == 0,
            vitrine_ioctl_pointer(descriptor, VITRINE_FBIOGET_VSCREENINFO, &tall) == 0,
            tall.yres_virtual >= tall.yres * 2
        {
            variable = tall
            doubleBuffered = true
        } else {
            doubleBuffered = false
        }
        self.variable = variable
        mappedBytes = Int(fixed.smem_len)
        guard let mapped = mmap(nil, mappedBytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
            mapped != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            let failure = RuntimeError.last("map the framebuffer", path: path)
            Glibc.close(descriptor)
            throw PlayError("\(failure)")
        }
        pixels = mapped
        do {
            completion = try MonotonicTimer()
        } catch {
            munmap(mapped, mappedBytes)
            Glibc.close(descriptor)
            throw PlayError("\(error)")
        }
        // Keep the console from drawing its text and cursor over the pictures (console_codes(4), KDSETMODE).
        console = open("/dev/tty0", O_RDWR | O_CLOEXEC)
        if console >= 0 { _ = vitrine_ioctl_value(console, VITRINE_KDSETMODE, VITRINE_KD_GRAPHICS) }
    }

    deinit { close(flipInFlight: false) }

    private func base(_ buffer: Int) -> UnsafeMutableRawPointer { pixels + buffer * lineLength * size.height }

    public func paint(_ content: DisplayContent, buffer: Int, front: Int) {
        if bytesPerPixel == 4 {
            _ = content.paint(into: base(buffer), pitch: lineLength, size: size, front: UnsafeRawPointer(base(front)))
        } else {
            paintRGB565(content, into: base(buffer))
        }
    }

    private func pan(to buffer: Int) {
        guard doubleBuffered else { return }
        variable.yoffset = UInt32(buffer * size.height)
        _ = vitrine_ioctl_pointer(descriptor, VITRINE_FBIOPAN_DISPLAY, &variable)
    }

    public func flip(buffer: Int, serial: UInt64) -> DisplayMachine<DisplayContent>.Refusal? {
        pan(to: buffer)
        // The pan takes effect at the vblank; waiting for it paces fades at the refresh rate and frees the other
        // half only once it is off screen.
        if doubleBuffered && waitsForVsync && vitrine_fb_wait_for_vsync(descriptor) != 0 { waitsForVsync = false }
        completed = serial
        completion.arm(at: MonotonicClock.seconds())
        return nil
    }

    public func modeset(buffer: Int) -> Bool {
        pan(to: buffer)
        _ = vitrine_ioctl_value(descriptor, VITRINE_FBIOBLANK, VITRINE_FB_BLANK_UNBLANK)
        defer { pictureLost = false }
        return !pictureLost
    }

    public func readCompletions() -> [(serial: UInt64, sequence: UInt32, time: Double)] {
        guard completion.acknowledge(), let serial = completed else { return [] }
        completed = nil
        return [(serial, 0, MonotonicClock.seconds())]
    }

    /// FBIOBLANK; a driver without it gets black painted over the picture. Either way the picture is drawn again
    /// when the screen is on.
    public func setPower(_ on: Bool) {
        let request = on ? VITRINE_FB_BLANK_UNBLANK : VITRINE_FB_BLANK_POWERDOWN
        let blanked = vitrine_ioctl_value(descriptor, VITRINE_FBIOBLANK, request) == 0
        guard !on else { return }
        // What the screen shows after an unblank is the driver's affair (DRM's fbdev emulation restores its own
        // mode and pan, and a shadow buffer may not be copied again): the picture is drawn again on return.
        pictureLost = true
        if !blanked {
            for buffer in 0..<bufferCount { paint(.background(.black), buffer: buffer, front: buffer) }
        }
    }

    /// A console that had the VT meanwhile drew into the same memory.
    public func takeMaster() -> Bool {
        pictureLost = true
        return true
    }

    /// RGB565 panels take frames and backgrounds converted; overlays (XRGB paint) are not shown there.
    private func paintRGB565(_ content: DisplayContent, into base: UnsafeMutableRawPointer) {
        switch content {
        case .frame(let frame, _):
            precondition(frame.size == size, "frame \(frame.size) for a \(size) display")
            for row in 0..<size.height { write(row: frame.pixels + row * size.width, to: base + row * lineLength) }
        case .background(let color):
            let line = [UInt32](repeating: color.xrgb, count: size.width)
            line.withUnsafeBufferPointer { buffer in
                guard let start = buffer.baseAddress else { return }
                for row in 0..<size.height { write(row: start, to: base + row * lineLength) }
            }
        case .overlay:
            break
        case .decorated(let picture, _):
            paintRGB565(picture, into: base)
        case .blend(_, let to, _, let record):
            // Not reached (no fades on RGB565 panels); the incoming picture is what the fade would end on.
            paintRGB565(.frame(to, record), into: base)
        }
    }

    private func write(row source: UnsafePointer<UInt32>, to destination: UnsafeMutableRawPointer) {
        let out = destination.bindMemory(to: UInt16.self, capacity: size.width)
        for x in 0..<size.width {
            let pixel = source[x]
            let red = (pixel >> 8) & 0xF800
            let green = (pixel >> 5) & 0x07E0
            let blue = (pixel >> 3) & 0x001F
            out[x] = UInt16(truncatingIfNeeded: red | green | blue)
        }
    }

    /// Puts the screen info back and the console in text mode, which makes it redraw itself.
    public func close(flipInFlight: Bool) {
        guard !closed else { return }
        closed = true
        var restore = original
        _ = vitrine_ioctl_pointer(descriptor, VITRINE_FBIOPUT_VSCREENINFO, &restore)
        if console >= 0 {
            _ = vitrine_ioctl_value(console, VITRINE_KDSETMODE, VITRINE_KD_TEXT)
            Glibc.close(console)
        }
        munmap(pixels, mappedBytes)
        Glibc.close(descriptor)
    }
}
