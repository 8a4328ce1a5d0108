/// The table of known panels (`Config/devices.json`) and the rule that derives a profile for any other panel.
public struct DeviceTable: Sendable {
    public struct Fallback: Sendable, Equatable {
        public var name: String
        public var maxComposePixels: Int
        public var fit: Fit
        public var baseMemoryMiB: Int
        public var framesInBudget: Int
        public var transition: Transition
        public var transitionSeconds: Double
        /// The share of the board's memory a derived profile's budget may grow to (0: the rule alone), and the most
        /// it grows to: an unknown panel on a board with room gets a budget that shows progressive photos.
        public var boardMemoryShare: Double = 0.125
        public var maxMemoryMiB: Int = 256
    }

    public var profiles: [DeviceProfile]
    public var fallback: Fallback
    /// The board's memory (MemTotal) in MiB, when known: the fallback's budget grows with it.
    public var boardMemoryMiB: Int?

    /// No panels, the default fallback rule: for probing screens when no table can be read.
    public static let fallbackOnly = DeviceTable(
        profiles: [],
        fallback: Fallback(
            name: "Unknown panel", maxComposePixels: 1920 * 1080, fit: .contain, baseMemoryMiB: 24, framesInBudget: 6,
            transition: .fade, transitionSeconds: 1))

    public static func parse(_ text: String, file: String) throws(ConfigError) -> DeviceTable {
        let root: JSONValue
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw ConfigError(file: file, line: error.line, path: "", message: "invalid JSON: \(error.message)")
        }
        let top = try ConfigObject(root, file: file, path: "")
        try top.rejectUnknownKeys(allowed: keyNames)
        let version = try top.integer("version", in: 1...Int.max, required: true)
        guard version == 1 else { throw top.failure("version", "unsupported version \(version ?? 0) (expected 1)") }
        guard let entries = try top.array("profiles", required: true), !entries.isEmpty else {
            throw top.failure("profiles", "expected at least one profile")
        }
        var profiles: [DeviceProfile] = []
        for (index, entry) in entries.enumerated() {
            let profile = try parseProfile(entry, index: index, file: file)
            if let earlier = profiles.firstIndex(where: { $0.id == profile.id }) {
                throw ConfigError(
                    file: file, line: entry.line, path: "profiles[\(index)] (id \"\(profile.id)\").id",
                    message: "duplicate id, already used by profiles[\(earlier)]")
            }
            profiles.append(profile)
        }
        guard let fallbackObject = try top.object("fallback", required: true) else {
            throw top.failure("fallback", "missing")
        }
        return DeviceTable(profiles: profiles, fallback: try parseFallback(fallbackObject))
    }

    public static let keyNames = ["version", "profiles", "fallback"]
    public static let profileKeyNames = [
        "id", "name", "match", "compose", "rotation", "rendition", "fit", "memoryBudgetMiB", "note", "transition",
        "transitionSeconds",
    ]
    public static let matchKeyNames = ["connector", "mode", "edidName"]
    public static let fallbackKeyNames = [
        "name", "maxComposePixels", "fit", "baseMemoryMiB", "framesInBudget", "transition", "transitionSeconds",
        "boardMemoryShare", "maxMemoryMiB",
    ]

    public static let connectorTypes = [
        "DSI", "DPI", "HDMI-A", "HDMI-B", "eDP", "LVDS", "DP", "VGA", "DVI-I", "DVI-D", "DVI-A", "Composite",
        "SVIDEO", "Component", "TV", "Virtual", "USB", "SPI", "Unknown",
    ]

    private static func parseProfile(_ entry: JSONValue, index: Int, file: String) throws(ConfigError)
        -> DeviceProfile
    {
        let unnamed = try ConfigObject(entry, file: file, path: "profiles[\(index)]")
        let id = try unnamed.requiredString("id")
        guard !id.isEmpty,
            id.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        else {
            throw unnamed.failure("id", "\"\(id)\" is not a valid id (expected lowercase letters, digits and '-')")
        }
        let object = try ConfigObject(entry, file: file, path: "profiles[\(index)] (id \"\(id)\")")
        try object.rejectUnknownKeys(allowed: profileKeyNames)
        let name = try object.requiredString("name")
        guard let match = try object.object("match", required: true) else { throw object.failure("match", "missing") }
        try match.rejectUnknownKeys(allowed: matchKeyNames)
        let connectors = try match.stringList("connector") ?? []
        for connector in connectors where !connectorTypes.contains(connector) {
            throw match.failure(
                "connector",
                "unknown connector type \"\(connector)\" (expected one of: \(connectorTypes.joined(separator: ", ")))")
        }
        guard let mode = try match.size("mode", required: true) else { throw match.failure("mode", "missing") }
        let edidName = try match.string("edidName")
        guard let compose = try object.size("compose", required: true) else {
            throw object.failure("compose", "missing")
        }
        let degrees = try object.integer("rotation", in: 0...270) ?? 0
        guard let rotation = Rotation(rawValue: degrees) else {
            throw object.failure("rotation", "\(degrees) is not allowed (expected 0, 90, 180 or 270)")
        }
        let scanout = rotation.scanoutSize(forCompose: compose)
        guard scanout.width * mode.height == scanout.height * mode.width else {
            let hint = rotation.swapsAxes ? "" : " (a portrait canvas on a landscape mode needs rotation 90 or 270)"
            throw object.failure(
                "compose",
                "\(compose) rotated by \(degrees) is \(scanout), which has not the shape of mode \(mode)\(hint)")
        }
        guard scanout.width <= mode.width else {
            throw object.failure("compose", "\(compose) is larger than the panel mode \(mode)")
        }
        guard let rendition = try object.size("rendition", required: true) else {
            throw object.failure("rendition", "missing")
        }
        let fit = try object.choice("fit", as: Fit.self) ?? .contain
        guard let budget = try object.integer("memoryBudgetMiB", in: 1...65536, required: true) else {
            throw object.failure("memoryBudgetMiB", "missing")
        }
        let profile = DeviceProfile(
            id: id, name: name, connectors: connectors, mode: mode, edidName: edidName, compose: compose,
            rotation: rotation, rendition: rendition, fit: fit, memoryBudgetMiB: budget,
            note: try object.string("note"), transition: try object.choice("transition", as: Transition.self) ?? .fade,
            transitionSeconds: try object.number("transitionSeconds", in: 0.05...10) ?? 1)
        let needed = (profile.minimumBudgetBytes + (1 << 20) - 1) >> 20
        guard budget >= needed else {
            throw object.failure(
                "memoryBudgetMiB",
                "\(budget) MiB is below the \(needed) MiB that two \(scanout) scanout buffers and one \(compose) frame need"
            )
        }
        return profile
    }

    private static func parseFallback(_ object: ConfigObject) throws(ConfigError) -> Fallback {
        try object.rejectUnknownKeys(allowed: fallbackKeyNames)
        return Fallback(
            name: try object.string("name") ?? "Unknown panel",
            maxComposePixels: try object.integer("maxComposePixels", in: 76800...(1 << 28)) ?? 1920 * 1080,
            fit: try object.choice("fit", as: Fit.self) ?? .contain,
            baseMemoryMiB: try object.integer("baseMemoryMiB", in: 0...65536) ?? 24,
            framesInBudget: try object.integer("framesInBudget", in: 3...64) ?? 6,
            transition: try object.choice("transition", as: Transition.self) ?? .fade,
            transitionSeconds: try object.number("transitionSeconds", in: 0.05...10) ?? 1,
            boardMemoryShare: try object.number("boardMemoryShare", in: 0...0.75) ?? 0.125,
            maxMemoryMiB: try object.integer("maxMemoryMiB", in: 0...65536) ?? 256)
    }

    /// The profile for a panel: the most specific matching entry (EDID name, then connector type, then mode alone;
    /// the earlier entry wins a tie), else one derived by the fallback rule.
    public func profile(for panel: PanelDescription) -> DeviceProfile {
        var best: (score: Int, profile: DeviceProfile)?
        for profile in profiles where profile.mode == panel.mode {
            var score = 1
            if let wanted = profile.edidName {
                guard let edidName = panel.edidName, edidName.lowercased() == wanted.lowercased() else { continue }
                score += 4
            }
            if !profile.connectors.isEmpty, let type = panel.connectorType {
                guard profile.connectors.contains(where: { $0.lowercased() == type.lowercased() }) else { continue }
                score += 2
            }
            if best == nil || score > best?.score ?? 0 { best = (score, profile) }
        }
        return best?.profile ?? derivedProfile(for: panel)
    }

    /// `baseMemoryMiB` plus `framesInBudget` frames, raised toward `boardMemoryShare` of the board's memory (at
    /// most `maxMemoryMiB`) when the board is known.
    public func fallbackBudgetMiB(frameMiB: Int) -> Int {
        let rule = fallback.baseMemoryMiB + fallback.framesInBudget * frameMiB
        guard let board = boardMemoryMiB, board > 0, fallback.boardMemoryShare > 0 else { return rule }
        return max(rule, min(Int(Double(board) * fallback.boardMemoryShare), fallback.maxMemoryMiB))
    }

    /// The fallback rule's profile. `atNativeSize` keeps the panel's own size (when no smaller mode exists to
    /// scan out a halved canvas).
    public func derivedProfile(for panel: PanelDescription, atNativeSize: Bool = false) -> DeviceProfile {
        var compose = panel.mode
        while !atNativeSize && compose.pixelCount > fallback.maxComposePixels {
            compose = Size(width: (compose.width + 1) / 2, height: (compose.height + 1) / 2)
        }
        let frameMiB = ((compose.xrgbByteCount ?? 0) + (1 << 20) - 1) >> 20
        let halved = compose == panel.mode ? nil : "composes at \(compose), the panel scales it up to \(panel.mode)"
        return DeviceProfile(
            id: "fallback-\(panel.mode)", name: "\(fallback.name) (\(panel.mode))",
            connectors: panel.connectorType.map { [$0] } ?? [], mode: panel.mode, edidName: panel.edidName,
            compose: compose, rotation: .none, rendition: compose, fit: fallback.fit,
            memoryBudgetMiB: fallbackBudgetMiB(frameMiB: frameMiB),
            note: halved, transition: fallback.transition, transitionSeconds: fallback.transitionSeconds,
            isDerived: true)
    }
}
