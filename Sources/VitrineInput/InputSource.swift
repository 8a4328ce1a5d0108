import CLibInput
import CUdev
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Keyboards, remotes, touchscreens and pointers through libinput (udev backend, seat0). Devices plugged in later
/// are picked up by libinput itself; no device at all is fine.
public final class InputSource {
    public enum Event: Equatable {
        case key(name: String, pressed: Bool)
        /// Positions are normalised to 0...1 across the screen, in its scanout orientation.
        case touchDown(x: Double, y: Double)
        case touchMotion(x: Double, y: Double)
        case touchUp
        case pointerButton(pressed: Bool)
        case pointerMotion(dx: Double, dy: Double)
        case pointerPosition(x: Double, y: Double)
        case deviceAdded(String)
    }

    private let udev: OpaquePointer
    private let context: OpaquePointer
    public let descriptor: Int32

    public init() throws(RuntimeError) {
        do {
            try LazyLibrary.input.load()
        } catch {
            throw error.runtimeError
        }
        guard let udev = udev_new() else { throw RuntimeError("start udev for input", errno: ENOMEM) }
        guard let context = vitrine_libinput_create(udev) else {
            udev_unref(udev)
            throw RuntimeError("start libinput on seat0", errno: EINVAL)
        }
        self.udev = udev
        self.context = context
        descriptor = libinput_get_fd(context)
    }

    deinit {
        libinput_unref(context)
        udev_unref(udev)
    }

    /// Lets the devices go (the VT was switched away: the keyboard belongs to that console now).
    public func suspend() { libinput_suspend(context) }

    /// Takes the devices back (the VT is ours again).
    public func resume() { _ = libinput_resume(context) }

    /// A line naming the group to join when input devices exist but could not be opened, else nil.
    public func permissionProblem() -> String? {
        let error = vitrine_libinput_take_open_error()
        guard error == -EACCES || error == -EPERM else { return nil }
        var group = "input"
        var status = stat()
        if let first = (try? Folder.entryNames(in: "/dev/input"))?.first(where: { $0.hasPrefix("event") }),
            stat("/dev/input/\(first)", &status) == 0, let entry = getgrgid(status.st_gid),
            let name = entry.pointee.gr_name
        {
            group = String(cString: name)
        }
        return "cannot open /dev/input/* (permission denied): add the user Vitrine runs as to the '\(group)' group"
    }

    public func read() -> [Event] { readRouted().map(\.event) }

    /// The events with the screen each one's device is mapped to: libinput's output name (udev's `WL_OUTPUT`, which
    /// a rule sets for a touchscreen fixed to one panel); nil for a device mapped to none.
    public func readRouted() -> [(event: Event, output: String?)] {
        var events: [(event: Event, output: String?)] = []
        libinput_dispatch(context)
        while let event = libinput_get_event(context) {
            defer { libinput_event_destroy(event) }
            let found = routedEvent(event)
            guard let found else { continue }
            let output = libinput_event_get_device(event).flatMap { libinput_device_get_output_name($0) }
            events.append((found, output.map { String(cString: $0) }))
        }
        return events
    }

    /// One libinput event as the player's; nil for one it does not use.
    private func routedEvent(_ event: OpaquePointer) -> Event? {
        switch libinput_event_get_type(event) {
        case LIBINPUT_EVENT_DEVICE_ADDED:
            guard let device = libinput_event_get_device(event), let name = libinput_device_get_name(device) else {
                return nil
            }
            return .deviceAdded(String(cString: name))
        case LIBINPUT_EVENT_KEYBOARD_KEY:
            guard let keyboard = libinput_event_get_keyboard_event(event) else { return nil }
            let code = libinput_event_keyboard_get_key(keyboard)
            let pressed = libinput_event_keyboard_get_key_state(keyboard) == LIBINPUT_KEY_STATE_PRESSED
            return KeyCodes.name(of: code).map { .key(name: $0, pressed: pressed) }
        case LIBINPUT_EVENT_TOUCH_DOWN, LIBINPUT_EVENT_TOUCH_MOTION:
            guard let touch = libinput_event_get_touch_event(event) else { return nil }
            let x = libinput_event_touch_get_x_transformed(touch, 10000) / 10000
            let y = libinput_event_touch_get_y_transformed(touch, 10000) / 10000
            let down = libinput_event_get_type(event) == LIBINPUT_EVENT_TOUCH_DOWN
            return down ? .touchDown(x: x, y: y) : .touchMotion(x: x, y: y)
        case LIBINPUT_EVENT_TOUCH_UP:
            return .touchUp
        case LIBINPUT_EVENT_POINTER_BUTTON:
            guard let pointer = libinput_event_get_pointer_event(event),
                libinput_event_pointer_get_button(pointer) == 0x110  // BTN_LEFT
            else { return nil }
            return .pointerButton(
                pressed: libinput_event_pointer_get_button_state(pointer) == LIBINPUT_BUTTON_STATE_PRESSED)
        case LIBINPUT_EVENT_POINTER_MOTION:
            guard let pointer = libinput_event_get_pointer_event(event) else { return nil }
            return .pointerMotion(
                dx: libinput_event_pointer_get_dx(pointer), dy: libinput_event_pointer_get_dy(pointer))
        case LIBINPUT_EVENT_POINTER_MOTION_ABSOLUTE:
            guard let pointer = libinput_event_get_pointer_event(event) else { return nil }
            return .pointerPosition(
                x: libinput_event_pointer_get_absolute_x_transformed(pointer, 10000) / 10000,
                y: libinput_event_pointer_get_absolute_y_transformed(pointer, 10000) / 10000)
        default:
            return nil
        }
    }
}

/// Linux evdev key codes (`<linux/input-event-codes.h>`) by the names the key map uses.
public enum KeyCodes {
    static let table: [UInt32: String] = {
        var names: [UInt32: String] = [
            1: "Escape", 14: "Backspace", 15: "Tab", 28: "Enter", 57: "Space", 96: "KeypadEnter", 102: "Home",
            103: "Up", 104: "PageUp", 105: "Left", 106: "Right", 107: "End", 108: "Down", 109: "PageDown",
            110: "Insert", 111: "Delete", 116: "Power", 119: "Pause", 139: "Menu", 142: "Sleep", 158: "Back",
            163: "NextSong", 164: "PlayPause", 165: "PreviousSong", 166: "Stop", 168: "Rewind", 207: "Play",
            208: "FastForward", 352: "OK", 353: "Select", 358: "Info", 398: "Red", 399: "Green", 400: "Yellow",
            401: "Blue", 402: "ChannelUp", 403: "ChannelDown", 29: "LeftCtrl", 97: "RightCtrl", 56: "LeftAlt",
            100: "RightAlt",
        ]
        for (index, digit) in "1234567890".enumerated() { names[UInt32(2 + index)] = String(digit) }
        for (row, start) in [("QWERTYUIOP", 16), ("ASDFGHJKL", 30), ("ZXCVBNM", 44)] as [(String, UInt32)] {
            for (index, letter) in row.enumerated() { names[start + UInt32(index)] = String(letter) }
        }
        for function in 1...10 { names[UInt32(58 + function)] = "F\(function)" }
        names[87] = "F11"
        names[88] = "F12"
        return names
    }()

    public static func name(of code: UInt32) -> String? { table[code] }
}
