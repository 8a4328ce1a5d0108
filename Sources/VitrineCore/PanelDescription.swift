/// What is known about a connected panel: from DRM and its EDID on a device, or from the command line.
public struct PanelDescription: Sendable, Equatable {
    /// DRM connector type (`DSI`, `HDMI-A`, ...) or connector name (`HDMI-A-1`); nil when unknown.
    public var connector: String?
    /// The native (preferred) scanout mode.
    public var mode: Size
    public var edidName: String?
    public var physicalSizeMillimetres: Size?

    public init(connector: String? = nil, mode: Size, edidName: String? = nil, physicalSizeMillimetres: Size? = nil) {
        self.connector = connector
        self.mode = mode
        self.edidName = edidName
        self.physicalSizeMillimetres = physicalSizeMillimetres
    }

    /// The connector type without the index DRM appends to connector names: `HDMI-A-1` becomes `HDMI-A`.
    public var connectorType: String? {
        guard let connector else { return nil }
        if let dash = connector.lastIndex(of: "-"), !connector[connector.index(after: dash)...].isEmpty,
            connector[connector.index(after: dash)...].allSatisfy(\.isNumber)
        {
            return String(connector[..<dash])
        }
        return connector
    }
}
