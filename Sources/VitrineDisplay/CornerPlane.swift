import CDRM
import VitrineCore
import VitrineImage
import VitrinePlatform

/// The corner's text (the clock, the date, MQTT's texts) on a plane above a clip's NV12 picture: the plane below
/// converts the picture's colours, this one lays the text over it as premultiplied ARGB, so the CPU never turns a
/// clip's pictures into RGB for the clock. Each display buffer has an ARGB buffer of its own the size of the
/// text's rectangle (made larger when the text outgrows it), written only while that display buffer is neither on
/// screen nor being flipped to, so a flip never shows a half-written layer.
final class CornerPlane {
    let plane: UInt32
    private let device: DRMDevice
    private let crtc: UInt32
    private let screen: Size
    private let budget: MemoryBudget
    private let log: EventLog
    private let properties: [String: UInt32]
    /// The `zpos` that puts this plane above the clip's, where it is not there already.
    private let stacking: UInt64?
    private var buffers: [DumbBuffer?]
    /// Per buffer: the layer its ARGB buffer holds.
    private var holds: [CornerLayer?]
    /// Per buffer: the layer its flip shows (nil: the plane off).
    private var shows: [CornerLayer?]
    /// Whether the last commit left the plane on.
    private var isOn = false
    private var saidFailure = false
    private var saidUse = false

    private static let needed = [
        "FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H", "CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H",
    ]

    /// Nil when the plane lacks a property a commit sets.
    init?(
        device: DRMDevice, crtc: UInt32, planes: VideoPlanes, screen: Size, bufferCount: Int, budget: MemoryBudget,
        log: EventLog
    ) {
        guard let plane = planes.text else { return nil }
        let found = device.propertyIDs(ofPlane: plane).mapValues(\.id)
        guard Self.needed.allSatisfy({ found[$0] != nil }), planes.textStacking == nil || found["zpos"] != nil
        else { return nil }
        self.plane = plane
        self.device = device
        self.crtc = crtc
        self.screen = screen
        self.budget = budget
        self.log = log
        properties = found
        stacking = planes.textStacking
        buffers = Array(repeating: nil, count: bufferCount)
        holds = Array(repeating: nil, count: bufferCount)
        shows = Array(repeating: nil, count: bufferCount)
    }

    /// `layer` over buffer `buffer`'s picture from its next flip on (nil: nothing there). False when the layer
    /// could not be put in a buffer (the budget, the driver): the caller paints the text into the picture instead.
    func show(_ layer: CornerLayer?, buffer: Int) -> Bool {
        shows[buffer] = nil
        guard let layer else { return true }
        let rect = layer.rect
        guard rect.x >= 0, rect.y >= 0, rect.width > 0, rect.height > 0, rect.x + rect.width <= screen.width,
            rect.y + rect.height <= screen.height
        else { return false }
        if let held = buffers[buffer], held.size.width < rect.width || held.size.height < rect.height {
            held.free()
            buffers[buffer] = nil
            holds[buffer] = nil
        }
        if buffers[buffer] == nil {
            do {
                buffers[buffer] = try makeBuffer(for: rect)
            } catch {
                if !saidFailure {
                    saidFailure = true
                    log(.warning, "\(device.path): the corner's text is painted into the clip's pictures: \(error)")
                }
                return false
            }
        }
        guard let target = buffers[buffer] else { return false }
        if holds[buffer] !== layer {
            layer.pixels.withUnsafeBytes { source in
                guard let base = source.baseAddress else { return }
                let rowBytes = rect.width * 4
                for row in 0..<rect.height {
                    (target.pixels + row * target.pitch).copyMemory(from: base + row * rowBytes, byteCount: rowBytes)
                }
            }
            holds[buffer] = layer
        }
        if !saidUse {
            saidUse = true
            log("\(device.path): the corner's text goes to plane \(plane), above the clip")
        }
        shows[buffer] = layer
        return true
    }

    /// The plane's settings (object, property, value) for a commit that flips to buffer `buffer`: on with its
    /// layer, or off when it was on.
    func settings(for buffer: Int) -> [(UInt32, UInt32, UInt64)] {
        var named: [(String, UInt64)]
        if let layer = shows[buffer], let target = buffers[buffer] {
            let rect = layer.rect
            // SRC_* are 16.16 fixed point in the framebuffer; CRTC_* whole pixels on the screen: no scaling.
            named = [
                ("FB_ID", UInt64(target.framebuffer)), ("CRTC_ID", UInt64(crtc)), ("SRC_X", 0), ("SRC_Y", 0),
                ("SRC_W", UInt64(rect.width) << 16), ("SRC_H", UInt64(rect.height) << 16), ("CRTC_X", UInt64(rect.x)),
                ("CRTC_Y", UInt64(rect.y)), ("CRTC_W", UInt64(rect.width)), ("CRTC_H", UInt64(rect.height)),
            ]
            if let stacking { named.append(("zpos", stacking)) }
        } else {
            named = isOn ? [("FB_ID", 0), ("CRTC_ID", 0)] : []
        }
        return named.compactMap { name, value in properties[name].map { (plane, $0, value) } }
    }

    /// A commit with buffer `buffer`'s settings went through.
    func committed(_ buffer: Int) { isOn = shows[buffer] != nil }

    /// Frees every buffer; the owner calls it with no flip in flight (the kernel turns the plane off with its
    /// framebuffer).
    func freeAll() {
        for index in buffers.indices {
            buffers[index]?.free()
            buffers[index] = nil
            holds[index] = nil
            shows[index] = nil
        }
        isOn = false
    }

    private func makeBuffer(for rect: Placement.Rect) throws(PlayError) -> DumbBuffer {
        // Room for a longer line (a wider minute, a new text) without a new buffer each time.
        let size = Size(
            width: min(screen.width, (rect.width + 63) / 64 * 64),
            height: min(screen.height, (rect.height + 15) / 16 * 16))
        return try DumbBuffer(
            device: device, size: size, format: .argb8888, chargedTo: budget, for: "the corner's text plane")
    }
}
