import CDRM
import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A clip's pictures in NV12 on the primary plane, where that plane takes Y'CbCr (vc4 on a Raspberry Pi, vkms on
/// newer kernels): the plane converts the colours, so the CPU only scales (1.5 bytes a pixel written, not 4, and
/// no matrix per pixel). Each of the display's buffers gets an NV12 twin when it first takes such a picture; the
/// twin is freed when the buffer takes an RGB picture again, which is safe then: the display machine paints only a
/// buffer that is neither on screen nor being flipped to. Flips are atomic commits of the plane's FB_ID, with its
/// COLOR_ENCODING and COLOR_RANGE for NV12: a legacy page flip may not change a framebuffer's format.
final class PlanarScanout {
    /// One NV12 dumb buffer and its framebuffer; its bytes stay charged to the budget while it exists.
    private final class Buffer {
        let handle: UInt32
        let pitch: Int
        let bytes: Int
        let framebuffer: UInt32
        let pixels: UnsafeMutableRawPointer
        private let charge: MemoryBudget.Charge

        init(
            handle: UInt32, pitch: Int, bytes: Int, framebuffer: UInt32, pixels: UnsafeMutableRawPointer,
            charge: consuming MemoryBudget.Charge
        ) {
            self.handle = handle
            self.pitch = pitch
            self.bytes = bytes
            self.framebuffer = framebuffer
            self.pixels = pixels
            self.charge = charge
        }
    }

    private typealias Property = (id: UInt32, entries: [String: UInt64])

    let plane: UInt32
    private let device: DRMDevice
    private let size: Size
    private let budget: MemoryBudget
    private let log: EventLog
    private let framebufferProperty: UInt32
    private let encodingProperty: Property?
    private let rangeProperty: Property?
    private var twins: [Buffer?]
    /// Per buffer: the encoding of the NV12 picture it holds, nil when it holds RGB.
    private var shows: [YCbCrEncoding?]
    private var saidFailure = false

    /// Nil when the CRTC's primary plane takes no Y'CbCr, the driver has no atomic modesetting, or the plane lacks
    /// the properties a commit needs; the display then converts clips on the CPU as for any screen.
    init?(device: DRMDevice, crtc: UInt32, size: Size, bufferCount: Int, budget: MemoryBudget, log: EventLog) {
        guard Frame.byteCount(size, .nv12) != nil, let chosen = device.clipPlanes(crtc: crtc), device.enableAtomic()
        else { return nil }
        let properties = device.propertyIDs(ofPlane: chosen.video)
        guard let framebuffer = properties["FB_ID"] else { return nil }
        plane = chosen.video
        self.device = device
        self.size = size
        self.budget = budget
        self.log = log
        framebufferProperty = framebuffer.id
        encodingProperty = properties["COLOR_ENCODING"]
        rangeProperty = properties["COLOR_RANGE"]
        twins = Array(repeating: nil, count: bufferCount)
        shows = Array(repeating: nil, count: bufferCount)
    }

    func holdsNV12(_ buffer: Int) -> Bool { shows[buffer] != nil }

    /// Copies the NV12 `frame` into buffer `buffer`'s twin (made first when it has none); false when no twin could
    /// be made (the budget, the driver), and the caller paints the frame in RGB instead.
    func paint(_ frame: Frame, buffer: Int) -> Bool {
        guard frame.layout == .nv12, frame.size == size else { return false }
        if twins[buffer] == nil {
            do {
                twins[buffer] = try makeTwin()
            } catch {
                if !saidFailure {
                    saidFailure = true
                    log(.warning, "\(device.path): clips go through RGB: \(error)")
                }
                return false
            }
        }
        guard let twin = twins[buffer] else { return false }
        let width = size.width
        for row in 0..<size.height {
            (twin.pixels + row * twin.pitch).copyMemory(from: frame.luma + row * width, byteCount: width)
        }
        let chroma = twin.pixels + twin.pitch * size.height
        for row in 0..<size.height / 2 {
            (chroma + row * twin.pitch).copyMemory(from: frame.chroma + row * width, byteCount: width)
        }
        shows[buffer] = frame.encoding
        return true
    }

    /// The NV12 picture of buffer `buffer` as RGB rows at `pixels` (text is to be drawn over it), read straight from
    /// the dumb buffer.
    func unpack(_ buffer: Int, into pixels: UnsafeMutableRawPointer, pitch: Int) -> Bool {
        guard let twin = twins[buffer], let encoding = shows[buffer] else { return false }
        let luma = twin.pixels.assumingMemoryBound(to: UInt8.self)
        return PlanarFrames.unpack(
            luma: luma, chroma: luma + twin.pitch * size.height, stride: twin.pitch, size: size, encoding: encoding,
            into: pixels, pitch: pitch)
    }

    /// Buffer `buffer` was painted in RGB: its twin, if any, goes.
    func paintedRGB(_ buffer: Int) {
        shows[buffer] = nil
        if let twin = twins[buffer] {
            free(twin)
            twins[buffer] = nil
        }
    }

    /// The framebuffer buffer `buffer` shows: its twin's while it holds NV12.
    func framebuffer(_ buffer: Int, rgb: UInt32) -> UInt32 {
        shows[buffer] != nil ? twins[buffer]?.framebuffer ?? rgb : rgb
    }

    /// Flips to buffer `buffer` (its twin or `rgb`): 0, or the errno of the refusal.
    func flip(_ buffer: Int, rgb: UInt32, serial: UInt64) -> Int32 {
        let target = framebuffer(buffer, rgb: rgb)
        var encoding: (UInt32, UInt64) = (0, 0)
        var range: (UInt32, UInt64) = (0, 0)
        if let shown = shows[buffer] {
            if let property = encodingProperty, let value = property.entries[shown.encodingName] {
                encoding = (property.id, value)
            }
            if let property = rangeProperty, let value = property.entries[shown.rangeName] {
                range = (property.id, value)
            }
        }
        let result = vitrine_drm_atomic_flip(
            device.descriptor, plane, framebufferProperty, target, encoding.0, encoding.1, range.0, range.1, serial)
        return result == 0 ? 0 : errno
    }

    /// Frees every twin; the owner calls it before the device's descriptor closes, with no flip in flight.
    func freeAll() {
        for index in twins.indices {
            if let twin = twins[index] { free(twin) }
            twins[index] = nil
            shows[index] = nil
        }
    }

    private func makeTwin() throws(PlayError) -> Buffer {
        let fd = device.descriptor
        guard let bytes = Frame.byteCount(size, .nv12) else { throw PlayError("an NV12 buffer of \(size)") }
        let charge: MemoryBudget.Charge
        do {
            charge = try budget.charge(bytes, for: "an NV12 \(size) scanout buffer")
        } catch {
            throw PlayError("\(error)")
        }
        var handle: UInt32 = 0
        var pitch: UInt32 = 0
        var total: UInt64 = 0
        // One byte a pixel, half as many rows again for the chroma: the Y' plane then the CbCr plane.
        guard
            vitrine_drm_create_dumb_bpp(
                fd, UInt32(size.width), UInt32(size.height + size.height / 2), 8, &handle, &pitch, &total) == 0
        else {
            throw PlayError("\(RuntimeError.last("create an NV12 \(size) dumb buffer", path: device.path))")
        }
        var offset: UInt64 = 0
        guard vitrine_drm_map_dumb(fd, handle, &offset) == 0, let pixels = vitrine_mmap_shared(fd, Int(total), offset)
        else {
            let failure = RuntimeError.last("map an NV12 dumb buffer", path: device.path)
            _ = vitrine_drm_destroy_dumb(fd, handle)
            throw PlayError("\(failure)")
        }
        var framebuffer: UInt32 = 0
        // Arrays, not tuples: the kernel reads all four entries, and a tuple element's address is not the tuple's.
        let handles: [UInt32] = [handle, handle, 0, 0]
        let pitches: [UInt32] = [pitch, pitch, 0, 0]
        let offsets: [UInt32] = [0, pitch * UInt32(size.height), 0, 0]
        let added = drmModeAddFB2(
            fd, UInt32(size.width), UInt32(size.height), VITRINE_DRM_FORMAT_NV12, handles, pitches, offsets,
            &framebuffer, 0)
        guard added == 0 else {
            let failure = RuntimeError.last("add an NV12 framebuffer", path: device.path)
            munmap(pixels, Int(total))
            _ = vitrine_drm_destroy_dumb(fd, handle)
            throw PlayError("\(failure)")
        }
        return Buffer(
            handle: handle, pitch: Int(pitch), bytes: Int(total), framebuffer: framebuffer, pixels: pixels,
            charge: charge)
    }

    private func free(_ twin: Buffer) {
        // Freeing: the kernel drops them with the descriptor anyway, so a refusal leaks nothing.
        _ = drmModeRmFB(device.descriptor, twin.framebuffer)
        munmap(twin.pixels, twin.bytes)
        _ = vitrine_drm_destroy_dumb(device.descriptor, twin.handle)
    }
}
