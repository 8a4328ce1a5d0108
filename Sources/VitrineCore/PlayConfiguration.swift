/// Everything `vitrine play` runs with, settled before the show starts.
public struct PlayConfiguration: Sendable {
    public var settings: Settings
    /// The config file, for SIGHUP reloads; nil when the defaults are used.
    public var configPath: String?
    public var deviceTable: DeviceTable
    public var display: DisplayChoice
    public var snapshots: String?
    /// Stop after this many slides have been presented.
    public var exitAfter: Int?
    public var stats: Bool
    /// The control socket; nil for the default path.
    public var controlPath: String?
    /// The category was asked for on the command line: it wins over the saved position.
    public var ignoresSavedPosition = false

    public init(
        settings: Settings, configPath: String?, deviceTable: DeviceTable, display: DisplayChoice,
        snapshots: String? = nil,
        exitAfter: Int? = nil, stats: Bool = false, controlPath: String? = nil
    ) {
        self.settings = settings
        self.configPath = configPath
        self.deviceTable = deviceTable
        self.display = display
        self.snapshots = snapshots
        self.exitAfter = exitAfter
        self.stats = stats
        self.controlPath = controlPath
    }
}

/// Which screen `vitrine play` drives.
public enum DisplayChoice: Sendable, Equatable {
    /// DRM when a KMS device can be opened as master, else fbdev, else headless, saying why.
    case auto
    /// A DRM card: the given one, else the first with a connected output.
    case drm(String?)
    /// A framebuffer device: the given one, else `/dev/fb0`.
    case fbdev(String?)
    /// No screen: frames go to memory (and snapshot files), at this panel size.
    case headless(Size)
}
