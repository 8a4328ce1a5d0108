/// Which output the player drives (`display` in `vitrine.json`).
public struct DisplaySelection: Sendable, Equatable {
    public enum Backend: String, Sendable, CaseIterable {
        /// DRM/KMS when a card with a connected output can be opened, else fbdev, else headless.
        case auto
        case drm
        case fbdev
        /// Frames go to memory and snapshot files; used by tests and `render`.
        case headless
    }

    public var backend: Backend = .auto
    /// A DRM device such as `/dev/dri/card0`; nil picks the first card with a connected output.
    public var device: String?
    /// A connector name such as `HDMI-A-1`; nil prefers an internal panel.
    public var connector: String?
    /// `WxH` or `WxH@Hz`; nil takes the panel's preferred mode.
    public var mode: String?
    /// The size Vitrine assumes when no panel can be asked (headless runs).
    public var headlessSize = Size(width: 800, height: 480)
    /// Whether Ctrl+Alt+F1...F12 switch virtual terminals while the player holds the keyboard; false locks a kiosk
    /// to the show.
    public var vtSwitching = true

    public init() {}

    /// Whether `WxH` or `WxH@Hz` (refresh 1...500 Hz) is well formed.
    public static func isValidMode(_ text: String) -> Bool { modeParts(text) != nil }

    /// The size of a `WxH` or `WxH@Hz` mode and its refresh rate rounded to whole Hz; nil when it is not one.
    public static func modeParts(_ text: String) -> (size: Size, refresh: Int?)? {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2, let size = Size(parsing: parts[0]) else { return nil }
        guard parts.count == 2 else { return (size, nil) }
        guard let refresh = Double(parts[1]), (1...500).contains(refresh) else { return nil }
        return (size, Int(refresh.rounded()))
    }
}
