import CUdev
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Screens plugged in and out: a udev monitor on the `drm` subsystem. With udevd running it listens to udev's
/// events; without it (a minimal system, the test VMs) to the kernel's own uevents, which for DRM connector
/// changes arrive just the same (the device nodes already exist).
public final class HotplugMonitor {
    private let udev: OpaquePointer
    private let monitor: OpaquePointer
    public let descriptor: Int32

    public init() throws(RuntimeError) {
        guard let udev = udev_new() else { throw RuntimeError("start udev", errno: ENOMEM) }
        let source = access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel"
        guard let monitor = udev_monitor_new_from_netlink(udev, source) else {
            udev_unref(udev)
            throw RuntimeError("open a udev monitor (\(source))", errno: errno)
        }
        udev_monitor_filter_add_match_subsystem_devtype(monitor, "drm", nil)
        guard udev_monitor_enable_receiving(monitor) >= 0 else {
            let failure = errno
            udev_monitor_unref(monitor)
            udev_unref(udev)
            throw RuntimeError("receive udev events", errno: failure)
        }
        let descriptor = udev_monitor_get_fd(monitor)
        // F_GETFL/F_SETFL fail only with EBADF, and udev's own descriptor is valid here.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        self.udev = udev
        self.monitor = monitor
        self.descriptor = descriptor
    }

    deinit {
        udev_monitor_unref(monitor)
        udev_unref(udev)
    }

    /// True when a DRM device reported a hotplug (or any change) since the last call.
    public func takeChanges() -> Bool {
        var changed = false
        while let device = udev_monitor_receive_device(monitor) {
            if let action = udev_device_get_action(device), String(cString: action) == "change" { changed = true }
            udev_device_unref(device)
        }
        return changed
    }
}
