import CDRM
import CLinux
import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A real screen through DRM/KMS: two dumb buffers with XRGB8888 framebuffers, the initial modeset, then page flips
/// with completion events, one at a time; the buffer on screen is never written. On close the CRTC that was
/// there before (the console, usually) is put back and everything is freed in reverse order.
public final class DRMDisplay: ScanoutDisplay {
    struct Buffer {
        var handle: UInt32
        var pitch: Int
        var bytes: Int
        var framebuffer: UInt32
        var pixels: UnsafeMutableRawPointer
    }

    /// How long a flip may take before the driver is taken to have no flip events (some virtual drivers).
    static let flipTimeout = 0.25

    public private(set) var size: Size
    public let connector: DRMConnector
    public private(set) var mode: DRMMode
    public var snapshots: SnapshotWriter? { nil }
    private let device: DRMDevice
    private let crtc: UInt32
    private let saved: UnsafeMutablePointer<drmModeCrtc>?
    private var buffers: [Buffer] = []
    private var front = 0
    private let flips = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    private var flipping: ShownContent?
    private var waiting: DisplayContent?
    private let watchdog: MonotonicTimer
    private var modesetPerFrame = false
    private let log: (String) -> Void
    private var charge: MemoryBudget.Charge?
    private let budget: MemoryBudget
    private var closed = false

    public var eventDescriptors: [Int32] { [device.descriptor, watchdog.descriptor] }
    public var isBusy: Bool { flipping != nil || waiting != nil }

    public init(
        device: DRMDevice, connector: DRMConnector, mode: DRMMode, budget: MemoryBudget, log: @escaping (String) -> Void
    ) throws(PlayError) {
        self.device = device
        self.connector = connector
        self.mode = mode
        self.log = log
        self.budget = budget
        size = mode.size
        guard let crtc = device.crtc(for: connector) else {
            throw PlayError("\(device.path): no CRTC can drive \(connector.name)")
        }
        self.crtc = crtc
        do {
            watchdog = try MonotonicTimer()
        } catch {
            throw PlayError("\(error)")
        }
        do {
            charge = try budget.charge(
                (size.xrgbByteCount ?? Int.max / 4) * 2, for: "two \(size) scanout buffers on \(connector.name)")
        } catch {
            throw PlayError("\(error)")
        }
        flips.initialize(to: 0)
        saved = drmModeGetCrtc(device.descriptor, crtc)
        for _ in 0..<2 {
            do {
                buffers.append(try makeBuffer())
            } catch {
                freeBuffers()
                throw error
            }
        }
        var connectorID = connector.id
        var raw = mode.raw
        guard drmModeSetCrtc(device.descriptor, crtc, buffers[0].framebuffer, 0, 0, &connectorID, 1, &raw) == 0 else {
            let failure = RuntimeError.last("set mode \(mode) on \(connector.name)", path: device.path)
            freeBuffers()
            throw PlayError("\(failure)")
        }
    }

    deinit {
        close()
        flips.deallocate()
    }

    private func makeBuffer() throws(PlayError) -> Buffer {
        var handle: UInt32 = 0
        var pitch: UInt32 = 0
        var bytes: UInt64 = 0
        let fd = device.descriptor
        guard vitrine_drm_create_dumb(fd, UInt32(size.width), UInt32(size.height), &handle, &pitch, &bytes) == 0 else {
            throw PlayError("\(RuntimeError.last("create a \(size) dumb buffer", path: device.path))")
        }
        var offset: UInt64 = 0
        guard vitrine_drm_map_dumb(fd, handle, &offset) == 0,
            let pixels = vitrine_mmap_shared(fd, Int(bytes), offset)
        else {
            let failure = RuntimeError.last("map a dumb buffer", path: device.path)
            _ = vitrine_drm_destroy_dumb(fd, handle)
            throw PlayError("\(failure)")
        }
        var framebuffer: UInt32 = 0
        var handles: (UInt32, UInt32, UInt32, UInt32) = (handle, 0, 0, 0)
        var pitches: (UInt32, UInt32, UInt32, UInt32) = (pitch, 0, 0, 0)
        var offsets: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        let added = withUnsafePointer(to: &handles.0) { handlesPointer in
            withUnsafePointer(to: &pitches.0) { pitchesPointer in
                withUnsafePointer(to: &offsets.0) { offsetsPointer in
                    drmModeAddFB2(
                        fd, UInt32(size.width), UInt32(size.height), VITRINE_DRM_FORMAT_XRGB8888, handlesPointer,
                        pitchesPointer, offsetsPointer, &framebuffer, 0)
                }
            }
        }
        guard added == 0 else {
            let failure = RuntimeError.last("add an XRGB8888 framebuffer", path: device.path)
            munmap(pixels, Int(bytes))
            _ = vitrine_drm_destroy_dumb(fd, handle)
            throw PlayError("\(failure)")
        }
        memset(pixels, 0, Int(bytes))
        return Buffer(handle: handle, pitch: Int(pitch), bytes: Int(bytes), framebuffer: framebuffer, pixels: pixels)
    }

    public func show(_ content: DisplayContent) {
        guard flipping == nil else {
            waiting = content
            return
        }
        let back = buffers[1 - front]
        flipping = content.paint(
            into: back.pixels, pitch: back.pitch, size: size, front: UnsafeRawPointer(buffers[front].pixels))
        if !modesetPerFrame {
            let flipped = drmModePageFlip(
                device.descriptor, crtc, back.framebuffer, VITRINE_DRM_MODE_PAGE_FLIP_EVENT,
                UnsafeMutableRawPointer(flips))
            if flipped == 0 {
                watchdog.arm(at: MonotonicClock.seconds() + Self.flipTimeout)
                return
            }
            log(
                "\(device.path) (\(device.driver)): page flip refused (\(String(cString: strerror(errno)))); "
                    + "setting the mode for each frame from now on")
            modesetPerFrame = true
        }
        setCRTC(to: back)
        watchdog.arm(at: MonotonicClock.seconds())
    }

    public private(set) var isPoweredOn = true

    /// A driver that took no page flips gets a modeset per picture, which may tear: no crossfades there.
    public var blendsCleanly: Bool { !modesetPerFrame }

    /// Off: DPMS off when the connector has the property, else the CRTC is disabled. On: a fresh modeset with the
    /// picture in the front buffer, then DPMS on.
    public func setPower(_ on: Bool) {
        guard on != isPoweredOn else { return }
        isPoweredOn = on
        let fd = device.descriptor
        if on {
            setCRTC(to: buffers[front])
            if let dpms = connector.dpmsProperty { _ = drmModeConnectorSetProperty(fd, connector.id, dpms, 0) }
        } else if let dpms = connector.dpmsProperty, drmModeConnectorSetProperty(fd, connector.id, dpms, 3) == 0 {
            return
        } else {
            _ = drmModeSetCrtc(fd, crtc, 0, 0, 0, nil, 0, nil)
        }
    }

    private func setCRTC(to buffer: Buffer) {
        var connectorID = connector.id
        var raw = mode.raw
        _ = drmModeSetCrtc(device.descriptor, crtc, buffer.framebuffer, 0, 0, &connectorID, 1, &raw)
    }

    public func handleEvents() -> (completed: ShownContent?, now: Double) {
        let before = flips.pointee
        _ = vitrine_drm_handle_events(device.descriptor)
        let fired = watchdog.acknowledge()
        let now = MonotonicClock.seconds()
        guard flipping != nil else { return (nil, now) }
        if flips.pointee == before {
            guard fired else { return (nil, now) }
            if !modesetPerFrame {
                log(
                    "\(device.path) (\(device.driver)): no page-flip event within \(Int(Self.flipTimeout * 1000)) ms; "
                        + "setting the mode for each frame from now on")
                modesetPerFrame = true
                setCRTC(to: buffers[1 - front])
            }
        }
        watchdog.disarm()
        front = 1 - front
        let shown = flipping
        flipping = nil
        if let waiting {
            self.waiting = nil
            show(waiting)
        }
        return (shown, now)
    }

    /// Gives DRM master up (the VT is being switched away); waits for a flip in flight first.
    public func releaseMaster() {
        finishFlip()
        device.dropMaster()
    }

    /// Takes DRM master back and sets the mode again with the picture that was on screen.
    public func reacquireMaster() throws(RuntimeError) {
        try device.becomeMaster()
        restoreScanout()
    }

    /// The connector as the card reports it now (after a hotplug).
    public func probeConnector() -> DRMConnector? {
        device.connectors().first { $0.id == connector.id }
    }

    /// Sets the mode again and shows the front buffer: after a reconnect or a wake, some screens stay dark otherwise.
    public func restoreScanout() {
        setCRTC(to: buffers[front])
    }

    /// Another mode for the same connector (it came back at another resolution): new buffers, charged to the
    /// budget first, and a modeset. Content waiting for a flip is dropped; the caller redraws.
    public func reconfigure(to newMode: DRMMode) throws(PlayError) {
        finishFlip()
        waiting = nil
        flipping = nil
        freeBuffers()
        charge = nil
        size = newMode.size
        mode = newMode
        do {
            charge = try budget.charge(
                (size.xrgbByteCount ?? Int.max / 4) * 2, for: "two \(size) scanout buffers on \(connector.name)")
            for _ in 0..<2 { buffers.append(try makeBuffer()) }
        } catch let error as PlayError {
            throw error
        } catch {
            throw PlayError("\(error)")
        }
        front = 0
        setCRTC(to: buffers[0])
    }

    private func finishFlip() {
        guard flipping != nil && !modesetPerFrame else { return }
        var waitFor = pollfd(fd: device.descriptor, events: Int16(POLLIN), revents: 0)
        if poll(&waitFor, 1, Int32(Self.flipTimeout * 1000)) > 0 { _ = vitrine_drm_handle_events(device.descriptor) }
    }

    /// Waits for a flip in flight, puts back the CRTC that was there before, then frees framebuffers and buffers in
    /// reverse order and gives up DRM master.
    public func close() {
        guard !closed else { return }
        closed = true
        if flipping != nil && !modesetPerFrame {
            var waitFor = pollfd(fd: device.descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&waitFor, 1, Int32(Self.flipTimeout * 1000)) > 0 {
                _ = vitrine_drm_handle_events(device.descriptor)
            }
        }
        if let saved {
            var connectorID = connector.id
            if saved.pointee.mode_valid != 0 {
                var mode = saved.pointee.mode
                _ = drmModeSetCrtc(
                    device.descriptor, saved.pointee.crtc_id, saved.pointee.buffer_id, saved.pointee.x, saved.pointee.y,
                    &connectorID, 1, &mode)
            } else {
                _ = drmModeSetCrtc(device.descriptor, saved.pointee.crtc_id, 0, 0, 0, nil, 0, nil)
            }
            drmModeFreeCrtc(saved)
        }
        freeBuffers()
        device.dropMaster()
        device.close()
    }

    private func freeBuffers() {
        for buffer in buffers.reversed() {
            _ = drmModeRmFB(device.descriptor, buffer.framebuffer)
            munmap(buffer.pixels, buffer.bytes)
            _ = vitrine_drm_destroy_dumb(device.descriptor, buffer.handle)
        }
        buffers = []
    }
}
