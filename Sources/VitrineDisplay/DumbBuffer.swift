import CDRM
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A dumb buffer mapped into memory with a framebuffer on it: what every plane here scans out. Its owner frees it
/// once (`free`), before the device's descriptor closes; the kernel keeps the memory while a plane still shows the
/// framebuffer, but the owner frees only a buffer no flip shows or is flipping to.
final class DumbBuffer {
    enum Format {
        case xrgb8888, argb8888
        /// The Y' plane, then the CbCr plane of half as many rows, in one buffer with one pitch.
        case nv12

        var name: String {
            switch self {
            case .xrgb8888: return "XRGB8888"
            case .argb8888: return "ARGB8888"
            case .nv12: return "NV12"
            }
        }
    }

    let size: Size
    let handle: UInt32
    let pitch: Int
    let bytes: Int
    let framebuffer: UInt32
    let pixels: UnsafeMutableRawPointer
    private let device: DRMDevice
    /// Bytes charged to the budget for this buffer alone; nil when its owner charges a group of them.
    private let charge: MemoryBudget.Charge?
    private var freed = false

    /// Charged to `budget` for `purpose` where one is given (else its owner charges it with others).
    init(device: DRMDevice, size: Size, format: Format, chargedTo budget: MemoryBudget? = nil, for purpose: String = "")
        throws(PlayError)
    {
        var charge: MemoryBudget.Charge?
        if let budget {
            guard let bytes = format == .nv12 ? Frame.byteCount(size, .nv12) : size.xrgbByteCount else {
                throw PlayError("\(purpose): \(size) is too large")
            }
            do {
                charge = try budget.charge(bytes, for: purpose)
            } catch {
                throw PlayError("\(error)")
            }
        }
        let fd = device.descriptor
        let (rows, bitsPerPixel, fourcc) =
            switch format {
            case .xrgb8888: (size.height, UInt32(32), VITRINE_DRM_FORMAT_XRGB8888)
            case .argb8888: (size.height, UInt32(32), VITRINE_DRM_FORMAT_ARGB8888)
            // One byte a pixel, half as many rows again for the chroma.
            case .nv12: (size.height + size.height / 2, UInt32(8), VITRINE_DRM_FORMAT_NV12)
            }
        var handle: UInt32 = 0
        var pitch: UInt32 = 0
        var total: UInt64 = 0
        guard
            vitrine_drm_create_dumb_bpp(
                fd, UInt32(size.width), UInt32(rows), bitsPerPixel, &handle, &pitch, &total) == 0
        else {
            throw PlayError("\(RuntimeError.last("create a \(size) \(format.name) dumb buffer", path: device.path))")
        }
        var offset: UInt64 = 0
        guard vitrine_drm_map_dumb(fd, handle, &offset) == 0, let pixels = vitrine_mmap_shared(fd, Int(total), offset)
        else {
            let failure = RuntimeError.last("map a dumb buffer", path: device.path)
            // Cleaning up after the failure that is reported: a second error would add nothing.
            _ = vitrine_drm_destroy_dumb(fd, handle)
            throw PlayError("\(failure)")
        }
        var framebuffer: UInt32 = 0
        // Arrays, not tuples: the kernel reads all four entries, and a tuple element's address is not the tuple's.
        let chroma: UInt32 = format == .nv12 ? handle : 0
        let handles: [UInt32] = [handle, chroma, 0, 0]
        let pitches: [UInt32] = [pitch, format == .nv12 ? pitch : 0, 0, 0]
        let offsets: [UInt32] = [0, format == .nv12 ? pitch * UInt32(size.height) : 0, 0, 0]
        let added = drmModeAddFB2(
            fd, UInt32(size.width), UInt32(size.height), fourcc, handles, pitches, offsets, &framebuffer, 0)
        guard added == 0 else {
            let failure = RuntimeError.last("add an \(format.name) framebuffer", path: device.path)
            munmap(pixels, Int(total))
            _ = vitrine_drm_destroy_dumb(fd, handle)
            throw PlayError("\(failure)")
        }
        self.device = device
        self.size = size
        self.handle = handle
        self.pitch = Int(pitch)
        bytes = Int(total)
        self.framebuffer = framebuffer
        self.pixels = pixels
        self.charge = charge
    }

    /// Frees the framebuffer, the mapping and the buffer, once.
    func free() {
        guard !freed else { return }
        freed = true
        // Freeing: the kernel drops them with the descriptor anyway, so a refusal leaks nothing.
        _ = drmModeRmFB(device.descriptor, framebuffer)
        munmap(pixels, bytes)
        _ = vitrine_drm_destroy_dumb(device.descriptor, handle)
    }
}
