import CLinux

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The virtual terminal Vitrine runs on, in process mode (VT_SETMODE): the kernel asks before switching away
/// (`releaseSignal`) and says when the VT is back (`acquireSignal`), so the player can drop DRM master, hold the
/// show, and take the screen back. Only used when standard input is a VT (`/dev/ttyN`); over SSH, a serial
/// console or as a service without a TTY there is nothing to switch.
public final class VirtualTerminal {
    public let path: String
    private let descriptor: Int32
    private var closed = false

    public static var releaseSignal: Int32 { vitrine_vt_release_signal() }
    public static var acquireSignal: Int32 { vitrine_vt_acquire_signal() }

    /// Nil when standard input is not a virtual terminal. The VT signals must already be blocked (signalfd):
    /// their default action would end the process.
    public init?() {
        guard isatty(0) == 1, let name = ttyname(0) else { return nil }
        let path = String(cString: name)
        let number = path.dropFirst("/dev/tty".count)
        guard path.hasPrefix("/dev/tty"), !number.isEmpty, number.allSatisfy(\.isNumber) else { return nil }
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard vitrine_vt_set_mode(descriptor, 1) == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        _ = vitrine_ioctl_value(descriptor, VITRINE_KDSETMODE, VITRINE_KD_GRAPHICS)
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Lets the pending switch away go ahead.
    public func allowRelease() { _ = vitrine_ioctl_value(descriptor, VITRINE_VT_RELDISP, 1) }

    /// Acknowledges that the VT is ours again.
    public func acknowledgeAcquire() { _ = vitrine_ioctl_value(descriptor, VITRINE_VT_RELDISP, VITRINE_VT_ACKACQ) }

    /// Back to automatic switching and text mode, as the console expects.
    public func close() {
        guard !closed else { return }
        closed = true
        _ = vitrine_vt_set_mode(descriptor, 0)
        _ = vitrine_ioctl_value(descriptor, VITRINE_KDSETMODE, VITRINE_KD_TEXT)
        Glibc.close(descriptor)
    }
}
