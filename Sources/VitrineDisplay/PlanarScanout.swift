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
/// COLOR_ENCODING and COLOR_RANGE for NV12: a legacy page flip may not change a framebuffer's format. The same
/// commits carry the corner's text on the plane above, where there is one (`CornerPlane`).
final class PlanarScanout {
    private typealias Property = (id: UInt32, entries: [String: UInt64])

    let plane: UInt32
    private let device: DRMDevice
    private let size: Size
    private let budget: MemoryBudget
    private let log: EventLog
    private let framebufferProperty: UInt32
    private let encodingProperty: Property?
    private let rangeProperty: Property?
    /// Per display buffer, its NV12 twin, charged to the budget while it exists.
    private var twins: [DumbBuffer?]
    /// Per buffer: the encoding of the NV12 picture it holds, nil when it holds RGB.
    private var shows: [YCbCrEncoding?]
    private var saidFailure = false
    /// The corner's text over a clip, where a plane above takes ARGB; nil where none does.
    let corner: CornerPlane?

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
        corner = CornerPlane(
            device: device, crtc: crtc, planes: chosen, screen: size, bufferCount: bufferCount, budget: budget, log: log
        )
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
        twins[buffer]?.free()
        twins[buffer] = nil
    }

    /// The framebuffer buffer `buffer` shows: its twin's while it holds NV12.
    func framebuffer(_ buffer: Int, rgb: UInt32) -> UInt32 {
        shows[buffer] != nil ? twins[buffer]?.framebuffer ?? rgb : rgb
    }

    /// Flips to buffer `buffer` (its twin or `rgb`, and the corner's layer over it or none): 0, or the errno of the
    /// refusal.
    func flip(_ buffer: Int, rgb: UInt32, serial: UInt64) -> Int32 {
        var settings: [(UInt32, UInt32, UInt64)] = [(plane, framebufferProperty, UInt64(framebuffer(buffer, rgb: rgb)))]
        if let shown = shows[buffer] {
            if let property = encodingProperty, let value = property.entries[shown.encodingName] {
                settings.append((plane, property.id, value))
            }
            if let property = rangeProperty, let value = property.entries[shown.rangeName] {
                settings.append((plane, property.id, value))
            }
        }
        settings += corner?.settings(for: buffer) ?? []
        guard commit(settings, flip: true, serial: serial) else { return errno }
        corner?.committed(buffer)
        return 0
    }

    /// After a legacy modeset to buffer `buffer` (which sets the primary plane only): the corner's plane as that
    /// buffer wants it, in a commit that waits for the kernel.
    func modesetDone(_ buffer: Int) {
        guard let corner else { return }
        let settings = corner.settings(for: buffer)
        // Refused, the text is off for the moment: the next picture's flip carries the plane's settings again.
        if !settings.isEmpty, commit(settings, flip: false, serial: 0) { corner.committed(buffer) }
    }

    /// Frees every twin and layer buffer; the owner calls it before the device's descriptor closes, with no flip in
    /// flight.
    func freeAll() {
        for index in twins.indices {
            twins[index]?.free()
            twins[index] = nil
            shows[index] = nil
        }
        corner?.freeAll()
    }

    private func commit(_ settings: [(UInt32, UInt32, UInt64)], flip: Bool, serial: UInt64) -> Bool {
        let objects = settings.map(\.0)
        let properties = settings.map(\.1)
        let values = settings.map(\.2)
        return vitrine_drm_atomic_commit(
            device.descriptor, objects, properties, values, Int32(settings.count), flip ? 1 : 0, serial) == 0
    }

    private func makeTwin() throws(PlayError) -> DumbBuffer {
        try DumbBuffer(
            device: device, size: size, format: .nv12, chargedTo: budget, for: "an NV12 \(size) scanout buffer")
    }
}
