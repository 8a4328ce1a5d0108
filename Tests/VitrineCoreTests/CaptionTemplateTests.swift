import Testing
import VitrineCore

/// Caption templates: the old keywords mean what they meant, tokens without a value leave no dangling separator,
/// and a template that cannot be read is refused with the file, line and field.
@Suite struct CaptionTemplateTests {
    static func style(_ template: String) throws -> CaptionStyle {
        CaptionStyle(template: try CaptionTemplate(parsing: template))
    }

    @Test func theKeywordsKeepTheirMeaning() throws {
        let date = "2021:07:04 18:30:00"
        #expect(try Self.style("none").text(name: "trip/x", exifDate: date) == nil)
        #expect(try Self.style("date").text(name: "trip/x", exifDate: date) == "4 July 2021")
        #expect(try Self.style("date").text(name: "trip/x", exifDate: nil) == nil)
        #expect(try Self.style("name").text(name: "trip/x", exifDate: date) == "x")
        #expect(try Self.style("date+name").text(name: "trip/x", exifDate: date) == "4 July 2021 · x")
        #expect(try Self.style("date+name").text(name: "trip/x", exifDate: nil) == "x")
        #expect(try CaptionTemplate(parsing: "date+name") == .dateAndName)
        #expect(try CaptionTemplate(parsing: "none") == .none && !CaptionTemplate.none.showsAnything)
        // The keywords are written back as the user wrote them.
        #expect(try CaptionTemplate(parsing: "date+name").text == "date+name")
    }

    @Test(
        arguments: [
            ("{date} · {place}", "4 July 2021", "Lyon, France", nil, "4 July 2021 · Lyon, France"),
            ("{date} · {place}", nil, "Lyon, France", nil, "Lyon, France"),
            ("{date} · {place}", "4 July 2021", nil, nil, "4 July 2021"),
            ("{date} · {place}", nil, nil, nil, nil),
            ("{date} · {place} · {age}", "4 July 2021", nil, "3 years ago today", "4 July 2021 · 3 years ago today"),
            ("{date} · {place}, {age}", "4 July 2021", nil, "3 years ago", "4 July 2021, 3 years ago"),
            ("{date} · {place} · {age}", nil, nil, "3 years ago today", "3 years ago today"),
            ("In {place} on {date}", "4 July 2021", "Lyon, France", nil, "In Lyon, France on 4 July 2021"),
            ("In {place} on {date}", "4 July 2021", nil, nil, "In 4 July 2021"),
            ("[{place}]", nil, "Lyon, France", nil, "[Lyon, France]"),
            ("[{place}]", nil, nil, nil, nil),
            ("{place}{date}", "4 July 2021", "Lyon", nil, "Lyon4 July 2021"),
            ("{place}", nil, "", nil, nil),
        ] as [(String, String?, String?, String?, String?)])
    func tokensWithoutValuesLeaveNoSeparator(
        template: String, date: String?, place: String?, age: String?, expected: String?
    ) throws {
        let filled = try CaptionTemplate(parsing: template).fill { token in
            switch token {
            case .date: return date
            case .place: return place
            case .age: return age
            case .name: return "x"
            }
        }
        #expect(filled == expected)
    }

    @Test func theStyleFillsEveryToken() throws {
        let style = try Self.style("{name}: {date} · {place} ({age})")
        #expect(
            style.text(name: "a/b", exifDate: "2020:05:03 10:00:00", place: "Sudak, Ukraine", age: "5 years ago")
                == "b: 3 May 2020 · Sudak, Ukraine (5 years ago)")
        #expect(style.template.uses(.place) && style.template.uses(.age))
        #expect(!(try Self.style("date+name")).template.uses(.place))
    }

    @Test(arguments: [
        ("{when}", "unknown token {when} in \"{when}\" (expected {date}, {name}, {place} or {age})"),
        ("{date", "\"{date\" has a { without its } (tokens: {date}, {name}, {place} or {age})"),
        ("{date} · {place", "\"{date} · {place\" has a { without its } (tokens: {date}, {name}, {place} or {age})"),
        ("{{date}}", "\"{{date}}\" has a { without its } (tokens: {date}, {name}, {place} or {age})"),
        ("date}", "\"date}\" has a } without its { (tokens: {date}, {name}, {place} or {age})"),
        ("{Date}", "unknown token {Date} in \"{Date}\" (expected {date}, {name}, {place} or {age})"),
        ("", "must not be empty (\"none\" for no caption)"),
        (
            "date+place",
            "\"date+place\" is neither a keyword (\"none\", \"date\", \"name\", \"date+name\") nor a template with a "
                + "token ({date}, {name}, {place} or {age})"
        ),
    ])
    func malformedTemplatesAreRefused(template: String, message: String) {
        #expect(throws: CaptionTemplate.Failure(message: message)) { try CaptionTemplate(parsing: template) }
    }

    @Test func theLoaderRefusesABadTemplateWithFileLineAndField() {
        let text = "{\n  \"interval\": 5,\n  \"caption\": \"{date} · {plaice}\"\n}"
        #expect(
            throws: ConfigError(
                file: "v.json", line: 3, path: "caption",
                message: "unknown token {plaice} in \"{date} · {plaice}\" (expected {date}, {name}, {place} or {age})")
        ) { try Settings.parse(text, file: "v.json") }
        let good = try? Settings.parse("{\"caption\": \"{date} · {place}\"}", file: "v.json")
        #expect(good?.caption.template.text == "{date} · {place}")
        let null = try? Settings.parse("{\"caption\": null}", file: "v.json")
        #expect(null?.caption.template == CaptionTemplate.none)
    }

    @Test func placesFileIsAPathOrNothing() throws {
        let settings = try Settings.parse("{\"placesFile\": \"geo/places.vgeo\"}", file: "/etc/vitrine/v.json")
        #expect(settings.resolvingPaths(relativeTo: "/etc/vitrine").placesFile == "/etc/vitrine/geo/places.vgeo")
        let none = try Settings.parse("{\"placesFile\": \"\"}", file: "v.json")
        #expect(none.resolvingPaths(relativeTo: "/etc/vitrine").placesFile == "")
        #expect(try Settings.parse("{}", file: "v.json").placesFile == nil)
        #expect(throws: ConfigError.self) { try Settings.parse("{\"placesFile\": \"/usr/share/\"}", file: "v.json") }
        #expect(throws: ConfigError.self) { try Settings.parse("{\"placesFile\": 3}", file: "v.json") }
    }
}
