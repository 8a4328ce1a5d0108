import Testing
import VitrineCore
import VitrinePlatform
import VitrineTestSupport

/// Config/schema/*.json are kept in step with the loaders: the same keys, the same choices and ranges, the shipped
/// files valid under both, and on hundreds of one-key documents the schema accepts exactly what the loader accepts
/// (save the few checks a schema cannot express, listed here).
@Suite struct ConfigSchemaTests {
    let settingsSchema: JSONValue
    let devicesSchema: JSONValue

    init() throws {
        settingsSchema = try JSONParser.parse(
            try FileBytes.readText("\(repositoryRoot)/Config/schema/vitrine.schema.json"))
        devicesSchema = try JSONParser.parse(
            try FileBytes.readText("\(repositoryRoot)/Config/schema/devices.schema.json"))
    }

    static func member(_ value: JSONValue?, _ path: String...) -> JSONValue? {
        var current = value
        for key in path {
            guard case .object(let members)? = current?.kind else { return nil }
            current = members.first { $0.key == key }?.value
        }
        return current
    }

    static func keys(_ value: JSONValue?) -> Set<String> {
        guard case .object(let members)? = value?.kind else { return [] }
        return Set(members.map(\.key))
    }

    static func strings(_ value: JSONValue?) -> [String] {
        guard case .array(let elements)? = value?.kind else { return [] }
        return elements.compactMap { if case .string(let text) = $0.kind { text } else { nil } }
    }

    @Test func theSchemasDeclareTheKeysAndChoicesTheLoadersKnow() {
        let properties = Self.member(settingsSchema, "properties")
        #expect(Self.keys(properties) == Set(Settings.keyNames))
        #expect(Self.keys(Self.member(properties, "display", "properties")) == Set(Settings.displayKeyNames))
        #expect(Self.keys(Self.member(properties, "screenSchedule", "properties")) == Set(ScreenSchedule.keyNames))
        #expect(
            Self.keys(Self.member(properties, "outputs", "items", "properties"))
                == Set(OutputSettings.placeKeyNames + OutputSettings.showKeyNames))
        #expect(
            Self.keys(Self.member(properties, "keys", "properties")) == Set(KeyMap.Action.allCases.map(\.rawValue)))
        let choices: [(String, [String])] = [
            ("order", PlaybackOrder.allCases.map(\.rawValue)), ("fit", Fit.allCases.map(\.rawValue)),
            ("transition", Transition.allCases.map(\.rawValue)),
            ("captionPosition", CaptionStyle.Position.allCases.map(\.rawValue)),
            ("locale", DateStyle.allCases.map(\.rawValue)),
        ]
        for (key, values) in choices {
            #expect(Self.strings(Self.member(properties, key, "enum")) == values, "\(key)")
        }
        #expect(
            Self.strings(Self.member(properties, "display", "properties", "backend", "enum"))
                == DisplaySelection.Backend.allCases.map(\.rawValue))

        #expect(Self.keys(Self.member(devicesSchema, "properties")) == Set(DeviceTable.keyNames))
        let profile = Self.member(devicesSchema, "$defs", "profile", "properties")
        #expect(Self.keys(profile) == Set(DeviceTable.profileKeyNames))
        #expect(Self.keys(Self.member(profile, "match", "properties")) == Set(DeviceTable.matchKeyNames))
        #expect(
            Self.keys(Self.member(devicesSchema, "properties", "fallback", "properties"))
                == Set(DeviceTable.fallbackKeyNames))
        guard case .array(let alternatives)? = Self.member(profile, "match", "properties", "connector", "oneOf")?.kind,
            let single = alternatives.first
        else {
            Issue.record("match.connector has no oneOf")
            return
        }
        #expect(Self.strings(Self.member(single, "enum")) == DeviceTable.connectorTypes)
    }

    @Test func theShippedFilesAreValidUnderTheSchemas() throws {
        let settings = try JSONParser.parse(try FileBytes.readText("\(repositoryRoot)/Config/vitrine.json"))
        #expect(SchemaValidator(root: settingsSchema).problem(settings) == nil)
        let devices = try JSONParser.parse(try FileBytes.readText("\(repositoryRoot)/Config/devices.json"))
        #expect(SchemaValidator(root: devicesSchema).problem(devices) == nil)
    }

    /// JSON texts tried for every key: each type, edges of the ranges, and every choice the schema lists.
    static let samples = [
        "null", "true", "false", "0", "-1", "1", "2.5", "7", "8", "10", "90", "0.009", "0.01", "0.05", "0.25", "0.26",
        "1000", "1001", "3600", "3601", "86400", "86401", "65536", "65537", "1e9", "\"\"", "\"x\"", "\"x/\"",
        "\"photos\"", "\"800x480\"", "\"0x480\"", "\"1920x1080@60\"", "\"1920x1080@0\"", "\"000000\"", "\"#1a2B3c\"",
        "\"12345\"", "\"22:30\"", "\"24:00\"", "\"7:5\"", "\"/dev/dri/card0\"", "\"card0\"", "[]", "[\"Right\"]", "{}",
        "{\"off\": \"22:00\", \"on\": \"07:00\"}", "{\"off\": \"22:00\"}", "{\"backend\": \"drm\"}",
        "{\"backend\": \"vga\"}", "{\"next\": [\"Right\"]}", "{\"jump\": []}",
    ]

    static func enumSamples(_ schema: JSONValue?) -> [String] {
        guard case .object(let members)? = schema?.kind else { return [] }
        var texts: [String] = []
        for (key, value) in members {
            if key == "enum", case .array(let values) = value.kind {
                for choice in values {
                    switch choice.kind {
                    case .string(let text): texts.append("\"\(text)\"")
                    case .number(let number): texts.append(String(Int(number)))
                    default: break
                    }
                }
            } else {
                texts += enumSamples(value)
            }
        }
        return texts
    }

    /// Loader-only rules: a schema cannot say that a key name must be one libinput knows, that a time must
    /// differ from another, that a GPIO line is named by `line` or by `chip` and `offset` but not both, or that a
    /// line serves one button; that playlists have different names, a span is not empty and a date exists; that a
    /// hold needs playlists; and the size pattern does not bound each side to 16384.
    static let settingsLoaderOnly: Set<String> = [
        "keys", "screenSchedule", "gpio", "presence", "mqtt", "playlists", "playlistHold",
    ]

    @Test func theSettingsSchemaAcceptsExactlyWhatTheLoaderAccepts() {
        let validator = SchemaValidator(root: settingsSchema)
        var compared = 0
        for key in Settings.keyNames {
            let property = Self.member(settingsSchema, "properties", key)
            for sample in Set(Self.samples + Self.enumSamples(property)) {
                let text = "{\"\(key)\": \(sample)}"
                guard let document = try? JSONParser.parse(text) else { continue }
                let loader = Result { () throws(ConfigError) in try Settings.parse(text, file: "t.json") }
                let schema = validator.problem(document)
                let loaderAccepts = (try? loader.get()) != nil
                if loaderAccepts {
                    #expect(schema == nil, "the schema refuses what the loader accepts: \(text): \(schema ?? "")")
                } else if !Self.settingsLoaderOnly.contains(key) {
                    #expect(schema != nil, "the schema accepts what the loader refuses: \(text)")
                }
                compared += 1
            }
        }
        #expect(compared > 500)
    }

    /// Captions are keywords or templates: the schema's pattern and the template parser agree on each of these.
    @Test func theSchemaAcceptsExactlyTheCaptionTemplatesTheLoaderAccepts() {
        let validator = SchemaValidator(root: settingsSchema)
        let keywords = CaptionTemplate.keywords.map(\.keyword)
        let tokens = CaptionTemplate.Token.allCases.map { "{\($0.rawValue)}" }
        let others = [
            "", "x", "Date", "date+place", "{date} · {place}", "{place}", "Taken {date} in {place}.", "{age}: {name}",
            "{date", "date}", "{when}", "{}", "{{date}}", "{date}}", "{date}{place}", "{ date }", "{DATE}", "·",
            "{name} ({place})", "{place}{", "}{place}",
        ]
        for caption in keywords + tokens + others {
            let text = "{\"caption\": \(JSONText.quote(caption))}"
            guard let document = try? JSONParser.parse(text) else { continue }
            let loaderAccepts = (try? Settings.parse(text, file: "t.json")) != nil
            let schema = validator.problem(document)
            #expect(loaderAccepts == (schema == nil), "\(text): loader \(loaderAccepts), schema \(schema ?? "ok")")
        }
    }

    /// A profile is checked as a whole (compose against mode and rotation, budget against the frames), so the
    /// device table is compared by changing one field of a valid profile at a time.
    static let profileLoaderOnly: Set<String> = ["compose", "rotation", "memoryBudgetMiB", "mode", "rendition"]

    @Test func theDevicesSchemaAcceptsExactlyWhatTheLoaderAccepts() {
        let validator = SchemaValidator(root: devicesSchema)
        let base: [(String, String)] = [
            ("id", "\"p\""), ("name", "\"P\""), ("match", "{\"mode\": \"800x480\"}"), ("compose", "\"800x480\""),
            ("rendition", "\"800x480\""), ("memoryBudgetMiB", "48"),
        ]
        let fallback = "{\"name\": \"Unknown\"}"
        var compared = 0
        let profileSchema = Self.member(devicesSchema, "$defs", "profile")
        for key in DeviceTable.profileKeyNames {
            let samples = Set(Self.samples + Self.enumSamples(Self.member(profileSchema, "properties", key)))
            for sample in samples {
                var fields = base.filter { $0.0 != key }
                fields.append((key, sample))
                let profile = "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
                let text = "{\"version\": 1, \"profiles\": [\(profile)], \"fallback\": \(fallback)}"
                guard let document = try? JSONParser.parse(text) else { continue }
                let loaderAccepts = (try? DeviceTable.parse(text, file: "d.json")) != nil
                let schema = validator.problem(document)
                if loaderAccepts {
                    #expect(schema == nil, "the schema refuses what the loader accepts: \(text): \(schema ?? "")")
                } else if !Self.profileLoaderOnly.contains(key) {
                    #expect(schema != nil, "the schema accepts what the loader refuses: \(text)")
                }
                compared += 1
            }
        }
        for key in DeviceTable.fallbackKeyNames {
            let samples = Set(
                Self.samples
                    + Self.enumSamples(Self.member(devicesSchema, "properties", "fallback", "properties", key)))
            for sample in samples {
                let profile = "{" + base.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
                let text = "{\"version\": 1, \"profiles\": [\(profile)], \"fallback\": {\"\(key)\": \(sample)}}"
                guard let document = try? JSONParser.parse(text) else { continue }
                let loaderAccepts = (try? DeviceTable.parse(text, file: "d.json")) != nil
                let schema = validator.problem(document)
                #expect(loaderAccepts == (schema == nil), "\(text): loader \(loaderAccepts), schema \(schema ?? "ok")")
                compared += 1
            }
        }
        #expect(compared > 500)
    }
}
