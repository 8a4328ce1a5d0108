import CDRM
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One mode a connector offers.
public struct DRMMode: Sendable, CustomStringConvertible {
    public var size: Size
    public var refresh: Int
    public var preferred: Bool
    let raw: drmModeModeInfo

    public var description: String { "\(size)@\(refresh)" }

    /// Seconds between vblanks, from the pixel clock and the totals (59.94 Hz is not 60).
    public var refreshPeriod: Double? {
        let pixels = Double(raw.htotal) * Double(raw.vtotal)
        guard raw.clock > 0, pixels > 0 else { return refresh > 0 ? 1 / Double(refresh) : nil }
        return pixels / (Double(raw.clock) * 1000)
    }
}

/// A connector of a card as probed: what `vitrine probe` prints and what the device-table match uses.
public struct DRMConnector: Sendable {
    public var id: UInt32
    /// DRM's name: type and index, e.g. `HDMI-A-1`.
    public var name: String
    public var type: String
    public var connected: Bool
    public var modes: [DRMMode]
    public var physicalSizeMillimetres: Size?
    public var edid: EDID?
    public var panelOrientation: String?
    /// The DPMS property, when the driver has one.
    var dpmsProperty: UInt32?
    var encoderID: UInt32
    var possibleCRTCs: UInt32

    /// Panels built into the device, preferred over external outputs unless the config names a connector.
    public var isInternal: Bool { ["DSI", "DPI", "eDP", "LVDS"].contains(type) }
    public var isWriteback: Bool { type == "Writeback" }

    public var preferredMode: DRMMode? { modes.first(where: \.preferred) ?? modes.first }

    public func panel(mode: DRMMode) -> PanelDescription {
        PanelDescription(
            connector: name, mode: mode.size, edidName: edid?.monitorName,
            physicalSizeMillimetres: physicalSizeMillimetres)
    }
}

/// An open DRM card (`/dev/dri/cardN`). It owns the descriptor; `close()` is explicit because closing drops DRM
/// master and may change what the screen shows.
public final class DRMDevice {
    public let path: String
    private var owned: Descriptor
    public var descriptor: Int32 { owned.number }
    public let driver: String

    public init(path: String) throws(RuntimeError) {
        self.path = path
        owned = try SystemCall.open("open", path: path) { open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK) }
        if let version = drmGetVersion(owned.number) {
            driver = version.pointee.name.map { String(cString: $0) } ?? "unknown"
            drmFreeVersion(version)
        } else {
            driver = "unknown"
        }
    }

    public func close() {
        owned = Descriptor(taking: -1)
        waiting = [:]
    }

    public typealias Completion = (serial: UInt64, sequence: UInt32, time: Double)
    /// Flip completions read from the descriptor and not yet taken, by CRTC: a card that drives two screens sends
    /// both screens' events on this one descriptor, and whichever display reads first must not take the other's.
    private var waiting: [UInt32: [Completion]] = [:]

    /// The flip completions for CRTC `crtc` read so far, and those pending on the descriptor. A driver that does
    /// not say the CRTC (0: Linux before 4.12) is taken to mean the asker's, as with one screen it is.
    public func takeFlips(crtc: UInt32) -> [Completion] {
        // Room for every event one read can bring (1,024 bytes of 32-byte events), until the descriptor is empty.
        var serials = [UInt64](repeating: 0, count: 32)
        var sequences = [UInt32](repeating: 0, count: 32)
        var times = [Double](repeating: 0, count: 32)
        var crtcs = [UInt32](repeating: 0, count: 32)
        while true {
            let count = vitrine_drm_read_flips(descriptor, &serials, &sequences, &times, &crtcs, 32)
            guard count > 0 else { break }
            for index in 0..<Int(count) {
                waiting[crtcs[index] == 0 ? crtc : crtcs[index], default: []].append(
                    (serials[index], sequences[index], times[index]))
            }
        }
        return waiting.removeValue(forKey: crtc) ?? []
    }

    /// The cards of this machine, `/dev/dri/card0` first.
    public static func cardPaths() -> [String] {
        guard let names = try? Folder.entryNames(in: "/dev/dri") else { return [] }
        return names.filter { $0.hasPrefix("card") }.sorted(by: NaturalOrder.less).map { "/dev/dri/\($0)" }
    }

    /// Whether the card can drive a screen at all: a render-only GPU (v3d, vgem) has no CRTCs or connectors.
    public var hasModesetting: Bool {
        guard let resources = drmModeGetResources(descriptor) else { return false }
        defer { drmModeFreeResources(resources) }
        return resources.pointee.count_crtcs > 0 && resources.pointee.count_connectors > 0
    }

    public var supportsDumbBuffers: Bool {
        var value: UInt64 = 0
        return drmGetCap(descriptor, UInt64(DRM_CAP_DUMB_BUFFER), &value) == 0 && value != 0
    }

    /// Becomes DRM master; fails when another program (a desktop, another player) drives the card.
    public func becomeMaster() throws(RuntimeError) {
        guard drmSetMaster(descriptor) == 0 else {
            throw .last("become DRM master (is a desktop using it?)", path: path)
        }
    }

    public func dropMaster() { _ = drmDropMaster(descriptor) }

    /// Every connector with its modes, EDID and properties.
    public func connectors() -> [DRMConnector] {
        guard let resources = drmModeGetResources(descriptor) else { return [] }
        defer { drmModeFreeResources(resources) }
        var found: [DRMConnector] = []
        for index in 0..<Int(resources.pointee.count_connectors) {
            guard let connectorIDs = resources.pointee.connectors,
                let connector = drmModeGetConnector(descriptor, connectorIDs[index])
            else { continue }
            defer { drmModeFreeConnector(connector) }
            found.append(describe(connector.pointee))
        }
        return found
    }

    private func describe(_ connector: drmModeConnector) -> DRMConnector {
        let type = drmModeGetConnectorTypeName(connector.connector_type).map { String(cString: $0) } ?? "Unknown"
        var modes: [DRMMode] = []
        for index in 0..<Int(connector.count_modes) {
            guard let mode = connector.modes?[index] else { continue }
            modes.append(
                DRMMode(
                    size: Size(width: Int(mode.hdisplay), height: Int(mode.vdisplay)), refresh: Int(mode.vrefresh),
                    preferred: mode.type & VITRINE_DRM_MODE_TYPE_PREFERRED != 0, raw: mode))
        }
        var info = DRMConnector(
            id: connector.connector_id, name: "\(type)-\(connector.connector_type_id)", type: type,
            connected: connector.connection == DRM_MODE_CONNECTED, modes: modes,
            physicalSizeMillimetres: connector.mmWidth > 0 && connector.mmHeight > 0
                ? Size(width: Int(connector.mmWidth), height: Int(connector.mmHeight)) : nil,
            edid: nil, panelOrientation: nil, dpmsProperty: nil, encoderID: connector.encoder_id, possibleCRTCs: 0)
        readProperties(of: connector.connector_id, into: &info)
        info.possibleCRTCs = possibleCRTCs(connector)
        return info
    }

    private func readProperties(of connectorID: UInt32, into info: inout DRMConnector) {
        forEachProperty(of: connectorID, type: DRM_MODE_OBJECT_CONNECTOR) { name, property, id, value in
            switch name {
            case "EDID" where property.pointee.flags & VITRINE_DRM_MODE_PROP_BLOB != 0 && value != 0:
                if let bytes = blob(value) { info.edid = EDID.parse(bytes) }
            case "panel orientation" where property.pointee.flags & VITRINE_DRM_MODE_PROP_ENUM != 0:
                info.panelOrientation = entries(of: property).first { $0.value == value }?.key
            case "DPMS":
                info.dpmsProperty = id
            default:
                break
            }
        }
    }

    /// Calls `body` with each property of a KMS object: its name, description, id and value.
    private func forEachProperty(
        of object: UInt32, type: UInt32,
        _ body: (String, UnsafeMutablePointer<drmModePropertyRes>, UInt32, UInt64) -> Void
    ) {
        guard let properties = drmModeObjectGetProperties(descriptor, object, type) else { return }
        defer { drmModeFreeObjectProperties(properties) }
        for index in 0..<Int(properties.pointee.count_props) {
            guard let ids = properties.pointee.props, let values = properties.pointee.prop_values,
                let property = drmModeGetProperty(descriptor, ids[index])
            else { continue }
            defer { drmModeFreeProperty(property) }
            body(Self.text(property.pointee.name), property, ids[index], values[index])
        }
    }

    /// The bytes of property blob `id`; nil when the kernel has none by that id.
    private func blob(_ id: UInt64) -> [UInt8]? {
        guard let blob = drmModeGetPropertyBlob(descriptor, UInt32(truncatingIfNeeded: id)) else { return nil }
        defer { drmModeFreePropertyBlob(blob) }
        guard let data = blob.pointee.data else { return nil }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(blob.pointee.length)))
    }

    /// An enum property's entries: each name's value.
    private func entries(of property: UnsafeMutablePointer<drmModePropertyRes>) -> [String: UInt64] {
        var found: [String: UInt64] = [:]
        for entry in 0..<Int(property.pointee.count_enums) {
            guard let enums = property.pointee.enums else { break }
            found[Self.text(enums[entry].name)] = enums[entry].value
        }
        return found
    }

    /// A fixed-size C name as a String, up to its NUL.
    private static func text<T>(_ name: T) -> String {
        withUnsafeBytes(of: name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }

    private func possibleCRTCs(_ connector: drmModeConnector) -> UInt32 {
        var mask: UInt32 = 0
        for index in 0..<Int(connector.count_encoders) {
            guard let encoders = connector.encoders, let encoder = drmModeGetEncoder(descriptor, encoders[index]) else {
                continue
            }
            mask |= encoder.pointee.possible_crtcs
            drmModeFreeEncoder(encoder)
        }
        return mask
    }

    /// The card's planes, primaries and cursors included (the universal-planes capability is asked for on this
    /// descriptor; without it the kernel lists overlays only). A plane the kernel will not describe is left out.
    public func planes() -> [DisplayPlane] {
        _ = drmSetClientCap(descriptor, VITRINE_DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1)
        guard let resources = drmModeGetPlaneResources(descriptor) else { return [] }
        defer { drmModeFreePlaneResources(resources) }
        var found: [DisplayPlane] = []
        for index in 0..<Int(resources.pointee.count_planes) {
            guard let ids = resources.pointee.planes, let plane = drmModeGetPlane(descriptor, ids[index]) else {
                continue
            }
            defer { drmModeFreePlane(plane) }
            var formats: [UInt32] = []
            for entry in 0..<Int(plane.pointee.count_formats) {
                if let list = plane.pointee.formats { formats.append(list[entry]) }
            }
            var described = DisplayPlane(
                id: plane.pointee.plane_id, kind: .overlay, crtcs: plane.pointee.possible_crtcs, formats: formats)
            readProperties(ofPlane: described.id, into: &described)
            found.append(described)
        }
        return found
    }

    /// The plane's type and stacking, and its formats from IN_FORMATS where the driver gives that blob: the plain
    /// list does not say which formats need a tiled buffer, and a dumb buffer is linear.
    private func readProperties(ofPlane planeID: UInt32, into plane: inout DisplayPlane) {
        forEachProperty(of: planeID, type: VITRINE_DRM_MODE_OBJECT_PLANE) { name, property, _, value in
            switch name {
            case "type":
                plane.kind = value == 1 ? .primary : value == 2 ? .cursor : .overlay
            case "IN_FORMATS" where property.pointee.flags & VITRINE_DRM_MODE_PROP_BLOB != 0 && value != 0:
                if let bytes = blob(value), let linear = FormatModifierBlob.linearFormats(bytes) {
                    plane.formats = linear
                }
            case "zpos" where property.pointee.flags & VITRINE_DRM_MODE_PROP_RANGE != 0:
                guard property.pointee.count_values >= 2, let bounds = property.pointee.values else { return }
                plane.stacking = .init(
                    value: value, range: min(bounds[0], bounds[1])...max(bounds[0], bounds[1]),
                    mutable: property.pointee.flags & VITRINE_DRM_MODE_PROP_IMMUTABLE == 0)
            default:
                break
            }
        }
    }

    /// A plane's properties by name: their ids and, for enums, the value of each entry's name.
    public func propertyIDs(ofPlane planeID: UInt32) -> [String: (id: UInt32, entries: [String: UInt64])] {
        var found: [String: (id: UInt32, entries: [String: UInt64])] = [:]
        forEachProperty(of: planeID, type: VITRINE_DRM_MODE_OBJECT_PLANE) { name, property, id, _ in
            found[name] = (id, entries(of: property))
        }
        return found
    }

    /// The planes a clip's pictures take on CRTC `crtc`, when its primary plane takes NV12, the format clips are
    /// scaled into (`VideoPlanes.choose` also names YUV420, which no clip is made in yet); `planes` when already
    /// listed. The player (`PlanarScanout`) and `vitrine probe` both ask here.
    public func clipPlanes(crtc: UInt32, planes: [DisplayPlane]? = nil) -> VideoPlanes? {
        guard let index = crtcIndex(of: crtc),
            let chosen = VideoPlanes.choose(from: planes ?? self.planes(), crtcIndex: index),
            chosen.format == FourCC.nv12
        else { return nil }
        return chosen
    }

    /// Asks for atomic modesetting on this descriptor; false where the driver has none.
    public func enableAtomic() -> Bool { drmSetClientCap(descriptor, VITRINE_DRM_CLIENT_CAP_ATOMIC, 1) == 0 }

    /// The card's CRTCs in the kernel's order (what possible_crtcs bits count in).
    public func crtcIDs() -> [UInt32] {
        guard let resources = drmModeGetResources(descriptor) else { return [] }
        defer { drmModeFreeResources(resources) }
        return (0..<Int(resources.pointee.count_crtcs)).compactMap { resources.pointee.crtcs?[$0] }
    }

    /// The index of CRTC `id` among the card's CRTCs (what a plane's possible_crtcs counts in).
    public func crtcIndex(of id: UInt32) -> Int? { crtcIDs().firstIndex(of: id) }

    /// The CRTC to drive `connector` with: the one its encoder uses now, else the first it can use.
    public func crtc(for connector: DRMConnector) -> UInt32? {
        if connector.encoderID != 0, let encoder = drmModeGetEncoder(descriptor, connector.encoderID) {
            defer { drmModeFreeEncoder(encoder) }
            if encoder.pointee.crtc_id != 0 { return encoder.pointee.crtc_id }
        }
        guard let resources = drmModeGetResources(descriptor) else { return nil }
        defer { drmModeFreeResources(resources) }
        for index in 0..<Int(resources.pointee.count_crtcs) where connector.possibleCRTCs & (1 << UInt32(index)) != 0 {
            return resources.pointee.crtcs?[index]
        }
        return nil
    }

    /// The connector to drive: the named one, else a connected internal panel, else the first connected output.
    /// Writeback connectors are never chosen.
    public static func choose(_ connectors: [DRMConnector], named: String?) -> DRMConnector? {
        let usable = connectors.filter { $0.connected && !$0.isWriteback && !$0.modes.isEmpty }
        if let named { return usable.first { $0.name == named } }
        return usable.first(where: \.isInternal) ?? usable.first
    }
}
