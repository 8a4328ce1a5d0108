import VitrineCore
import VitrineDisplay
import VitrineLinks
import VitrinePlatform
import VitrineRuntime

/// `vitrine probe --panel WxH`: which device profile a panel gets and what follows from it.
struct ProbeCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "probe",
        synopsis: "[--panel WxH [--connector TYPE] [--edid-name NAME]] [--json]",
        summary: """
            Without --panel: lists every DRM card and connector (status, type, modes, EDID name and serial, size,
            panel orientation) and the device profile each connected one gets, the CEC adapters, and whether each
            library the player loads when first needed (HEIF, AVIF, input, MQTT, the web remote, text) loads here.
            With --panel: looks that panel up in the device table and prints the profile it matches (or the one
            derived for an unknown panel): compose size, rotation, rendition size, fit and memory budget.
            """,
        options: [
            .init(name: "--panel", value: "WxH", help: "the panel's native mode"),
            .init(
                name: "--connector", value: "TYPE",
                help: "DRM connector type or name: DSI, DPI, HDMI-A, HDMI-A-1, eDP..."),
            .init(name: "--edid-name", value: "NAME", help: "the monitor name from the panel's EDID"),
            .init(name: "--json", value: nil, help: "print JSON"),
            .init(name: "--devices", value: "FILE", help: "device table (default: the config's deviceTable)"),
            .init(name: "--config", value: "FILE", help: "config file (default: see README)"),
        ],
        maximumArguments: 0)

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        let mode = try OptionValues.size(parsed, "--panel", command: "probe")
        let table: DeviceTable
        do {
            let context = try ConfigContext.load(explicit: parsed.value("--config"))
            table = try context.deviceTable(explicit: parsed.value("--devices"))
        } catch {
            guard mode == nil else {
                console.error("vitrine probe: \(error)\n")
                return 1
            }
            // Listing the screens needs no table; the profiles are then the fallback rule's.
            console.error("vitrine probe: \(error); profiles below come from the fallback rule\n")
            return probeCards(table: DeviceTable.fallbackOnly, json: parsed.has("--json"))
        }
        guard let mode else { return probeCards(table: table, json: parsed.has("--json")) }
        let panel = PanelDescription(
            connector: parsed.value("--connector"), mode: mode, edidName: parsed.value("--edid-name"))
        let profile = table.profile(for: panel)
        console.out(parsed.has("--json") ? json(panel, profile) + "\n" : text(panel, profile))
        return 0
    }

    private func text(_ panel: PanelDescription, _ profile: DeviceProfile) -> String {
        var connector = panel.connector.map { " on \($0)" } ?? ""
        if let name = panel.edidName { connector += " (\(name))" }
        var lines = [
            ("panel", "\(panel.mode)\(connector)"),
            ("profile", "\(profile.id): \(profile.name)\(profile.isDerived ? " (derived, not in the table)" : "")"),
            (
                "compose",
                profile.composesBelowNative
                    ? "\(profile.compose) (below the panel's native \(panel.mode); the panel scales it up)"
                    : "\(profile.compose)"
            ),
            ("rotation", "\(profile.rotation.rawValue)"),
            ("scanout", "\(profile.scanout)"),
            ("rendition", "\(profile.rendition)"),
            ("fit", profile.fit.rawValue),
            ("budget", "\(profile.memoryBudgetMiB) MiB"),
        ]
        if let note = profile.note { lines.append(("note", note)) }
        return lines.map { "\(($0.0 + ":").padding(11))\($0.1)" }.joined(separator: "\n") + "\n"
    }

    private func json(_ panel: PanelDescription, _ profile: DeviceProfile) -> String {
        JSONWriter.write(
            .object([
                (
                    "panel",
                    .object([
                        ("mode", .string(panel.mode.description)),
                        ("connector", panel.connector.map { .string($0) } ?? .null),
                        ("edidName", panel.edidName.map { .string($0) } ?? .null),
                    ])
                ),
                ("profile", .string(profile.id)),
                ("name", .string(profile.name)),
                ("derived", .bool(profile.isDerived)),
                ("compose", .string(profile.compose.description)),
                ("composesBelowNative", .bool(profile.composesBelowNative)),
                ("rotation", .number(profile.rotation.rawValue)),
                ("scanout", .string(profile.scanout.description)),
                ("rendition", .string(profile.rendition.description)),
                ("fit", .string(profile.fit.rawValue)),
                ("memoryBudgetMiB", .number(profile.memoryBudgetMiB)),
                ("note", profile.note.map { .string($0) } ?? .null),
            ]))
    }

    /// Every card and connector this machine has, and the profile each connected one gets.
    private func probeCards(table: DeviceTable, json: Bool) -> Int32 {
        let paths = DRMDevice.cardPaths()
        var cards: [JSONWriter.Value] = []
        var lines: [String] = []
        for path in paths {
            let device: DRMDevice
            do {
                device = try DRMDevice(path: path)
            } catch {
                lines.append("\(path): \(error)")
                cards.append(.object([("path", .string(path)), ("error", .string("\(error)"))]))
                continue
            }
            defer { device.close() }
            lines.append("\(path): driver \(device.driver), dumb buffers \(device.supportsDumbBuffers ? "yes" : "no")")
            let planes = device.planes()
            for plane in planes {
                let stacking = plane.stacking.map { " zpos \($0.value)\($0.mutable ? " (movable)" : "")" } ?? ""
                lines.append(
                    "  plane \(plane.id): \(plane.kind.rawValue), CRTCs 0x\(String(plane.crtcs, radix: 16))\(stacking), "
                        + plane.formats.map(FourCC.name).joined(separator: " "))
            }
            var connectors: [JSONWriter.Value] = []
            for connector in device.connectors() {
                let status = connector.connected ? "connected" : "disconnected"
                var line = "  \(connector.name): \(status), type \(connector.type)"
                if let size = connector.physicalSizeMillimetres { line += ", \(size.width)x\(size.height) mm" }
                if let name = connector.edid?.monitorName { line += ", EDID \"\(name)\"" }
                if let serial = connector.edid?.serialText { line += " serial \(serial)" }
                if let orientation = connector.panelOrientation { line += ", panel orientation \(orientation)" }
                lines.append(line)
                var fields: [(String, JSONWriter.Value)] = [
                    ("name", .string(connector.name)), ("type", .string(connector.type)), ("status", .string(status)),
                    (
                        "modes",
                        .array(connector.modes.map { .string($0.description + ($0.preferred ? " preferred" : "")) })
                    ),
                    ("physicalSizeMM", connector.physicalSizeMillimetres.map { .string($0.description) } ?? .null),
                    ("edidName", connector.edid?.monitorName.map { .string($0) } ?? .null),
                    ("edidSerial", connector.edid?.serialText.map { .string($0) } ?? .null),
                    ("panelOrientation", connector.panelOrientation.map { .string($0) } ?? .null),
                ]
                if !connector.modes.isEmpty {
                    lines.append(
                        "    modes: "
                            + connector.modes.prefix(12).map {
                                $0.description + ($0.preferred ? " (preferred)" : "")
                            }.joined(separator: ", ") + (connector.modes.count > 12 ? ", ..." : ""))
                }
                if connector.connected, !connector.isWriteback {
                    let clips = clipPlanes(device: device, connector: connector, planes: planes)
                    lines.append("    clips: \(clips.line)")
                    fields.append(("clipPlanes", clips.json))
                }
                if connector.connected, let mode = connector.preferredMode {
                    let profile = table.profile(for: connector.panel(mode: mode))
                    lines.append(
                        "    profile: \(profile.id)\(profile.isDerived ? " (derived)" : "") compose \(profile.compose) "
                            + "rotation \(profile.rotation.rawValue) scanout \(profile.scanout) budget \(profile.memoryBudgetMiB) MiB"
                    )
                    fields += [
                        ("profile", .string(profile.id)), ("compose", .string(profile.compose.description)),
                        ("rotation", .number(profile.rotation.rawValue)),
                        ("memoryBudgetMiB", .number(profile.memoryBudgetMiB)),
                    ]
                }
                connectors.append(.object(fields))
            }
            cards.append(
                .object([
                    ("path", .string(path)), ("driver", .string(device.driver)),
                    ("dumbBuffers", .bool(device.supportsDumbBuffers)),
                    (
                        "planes",
                        .array(
                            planes.map { plane in
                                .object([
                                    ("id", .number(Int(plane.id))), ("type", .string(plane.kind.rawValue)),
                                    ("crtcs", .number(Int(plane.crtcs))),
                                    ("formats", .array(plane.formats.map { .string(FourCC.name($0)) })),
                                    ("zpos", plane.stacking.map { .number(Int($0.value)) } ?? .null),
                                ])
                            })
                    ),
                    ("connectors", .array(connectors)),
                ]))
        }
        if paths.isEmpty { lines.append("no DRM devices in /dev/dri") }
        var adapters: [JSONWriter.Value] = []
        for adapter in CECAdapter.list() {
            let power = CECAdapter.askTVPower(adapter.path)
            let place = adapter.drm.map { " on card\($0.card) connector \($0.connector)" } ?? ""
            lines.append(
                "\(adapter.path): CEC \(adapter.name)\(place), physical address "
                    + "\(CECAddress.physical(adapter.physicalAddress)), TV \(power)")
            adapters.append(
                .object([
                    ("path", .string(adapter.path)), ("name", .string(adapter.name)),
                    ("physicalAddress", .string(CECAddress.physical(adapter.physicalAddress))),
                    ("drmCard", adapter.drm.map { .number(Int($0.card)) } ?? .null),
                    ("drmConnector", adapter.drm.map { .number(Int($0.connector)) } ?? .null),
                    ("tvPower", .string(power)),
                ]))
        }
        if adapters.isEmpty { lines.append("no CEC adapters in /dev") }
        let libraries = probeLibraries()
        lines += libraries.lines
        console.out(
            json
                ? JSONWriter.write(
                    .object([
                        ("cards", .array(cards)), ("cec", .array(adapters)), ("libraries", .array(libraries.json)),
                    ])) + "\n"
                : lines.joined(separator: "\n") + "\n")
        return 0
    }

    /// Which planes a clip's pictures would take on the CRTC that drives `connector`.
    private func clipPlanes(device: DRMDevice, connector: DRMConnector, planes: [DisplayPlane]) -> (
        line: String, json: JSONWriter.Value
    ) {
        guard let crtc = device.crtc(for: connector), let chosen = device.clipPlanes(crtc: crtc, planes: planes) else {
            return ("converted to XRGB8888 on the CPU (no primary plane here takes NV12)", .null)
        }
        let text =
            chosen.text.map { "the corner's text on plane \($0) above it, as ARGB" }
            ?? "no ARGB plane above it: a clip with the clock or texts in the corner is turned into RGB"
        return (
            "\(FourCC.name(chosen.format)) on primary plane \(chosen.video), \(text)",
            .object([
                ("plane", .number(Int(chosen.video))), ("format", .string(FourCC.name(chosen.format))),
                ("textPlane", chosen.text.map { .number(Int($0)) } ?? .null),
            ])
        )
    }

    /// Whether each library the player loads when first needed can be loaded here: a package missing shows up
    /// now, not as the first HEIF photo skipped or the web remote off.
    private func probeLibraries() -> (lines: [String], json: [JSONWriter.Value]) {
        var lines = ["libraries loaded when first needed:"]
        var json: [JSONWriter.Value] = []
        for library in LazyLibrary.allCases {
            var failure: LazyLibraryError?
            do {
                try library.load()
            } catch {
                failure = error
            }
            lines.append("  \(library.soname) (\(library.purpose)): \(failure.map { "\($0)" } ?? "loads")")
            json.append(
                .object([
                    ("soname", .string(library.soname)), ("for", .string(library.purpose)),
                    ("loads", .bool(failure == nil)), ("error", failure.map { .string($0.reason) } ?? .null),
                ]))
        }
        return (lines, json)
    }
}
