import CDRM
import CLinux
import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A real screen through DRM/KMS: two dumb buffers with XRGB8888 framebuffers, modesets and page flips with
/// completion events, as the display state machine asks. On close the CRTC that was there before (the console,
/// usually) is put back and everything is freed in reverse order.
public final class DRMDisplay: DisplayExecutor {
    public private(set) var size: Size
    public let connector: DRMConnector
    public private(set) var mode: DRMMode
    public var refreshPeriod: Double? { mode.refreshPeriod }
    /// The mode the next `rebuildBuffers` makes buffers for (set when the connector came back at another size).
    public var pendingMode: DRMMode?
    /// Two, or three when fades are on and the budget has room (the next step painted during a flip).
    public let bufferCount: Int
    public var name: String { "\(device.path) (\(device.driver) \(connector.name))" }
    /// The card's device path and the connector's id, to find the CEC adapter on the same HDMI port.
    package var cardPath: String { device.path }
    private let seat: DRMSeat
    private var device: DRMDevice { seat.device }
    private let crtc: UInt32
    private let saved: UnsafeMutablePointer<drmModeCrtc>?
    private var buffers: [DumbBuffer] = []
    private let log: EventLog
    private var charge: MemoryBudget.Charge?
    private let budget: MemoryBudget
    private var closed = false
    private var saidModesetFailure = false
    /// Clips' NV12 pictures on the primary plane, where it takes them; nil elsewhere.
    private var planar: PlanarScanout?
    public var takesPlanarFrames: Bool { planar != nil }

    public var eventDescriptors: [Int32] { [device.descriptor] }

    /// The one screen of `device`.
    public convenience init(
        device: DRMDevice, connector: DRMConnector, mode: DRMMode, budget: MemoryBudget, bufferCount: Int = 2,
        log: EventLog
    ) throws(PlayError) {
        try self.init(
            seat: DRMSeat(device: device, holders: 1), connector: connector, crtc: nil, mode: mode, budget: budget,
            bufferCount: bufferCount, log: log)
    }

    /// One of the screens of `seat`'s card, on `crtc` (else the CRTC the connector can use first).
    public init(
        seat: DRMSeat, connector: DRMConnector, crtc: UInt32?, mode: DRMMode, budget: MemoryBudget,
        bufferCount: Int = 2, log: EventLog
    ) throws(PlayError) {
        self.bufferCount = bufferCount
        self.seat = seat
        self.connector = connector
        self.mode = mode
        self.log = log
        self.budget = budget
        size = mode.size
        guard let crtc = crtc ?? seat.device.crtc(for: connector) else {
            throw PlayError("\(seat.device.path): no CRTC can drive \(connector.name)")
        }
        self.crtc = crtc
        do {
            charge = try budget.charge(
                (size.xrgbByteCount ?? Int.max / 4) * bufferCount,
                for: "\(bufferCount) \(size) scanout buffers on \(connector.name)")
        } catch {
            throw PlayError("\(error)")
        }
        let device = seat.device
        saved = drmModeGetCrtc(device.descriptor, crtc)
        planar = PlanarScanout(
            device: device, crtc: crtc, size: size, bufferCount: bufferCount, budget: budget, log: log)
        if let planar {
            let text = planar.corner.map { "; the corner's text to plane \($0.plane) above them" } ?? ""
            log(
                "\(device.path): clips go to primary plane \(planar.plane) as NV12; the plane converts their colours"
                    + text)
        }
        // No modeset yet: the first picture sets the mode, so a start inside the schedule's off hours never lights
        // the panel.
        for _ in 0..<bufferCount {
            do {
                buffers.append(try makeBuffer())
            } catch {
                freeBuffers()
                throw error
            }
        }
    }

    deinit { close(flipInFlight: false) }

    private func makeBuffer() throws(PlayError) -> DumbBuffer {
        let made = try DumbBuffer(device: device, size: size, format: .xrgb8888)
        memset(made.pixels, 0, made.bytes)
        return made
    }

    public func paint(_ content: DisplayContent, buffer: Int, front: Int) {
        var content = content
        if let planar {
            _ = planar.corner?.show(nil, buffer: buffer)
            if case .frame(let frame, _) = content, frame.layout == .nv12, planar.paint(frame, buffer: buffer) {
                return
            }
            if case .overlay(let rects, let draw) = content, buffer != front {
                if planar.holdsNV12(front),
                    planar.unpack(front, into: buffers[buffer].pixels, pitch: buffers[buffer].pitch)
                {
                    // Text over a picture the plane shows: that picture in RGB first, then the text over all of it.
                    content = .overlay(copying: [], draw)
                } else if rects != nil, planar.holdsNV12(buffer) {
                    // The buffer's RGB pixels are older than the NV12 picture it last showed: all of the front.
                    content = .overlay(copying: nil, draw)
                }
            }
        }
        _ = content.paint(
            into: buffers[buffer].pixels, pitch: buffers[buffer].pitch, size: size,
            front: UnsafeRawPointer(buffers[front].pixels))
        planar?.paintedRGB(buffer)
    }

    public var takesCornerLayer: Bool { planar?.corner != nil }

    public func showLayer(_ layer: CornerLayer, buffer: Int) -> Bool {
        planar?.corner?.show(layer, buffer: buffer) ?? false
    }

    public func flip(buffer: Int, serial: UInt64) -> DisplayMachine<DisplayContent>.Refusal? {
        let refused: Int32
        if let planar {
            refused = planar.flip(buffer, rgb: buffers[buffer].framebuffer, serial: serial)
        } else {
            refused =
                vitrine_drm_page_flip(device.descriptor, crtc, buffers[buffer].framebuffer, serial) == 0 ? 0 : errno
        }
        guard refused != 0 else { return nil }
        switch refused {
        case EBUSY: return .busy
        case EINVAL: return .invalid
        case EACCES, EPERM: return .denied
        default: return .other(String(cString: strerror(refused)))
        }
    }

    public func modeset(buffer: Int) -> Bool {
        var connectorID = connector.id
        var raw = mode.raw
        let framebuffer = planar?.framebuffer(buffer, rgb: buffers[buffer].framebuffer) ?? buffers[buffer].framebuffer
        if drmModeSetCrtc(device.descriptor, crtc, framebuffer, 0, 0, &connectorID, 1, &raw) != 0,
            !saidModesetFailure
        {
            saidModesetFailure = true
            log(.warning, "\(RuntimeError.last("set mode \(mode) on \(connector.name)", path: device.path))")
        }
        planar?.modesetDone(buffer)
        return true
    }

    /// Off: DPMS off when the connector has the property, else the CRTC is disabled. On: DPMS on (after the
    /// machine's modeset, which an off CRTC needs anyway).
    public func setPower(_ on: Bool) {
        let fd = device.descriptor
        if let dpms = connector.dpmsProperty, drmModeConnectorSetProperty(fd, connector.id, dpms, on ? 0 : 3) == 0 {
            return
        }
        // No DPMS: the CRTC disabled is off; refused, the panel stays lit and the next modeset puts the picture back.
        if !on { _ = drmModeSetCrtc(fd, crtc, 0, 0, 0, nil, 0, nil) }
    }

    public func readCompletions() -> [(serial: UInt64, sequence: UInt32, time: Double)] {
        let completions = device.takeFlips(crtc: crtc)
        guard !completions.isEmpty else { return [] }
        // A driver that stamps no time (0) is taken to have completed the flip now.
        let now = MonotonicClock.seconds()
        return completions.map { ($0.serial, $0.sequence, $0.time > 0 ? min($0.time, now) : now) }
    }

    /// Gives DRM master up (the VT is being switched away).
    public func dropMaster() { seat.dropMaster() }

    public func takeMaster() -> Bool {
        do {
            try seat.takeMaster()
            return true
        } catch {
            log(.warning, "\(error)")
            return false
        }
    }

    /// The connector as the card reports it now (after a hotplug).
    public func probeConnector() -> DRMConnector? {
        device.connectors().first { $0.id == connector.id }
    }

    /// Another mode of the same size (a replug at another refresh rate): used from the next modeset on.
    public func use(_ newMode: DRMMode) {
        precondition(newMode.size == size, "a mode of another size needs new buffers")
        mode = newMode
    }

    /// Buffers for `pendingMode` (the connector came back at another resolution), charged to the budget first. The
    /// machine asks only with no flip in flight.
    public func rebuildBuffers() -> Bool {
        guard let newMode = pendingMode else { return !buffers.isEmpty }
        pendingMode = nil
        planar?.freeAll()
        planar = nil
        freeBuffers()
        charge = nil
        size = newMode.size
        mode = newMode
        do {
            charge = try budget.charge(
                (size.xrgbByteCount ?? Int.max / 4) * bufferCount,
                for: "\(bufferCount) \(size) scanout buffers on \(connector.name)")
            for _ in 0..<bufferCount { buffers.append(try makeBuffer()) }
            planar = PlanarScanout(
                device: device, crtc: crtc, size: size, bufferCount: bufferCount, budget: budget, log: log)
            return true
        } catch {
            log(.error, "cannot drive \(connector.name) at \(newMode): \(error)")
            freeBuffers()
            charge = nil
            return false
        }
    }

    /// Waits for a flip in flight, puts back the CRTC that was there before, then frees framebuffers and buffers in
    /// reverse order and gives up DRM master.
    public func close(flipInFlight: Bool) {
        guard !closed else { return }
        closed = true
        if flipInFlight {
            // Until this CRTC's completion: another screen's may come first on a shared descriptor.
            let deadline = MonotonicClock.seconds() + DisplayMachine<DisplayContent>.flipTimeout
            while device.takeFlips(crtc: crtc).isEmpty {
                let left = deadline - MonotonicClock.seconds()
                var waitFor = pollfd(fd: device.descriptor, events: Int16(POLLIN), revents: 0)
                guard left > 0, poll(&waitFor, 1, Int32(left * 1000) + 1) > 0 else { break }
            }
        }
        if let saved {
            var connectorID = connector.id
            if saved.pointee.mode_valid != 0 {
                var mode = saved.pointee.mode
                // On the way out, the console's own mode back as found; nobody is left to tell if the driver refuses.
                _ = drmModeSetCrtc(
                    device.descriptor, saved.pointee.crtc_id, saved.pointee.buffer_id, saved.pointee.x, saved.pointee.y,
                    &connectorID, 1, &mode)
            } else {
                _ = drmModeSetCrtc(device.descriptor, saved.pointee.crtc_id, 0, 0, 0, nil, 0, nil)
            }
            drmModeFreeCrtc(saved)
        }
        planar?.freeAll()
        freeBuffers()
        seat.leave()
    }

    private func freeBuffers() {
        for buffer in buffers.reversed() { buffer.free() }
        buffers = []
    }
}
