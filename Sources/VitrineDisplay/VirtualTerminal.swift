import CLinux
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The virtual terminal Vitrine runs on, held as compositors hold theirs:
/// - process mode (VT_SETMODE): the kernel asks before switching away (`releaseSignal`) and says when the VT is
///   back (`acquireSignal`), so the player can give the screen up and take it back;
/// - graphics mode (KDSETMODE), so the console draws no text or cursor over the pictures;
/// - the keyboard off (KDSKBMODE K_OFF) and the line raw without signals, so a kiosk keyboard's Ctrl-C, Ctrl-Z or
///   Ctrl-\ never reaches the player as a signal and no key lands in the tty. Keys come through libinput instead,
///   and Ctrl+Alt+F1...F12 switch VTs through `activate` (unless switching is forbidden).
/// Everything is put back on close; after a crash the unit's TTYReset does it. Only used when standard input is a
/// VT (`/dev/ttyN`); over SSH, a serial console or as a service without a TTY there is nothing to hold.
///
/// The VT can be hung up under the player (systemd's TTYVHangup of a unit that used it before, a `vhangup`):
/// every descriptor on it then fails with EIO and the player is no longer its controlling process, so it could
/// neither let a VT switch go ahead nor keep the keyboard off. `descriptor` is watched by the event loop; on a
/// hangup `reacquire` opens the VT again, takes it as the controlling terminal and sets it up again.
public final class VirtualTerminal {
    public let path: String
    public let number: Int
    /// `display.vtSwitching`; a reload changes it.
    public var allowsSwitching: Bool
    private var owned: Descriptor
    public var descriptor: Int32 { owned.number }
    private let log: EventLog
    /// The keyboard mode and line settings found at start, put back on close.
    private var keyboardMode: Int32 = -1
    private var savedLine: termios?
    private var closed = false

    public static var releaseSignal: Int32 { vitrine_vt_release_signal() }
    public static var acquireSignal: Int32 { vitrine_vt_acquire_signal() }

    /// Nil when standard input is not a virtual terminal. The VT signals must already be blocked (signalfd):
    /// their default action would end the process.
    public init?(allowSwitching: Bool, log: EventLog) {
        guard isatty(0) == 1, let name = ttyname(0) else { return nil }
        let path = String(cString: name)
        let digits = path.dropFirst("/dev/tty".count)
        guard path.hasPrefix("/dev/tty"), let number = Int(digits), number > 0 else { return nil }
        let owned = Descriptor(taking: open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK))
        let descriptor = owned.number
        guard descriptor >= 0, vitrine_vt_set_mode(descriptor, 1) == 0 else { return nil }
        self.path = path
        self.number = number
        self.owned = owned
        self.log = log
        allowsSwitching = allowSwitching
        var mode: Int32 = 0
        if vitrine_ioctl_pointer(descriptor, VITRINE_KDGKBMODE, &mode) == 0 { keyboardMode = mode }
        var line = termios()
        if tcgetattr(descriptor, &line) == 0 { savedLine = line }
        hold()
    }

    deinit { close() }

    /// Graphics mode, the keyboard off and the line raw (VT_SETMODE is done by the caller).
    private func hold() {
        _ = vitrine_ioctl_value(descriptor, VITRINE_KDSETMODE, VITRINE_KD_GRAPHICS)
        if keyboardMode >= 0, vitrine_ioctl_value(descriptor, VITRINE_KDSKBMODE, VITRINE_K_OFF) != 0 {
            log(.warning, "\(RuntimeError.last("turn the keyboard off", path: path)); keys also reach the console")
        }
        if var line = savedLine {
            // No signals from keys (ISIG), no echo, no line editing: whatever still arrives is only read away.
            cfmakeraw(&line)
            _ = tcsetattr(descriptor, TCSANOW, &line)
            _ = tcflush(descriptor, TCIFLUSH)
        }
    }

    /// The event loop saw `descriptor` readable or hung up: reads away what arrived, and when the VT was hung up
    /// takes it again. Returns the descriptor that was replaced (to stop watching it), or nil.
    public func service() -> Int32? {
        var scratch = [UInt8](repeating: 0, count: 256)
        let count = read(descriptor, &scratch, scratch.count)
        guard count < 0 && errno == EIO || count == 0 else { return nil }
        return reacquire()
    }

    /// Opens the VT again after a hangup. The player leads its own session (systemd's setsid), and a hangup left
    /// that session without a controlling terminal, so opening the VT makes it the controlling terminal again.
    private func reacquire() -> Int32? {
        let fresh = Descriptor(taking: open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK))
        guard fresh.number >= 0 else {
            log(.warning, "\(RuntimeError.last("open the VT again after a hangup", path: path))")
            return nil
        }
        // Failing, the VT stays without a controlling process: VT_SETMODE below then fails and says so.
        _ = vitrine_take_controlling_tty(fresh.number)
        guard vitrine_vt_set_mode(fresh.number, 1) == 0 else {
            log(.warning, "\(RuntimeError.last("take the VT again after a hangup (VT_SETMODE)", path: path))")
            return nil
        }
        let old = descriptor
        // The hung-up descriptor closes as it is replaced.
        owned = fresh
        hold()
        log(.notice, "\(path) was hung up under the player; it is held again")
        return old
    }

    /// Lets the pending switch away go ahead.
    public func allowRelease() {
        if vitrine_ioctl_value(descriptor, VITRINE_VT_RELDISP, 1) != 0 {
            log(.warning, "\(RuntimeError.last("let the VT switch go ahead (VT_RELDISP)", path: path))")
        }
    }

    /// Acknowledges that the VT is ours again.
    public func acknowledgeAcquire() {
        if vitrine_ioctl_value(descriptor, VITRINE_VT_RELDISP, VITRINE_VT_ACKACQ) != 0 {
            log(.warning, "\(RuntimeError.last("acknowledge the VT's return (VT_RELDISP)", path: path))")
        }
    }

    /// Switches to VT `target` (Ctrl+Alt+F`target`), unless switching is forbidden or it is this one. Returns
    /// whether a switch was asked for.
    @discardableResult
    public func activate(_ target: Int) -> Bool {
        guard allowsSwitching, target != number else { return false }
        guard vitrine_ioctl_value(descriptor, VITRINE_VT_ACTIVATE, UInt(target)) == 0 else {
            log(.warning, "\(RuntimeError.last("switch to VT \(target) (VT_ACTIVATE)", path: path))")
            return false
        }
        return true
    }

    /// Back to the keyboard and line as they were, automatic switching and text mode, as the console expects.
    public func close() {
        guard !closed else { return }
        closed = true
        // Giving the VT back as found, best effort: the console resets itself at the next login if one fails.
        if keyboardMode >= 0 { _ = vitrine_ioctl_value(descriptor, VITRINE_KDSKBMODE, UInt(keyboardMode)) }
        if var line = savedLine { _ = tcsetattr(descriptor, TCSANOW, &line) }
        _ = vitrine_vt_set_mode(descriptor, 0)
        _ = vitrine_ioctl_value(descriptor, VITRINE_KDSETMODE, VITRINE_KD_TEXT)
        owned = Descriptor(taking: -1)
    }
}
