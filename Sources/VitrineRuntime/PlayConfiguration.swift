import VitrineCore

/// Everything `vitrine play` runs with, settled before the show starts.
public struct PlayConfiguration: Sendable {
    public var settings: Settings
    /// The config file, for SIGHUP reloads; nil when the defaults are used.
    public var configPath: String?
    public var deviceTable: DeviceTable
    /// The headless panel's native mode.
    public var panelMode: Size
    public var snapshots: String?
    /// Stop after this many slides have been presented.
    public var exitAfter: Int?
    public var stats: Bool
    /// The control socket; nil for the default path.
    public var controlPath: String?

    public init(
        settings: Settings, configPath: String?, deviceTable: DeviceTable, panelMode: Size, snapshots: String? = nil,
        exitAfter: Int? = nil, stats: Bool = false, controlPath: String? = nil
    ) {
        self.settings = settings
        self.configPath = configPath
        self.deviceTable = deviceTable
        self.panelMode = panelMode
        self.snapshots = snapshots
        self.exitAfter = exitAfter
        self.stats = stats
        self.controlPath = controlPath
    }
}
