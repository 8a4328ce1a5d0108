import VitrineCore
import VitrineImage
import VitrinePlatform
import VitrineRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The settings a command runs with and where they came from.
struct ConfigContext {
    var settings: Settings
    /// The config file read, nil when none was found and defaults apply.
    var path: String?

    /// Where Vitrine looks for its config when `--config` is not given, in order.
    static var searchPath: [String] {
        var paths: [String] = []
        if let environment = getenv("VITRINE_CONFIG") { paths.append(String(cString: environment)) }
        paths += ["/etc/vitrine/vitrine.json", "Config/vitrine.json"]
        return paths
    }

    static func load(explicit: String?) throws(ConfigError) -> ConfigContext {
        if let explicit { return ConfigContext(settings: try Settings.load(path: explicit), path: explicit) }
        for candidate in searchPath where FileBytes.exists(candidate) {
            return ConfigContext(settings: try Settings.load(path: candidate), path: candidate)
        }
        return ConfigContext(settings: Settings(), path: nil)
    }

    /// The system's own device table, which overrides the built-in one when no config names another.
    static let systemDeviceTable = "/etc/vitrine/devices.json"

    /// The device table: `--devices`, else the config's `deviceTable` (when it names one, or when `devices.json`
    /// is beside the config), else /etc/vitrine/devices.json, else the table compiled in.
    /// The fallback rule sizes its budget from this board's memory.
    func deviceTable(explicit: String?) throws(ConfigError) -> DeviceTable {
        var table = try loadDeviceTable(explicit: explicit)
        let total = ProcessMemory.totalBytes()
        if total > 0 { table.boardMemoryMiB = total >> 20 }
        return table
    }

    private func loadDeviceTable(explicit: String?) throws(ConfigError) -> DeviceTable {
        if let explicit { return try DeviceTable.load(path: explicit) }
        if path != nil && (settings.deviceTableIsSet || FileBytes.exists(settings.deviceTable)) {
            return try DeviceTable.load(path: settings.deviceTable)
        }
        if FileBytes.exists(Self.systemDeviceTable) { return try DeviceTable.load(path: Self.systemDeviceTable) }
        return try DeviceTable.parse(BuiltInDeviceTable.json, file: BuiltInDeviceTable.name)
    }

    /// Where `deviceTable(explicit: nil)` reads the table from, for messages.
    var deviceTableSource: String {
        if path != nil && (settings.deviceTableIsSet || FileBytes.exists(settings.deviceTable)) {
            return settings.deviceTable
        }
        return FileBytes.exists(Self.systemDeviceTable) ? Self.systemDeviceTable : BuiltInDeviceTable.name
    }
}

/// Parsing of the option values several subcommands share.
enum OptionValues {
    static func size(_ parsed: ArgumentParser.Parsed, _ name: String, command: String) throws(UsageError) -> Size? {
        guard let text = parsed.value(name) else { return nil }
        guard let size = Size(parsing: text) else {
            throw UsageError(command: command, message: "\(name) \(text): expected WIDTHxHEIGHT, e.g. 800x480")
        }
        return size
    }

    static func choice<Choice: RawRepresentable & CaseIterable>(
        _ parsed: ArgumentParser.Parsed, _ name: String, as type: Choice.Type, command: String
    ) throws(UsageError) -> Choice? where Choice.RawValue == String {
        guard let text = parsed.value(name) else { return nil }
        guard let choice = Choice(rawValue: text) else {
            let allowed = Choice.allCases.map(\.rawValue).joined(separator: "|")
            throw UsageError(command: command, message: "\(name) \(text): expected \(allowed)")
        }
        return choice
    }

    static func rotation(_ parsed: ArgumentParser.Parsed, command: String) throws(UsageError) -> Rotation? {
        guard let text = parsed.value("--rotate") else { return nil }
        guard let degrees = Int(text), let rotation = Rotation(rawValue: degrees) else {
            throw UsageError(command: command, message: "--rotate \(text): expected 0, 90, 180 or 270")
        }
        return rotation
    }

    static func color(_ parsed: ArgumentParser.Parsed, command: String) throws(UsageError) -> RGBColor? {
        guard let text = parsed.value("--background") else { return nil }
        guard let color = RGBColor(parsing: text) else {
            throw UsageError(command: command, message: "--background \(text): expected RRGGBB, e.g. 000000")
        }
        return color
    }

    /// The placement options `render` and `bench` share; what is not given comes from `settings`.
    static func renderOptions(_ parsed: ArgumentParser.Parsed, panel: Size, settings: Settings, command: String)
        throws(UsageError) -> RenderOptions
    {
        let rotation = try OptionValues.rotation(parsed, command: command) ?? .none
        var options = RenderOptions(canvas: rotation.swapsAxes ? panel.transposed : panel)
        options.rotation = rotation
        options.fit = try choice(parsed, "--fit", as: Fit.self, command: command) ?? settings.fit ?? .contain
        options.background = try color(parsed, command: command) ?? settings.background
        options.maxMegapixels =
            try number(parsed, "--max-megapixels", in: 0.01...1000, command: command) ?? settings.maxMegapixels
        options.filter = try choice(parsed, "--filter", as: ResamplingFilter.self, command: command) ?? .cubic
        options.colorManagement = settings.colorManagement && !parsed.has("--no-color-management")
        options.caption = settings.caption
        if let text = parsed.value("--caption") {
            do {
                options.caption.template = try CaptionTemplate(parsing: text)
            } catch {
                throw UsageError(command: command, message: "--caption \(text): \(error.message)")
            }
        }
        options.caption.position =
            try choice(parsed, "--caption-position", as: CaptionStyle.Position.self, command: command)
            ?? settings.caption.position
        options.caption.size =
            try number(parsed, "--caption-size", in: 0.01...0.25, command: command) ?? settings.caption.size
        options.caption.locale =
            try choice(parsed, "--locale", as: DateStyle.self, command: command) ?? settings.locale
            ?? DateStyle.processDefault()
        return options
    }

    static func number(
        _ parsed: ArgumentParser.Parsed, _ name: String, in range: ClosedRange<Double>, command: String
    ) throws(UsageError) -> Double? {
        guard let text = parsed.value(name) else { return nil }
        guard let value = Double(text), range.contains(value) else {
            throw UsageError(
                command: command,
                message: "\(name) \(text): expected a number from \(ConfigObject.format(range.lowerBound)) "
                    + "to \(ConfigObject.format(range.upperBound))")
        }
        return value
    }
}
