import CLinux
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The fbdev fallback for boards without KMS (`/dev/fbN`): the resolution from FBIOGET_VSCREENINFO, XRGB8888 or
/// 16-bit (RGB565 or BGR565) pixels. When the driver lets the virtual screen be twice as tall, frames alternate
/// between its halves and FBIOPAN_DISPLAY flips between them (paced by FBIO_WAITFORVSYNC where the driver has it);
/// otherwise there is one buffer and each frame is one copy into it. Power is FBIOBLANK. The console is switched to graphics mode
/// while Vitrine draws, and back to text (which redraws it) on close.
public final class FbdevDisplay: DisplayExecutor {
    public let size: Size
    public let path: String
    public var name: String { path }
    public var eventDescriptors: [Int32] { [completion.descriptor] }
    public var bufferCount: Int { doubleBuffered ? 2 : 1 }
    /// Panning between two halves changes the picture whole; with one buffer every step would be drawn on screen,
    /// and 16-bit panels are not given fades.
    public var blendsCleanly: Bool { doubleBuffered && bytesPerPixel == 4 }
    /// Panning between two halves, or one buffer.
    public let doubleBuffered: Bool
    /// The framebuffer device; nil once closed.
    private var owned: Descriptor?
    private let descriptor: Int32
    private let pixels: UnsafeMutableRawPointer
    private let mappedBytes: Int
    private let lineLength: Int
    private let bytesPerPixel: Int
    private let sixteen: SixteenBitLayout
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
    /// `/dev/tty0`, to switch the console to graphics and back; nil when it cannot be opened or once closed.
    private var console: Descriptor?
    private var closed = false
    /// 16-bit panels (small SPI screens, most of them) are painted through one 32-bit picture per buffer and
    /// converted, so banners, the clock and overlays are drawn on them as on XRGB screens. The memory budget
    /// already counts two XRGB scanout buffers, which a framebuffer's own memory does not take from RAM.
    private let shadows: [UnsafeMutablePointer<UInt32>]

    public init(path: String) throws(PlayError) {
        self.path = path
        // Closed by its owner on every way out of here that throws.
        let file: Descriptor
        do {
            file = try SystemCall.open("open", path: path) { open(path, O_RDWR | O_CLOEXEC) }
        } catch {
            throw PlayError("\(error)")
        }
        let descriptor = file.number
        self.descriptor = descriptor
        var variable = fb_var_screeninfo()
        var fixed = fb_fix_screeninfo()
        guard vitrine_ioctl_pointer(descriptor, VITRINE_FBIOGET_VSCREENINFO, &variable) == 0,
            vitrine_ioctl_pointer(descriptor, VITRINE_FBIOGET_FSCREENINFO, &fixed) == 0
        else {
            let failure = RuntimeError.last("read the framebuffer's screen info", path: path)
            throw PlayError("\(failure)")
        }
        original = variable
        let xrgb = variable.bits_per_pixel == 32 && variable.red.offset == 16 && variable.blue.offset == 0
        let sixteen = SixteenBitLayout(variable)
        guard xrgb || sixteen != nil else {
            throw PlayError(
                "\(path): \(variable.bits_per_pixel)-bit pixels with red at bit \(variable.red.offset) "
                    + "(only XRGB8888, RGB565 and BGR565 are supported)")
        }
        bytesPerPixel = xrgb ? 4 : 2
        self.sixteen = sixteen ?? .rgb565
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
            throw PlayError("\(failure)")
        }
        pixels = mapped
        do {
            completion = try MonotonicTimer()
        } catch {
            munmap(mapped, mappedBytes)
            throw PlayError("\(error)")
        }
        let shadowPixels = size.width.multipliedReportingOverflow(by: size.height)
        guard !shadowPixels.overflow, shadowPixels.partialValue <= Int.max / 4 else {
            munmap(mapped, mappedBytes)
            throw PlayError("\(path): a \(size) screen is too large to paint")
        }
        shadows = (0..<(xrgb ? 0 : (doubleBuffered ? 2 : 1))).map { _ in
            let shadow = UnsafeMutablePointer<UInt32>.allocate(capacity: shadowPixels.partialValue)
            shadow.initialize(repeating: 0, count: shadowPixels.partialValue)
            return shadow
        }
        // Keep the console from drawing its text and cursor over the pictures (console_codes(4), KDSETMODE).
        let console = Descriptor(taking: open("/dev/tty0", O_RDWR | O_CLOEXEC))
        if console.number >= 0 {
            // Without it the console's cursor blinks over the pictures; the show goes on either way.
            _ = vitrine_ioctl_value(console.number, VITRINE_KDSETMODE, VITRINE_KD_GRAPHICS)
            self.console = .some(console)
        }
        owned = .some(file)
    }

    deinit {
        close(flipInFlight: false)
        for shadow in shadows { shadow.deallocate() }
    }

    private func base(_ buffer: Int) -> UnsafeMutableRawPointer { pixels + buffer * lineLength * size.height }

    public func paint(_ content: DisplayContent, buffer: Int, front: Int) {
        if bytesPerPixel == 4 {
            _ = content.paint(into: base(buffer), pitch: lineLength, size: size, front: UnsafeRawPointer(base(front)))
        } else {
            let back = shadows[buffer]
            _ = content.paint(
                into: UnsafeMutableRawPointer(back), pitch: size.width * 4, size: size,
                front: UnsafeRawPointer(shadows[front]))
            for row in 0..<size.height {
                sixteen.convert(row: back + row * size.width, count: size.width, to: base(buffer) + row * lineLength)
            }
        }
    }

    private func pan(to buffer: Int) {
        guard doubleBuffered else { return }
        variable.yoffset = UInt32(buffer * size.height)
        // A driver that refuses the pan keeps showing the other half: one stale frame, the next pan tries again.
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
        // Drivers without FBIOBLANK (EINVAL) are always lit; `setPower` tells them apart.
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

    /// Puts the screen info back and the console in text mode, which makes it redraw itself.
    public func close(flipInFlight: Bool) {
        guard !closed else { return }
        closed = true
        var restore = original
        // Best effort on the way out: there is nobody left to tell, and the next program sets its own mode.
        _ = vitrine_ioctl_pointer(descriptor, VITRINE_FBIOPUT_VSCREENINFO, &restore)
        if let console = console?.number { _ = vitrine_ioctl_value(console, VITRINE_KDSETMODE, VITRINE_KD_TEXT) }
        console = nil
        munmap(pixels, mappedBytes)
        owned = nil
    }
}
