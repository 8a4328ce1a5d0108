import Testing
import VitrineCore

/// Sources in the config, the names a server may give, and what a sync plans from a listing and its manifest.
@Suite struct SourceSyncTests {
    static func location(_ text: String) throws -> RemoteLocation {
        try RemoteLocation.parse(text).get()
    }

    static func source(_ filing: SourceSettings.Filing = .category("Family"), name: String = "family") throws
        -> SourceSettings
    {
        SourceSettings(
            name: name, kind: .webdav, location: try location("https://nas:5006/dav/Photos/"), filing: filing)
    }

    static func settings(_ sources: String) throws(ConfigError) -> Settings {
        try Settings.parse("{\"sources\": \(sources)}", file: "v.json")
    }

    // MARK: Locations

    @Test func locationsAreReadIntoDecodedFolderNames() throws {
        let nextcloud = try Self.location("https://cloud.example.com/remote.php/dav/files/anna/Photos%20Frame/é/")
        #expect(nextcloud.scheme == .https && nextcloud.host == "cloud.example.com" && nextcloud.port == nil)
        #expect(nextcloud.folders == ["remote.php", "dav", "files", "anna", "Photos Frame", "é"])
        #expect(nextcloud.effectivePort == 443)
        #expect(
            nextcloud.url(below: ["a b.jpg"], isFolder: false)
                == "https://cloud.example.com/remote.php/dav/files/anna/Photos%20Frame/%C3%A9/a%20b.jpg")
        let nas = try Self.location("HTTP://[fd00::5]:5005/home")
        #expect(nas.scheme == .http && nas.host == "[fd00::5]" && nas.port == 5005 && nas.folders == ["home"])
        #expect(nas.url() == "http://[fd00::5]:5005/home/")
        #expect(try Self.location("smb://nas/photos").folders == ["photos"])
    }

    @Test(arguments: [
        ("cloud.example.com/dav", "not a URL"), ("ftp://host/x", "unknown scheme"),
        ("https://anna:pw@host/dav", "credentialsFile"), ("https://host:0/dav", "port"),
        ("https://host:99999/", "port"), ("https:///dav", "no host"), ("https://host/a?b=1", "query"),
        ("https://host/a/../etc", "is named .."), ("https://host/a%zz", "percent escape"),
        ("https://host/%2e%2e/x", "is named .."), ("smb://nas", "no share"),
    ])
    func locationsThatCannotBeUsedAreRefusedWithWhy(text: String, reason: String) {
        guard case .failure(let problem) = RemoteLocation.parse(text) else {
            Issue.record("\(text) was accepted")
            return
        }
        #expect(problem.message.contains(reason), "\(text): \(problem.message)")
    }

    @Test func percentEncodingRoundTrips() {
        for name in ["plain.jpg", "a b#c%d?.jpg", "Sommer é 🌊.heic", "~tilde-_.x"] {
            #expect(RemoteLocation.percentDecoded(Substring(RemoteLocation.percentEncoded(name))) == name)
        }
        #expect(RemoteLocation.percentDecoded("%c3%a9%C3%A9") == "éé")
        #expect(RemoteLocation.percentDecoded("%ff") == nil)
    }

    // MARK: Settings

    @Test func aSourceIsReadWithItsDefaults() throws {
        let settings = try Self.settings(
            """
            [{"kind": "webdav", "url": "https://cloud.example.com/remote.php/dav/files/anna/Frame/",
              "credentialsFile": "nextcloud.login", "category": "Family"}]
            """
        ).resolvingPaths(relativeTo: "/etc/vitrine")
        let source = try #require(settings.sources.first)
        #expect(source.name == "Family" && source.filing == .category("Family") && source.kind == .webdav)
        #expect(source.credentialsFile == "/etc/vitrine/nextcloud.login")
        #expect(source.interval == 900 && source.timeout == 60 && source.bandwidthKiBps == nil)
        #expect(source.shareToken == nil)
    }

    @Test func anSMBShareIsASource() throws {
        let settings = try Self.settings(
            "[{\"kind\": \"smb\", \"url\": \"smb://nas.lan:4455/photos/Frame%20Pics\", \"category\": \"NAS\"}]")
        let source = try #require(settings.sources.first)
        #expect(
            source.kind == .smb && source.location.port == 4455 && source.location.folders == ["photos", "Frame Pics"])
    }

    @Test(arguments: [
        ("https://cloud.example.com/s/AbC123", [String]()),
        ("https://cloud.example.com/index.php/s/AbC123", []),
        ("https://example.com/nextcloud/index.php/s/AbC123", ["nextcloud"]),
    ])
    func aNextcloudShareLinkBecomesItsWebDAVFolder(link: String, prefix: [String]) throws {
        let settings = try Self.settings(
            "[{\"kind\": \"webdav\", \"url\": \"\(link)\", \"category\": \"Shared\"}]")
        let source = try #require(settings.sources.first)
        #expect(source.shareToken == "AbC123")
        #expect(source.location.folders == prefix + ["public.php", "webdav"])
    }

    @Test func aFolderNamedSDeeperDownIsNotAShareLink() throws {
        let settings = try Self.settings(
            "[{\"kind\": \"webdav\", \"url\": \"https://nas/dav/s/x\", \"category\": \"S\"}]")
        #expect(settings.sources.first?.shareToken == nil)
        #expect(settings.sources.first?.location.folders == ["dav", "s", "x"])
    }

    @Test(arguments: [
        ("[{\"url\": \"https://h/d\", \"category\": \"A\"}]", "sources[0].kind", "missing"),
        ("[{\"kind\": \"ftp\", \"url\": \"https://h/d\", \"category\": \"A\"}]", "sources[0].kind", "not allowed"),
        ("[{\"kind\": \"webdav\", \"category\": \"A\"}]", "sources[0].url", "missing"),
        ("[{\"kind\": \"webdav\", \"url\": \"smb://nas/p\", \"category\": \"A\"}]", "sources[0].url", "SMB"),
        ("[{\"kind\": \"smb\", \"url\": \"https://nas/p\", \"category\": \"A\"}]", "sources[0].url", "not an SMB"),
        ("[{\"kind\": \"smb\", \"url\": \"smb://nas\", \"category\": \"A\"}]", "sources[0].url", "no share"),
        ("[{\"kind\": \"webdav\", \"url\": \"https://h/d\"}]", "sources[0].category", "missing"),
        (
            "[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"category\": \"A\", \"subfolderCategories\": true}]",
            "sources[0].subfolderCategories", "not both"
        ),
        (
            "[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"subfolderCategories\": true}]", "sources[0].name",
            "missing"
        ),
        ("[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"category\": \"a/b\"}]", "sources[0].category", "/"),
        ("[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"category\": \".x\"}]", "sources[0].category", "hidden"),
        (
            "[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"category\": \"Ferien 2024\"}]", "sources[0].name",
            "missing"
        ),
        (
            "[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"category\": \"A\", \"name\": \"a b\"}]",
            "sources[0].name", "letters"
        ),
        (
            "[{\"kind\": \"webdav\", \"url\": \"http://h/d\", \"category\": \"A\", \"caFile\": \"ca.pem\"}]",
            "sources[0].caFile", "https"
        ),
        (
            "[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"category\": \"A\", \"interval\": 0}]",
            "sources[0].interval", "1"
        ),
        (
            "[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"category\": \"A\"},"
                + " {\"kind\": \"webdav\", \"url\": \"https://g/d\", \"category\": \"A\", \"name\": \"b\"}]",
            "sources[1].category", "another source"
        ),
        (
            "[{\"kind\": \"webdav\", \"url\": \"https://h/d\", \"category\": \"A\"},"
                + " {\"kind\": \"webdav\", \"url\": \"https://g/d\", \"category\": \"B\", \"name\": \"A\"}]",
            "sources[1].name", "another source"
        ),
        ("{}", "sources", "array"),
    ])
    func aSourceThatCannotWorkIsRefusedNamingItsField(text: String, path: String, reason: String) {
        do {
            _ = try Self.settings(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.path == path, "\(error)")
            #expect(error.message.contains(reason), "\(error)")
            #expect(error.line == 1)
        }
    }

    // MARK: Hrefs

    @Test func hrefsAreTakenApartByNamesWhateverTheirForm() throws {
        let location = try Self.location("https://nas:5006/dav/Photos/")
        func meaning(_ href: String, in folder: [String] = []) -> DAVHref.Meaning? {
            try? DAVHref.meaning(of: href, location: location, folder: folder).get()
        }
        #expect(meaning("/dav/Photos/") == .itself)
        #expect(meaning("/dav/Photos") == .itself)
        #expect(meaning("https://NAS:5006/dav/Photos/a.jpg") == .child("a.jpg"))
        #expect(meaning("/dav/Photos/Sommer%20%c3%a9/", in: []) == .child("Sommer é"))
        #expect(meaning("/dav/Photos/Sommer%20%C3%A9/b.jpg", in: ["Sommer é"]) == .child("b.jpg"))
        #expect(meaning("/dav/Photos/a.jpg?x=1") == .child("a.jpg"))
    }

    @Test(arguments: [
        ("/dav/Photos/../../etc/passwd", "below the folder listed"),
        ("/dav/Photos/..%2F..%2Fetc%2Fpasswd", "has a / in its name"),
        ("/dav/Photos/%2e%2e", "is named .."),
        ("/dav/Photos/a%00b.jpg", "control character"),
        ("/dav/Other/a.jpg", "outside the folder listed"),
        ("/dav/", "outside the folder listed"),
        ("https://evil.example/dav/Photos/a.jpg", "another server"),
        ("http://nas:5006/dav/Photos/a.jpg", "another server"),
        ("https://nas/dav/Photos/a.jpg", "another server"),
        ("javascript:alert(1)", "not a path"),
        ("/dav/Photos/sub/deeper.jpg", "below the folder listed"),
        ("/dav/Photos/%zz", "broken escape"),
    ])
    func hrefsThatLeaveTheFolderAreRefused(href: String, reason: String) throws {
        let location = try Self.location("https://nas:5006/dav/Photos/")
        guard case .failure(let problem) = DAVHref.meaning(of: href, location: location, folder: []) else {
            Issue.record("\(href) was accepted")
            return
        }
        #expect(problem.message.contains(reason), "\(href): \(problem.message)")
    }

    @Test func hostileTextIsQuotedShortAndPrintable() {
        let quoted = DAVHref.quoted(String(repeating: "a", count: 500) + "\u{1b}")
        #expect(quoted.count == 123 && quoted.hasSuffix("…\""))
        #expect(DAVHref.quoted("a\u{1b}[31mb") == "\"a?[31mb\"")
    }

    // MARK: Dates

    @Test func httpDatesAreReadAndWritten() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:60 GMT") == 1_709_251_200)
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        for seconds: Int64 in [1, 86_399, 951_782_400, 1_709_251_199, 4_102_444_800] {
            #expect(HTTPDate.parse(Substring(HTTPDate.format(seconds))) == seconds)
        }
        for broken in [
            "", "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 CET", "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
        ] {
            #expect(HTTPDate.parse(Substring(broken)) == nil, "\(broken)")
        }
        #expect(HTTPDate.retryAfter(" 120\r\n", now: 0) == 120)
        #expect(HTTPDate.retryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now: 784_111_777) == 60)
        #expect(HTTPDate.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_800) == 0)
        #expect(HTTPDate.retryAfter("soon", now: 0) == nil)
        #expect(HTTPDate.retryAfter("-5", now: 0) == nil)
    }

    // MARK: The manifest

    static func file(_ path: String, _ size: Int64, _ modified: Int64? = 1_700_000_000, _ etag: String? = nil)
        -> RemoteFile
    {
        RemoteFile(path: path.split(separator: "/").map(String.init), size: size, modified: modified, etag: etag)
    }

    static func entry(_ local: String, _ file: RemoteFile) -> SyncManifest.Entry {
        SyncManifest.Entry(local: local, remote: file, localSize: file.size)
    }

    @Test func theManifestRoundTripsAndRefusesWhatItDidNotWrite() {
        let manifest = SyncManifest(entries: [
            Self.entry("Family/2024/a b é.jpg", Self.file("2024/a b é.jpg", 10, 5, "\"x-1\"")),
            Self.entry("Family/c.jpg", Self.file("c.jpg", 0, nil, nil)),
        ])
        #expect(SyncManifest.parse(manifest.text()) == manifest)
        #expect(SyncManifest.parse("") == nil)
        #expect(SyncManifest.parse("vitrine-sources 2\n") == nil)
        for line in [
            "a\tb\t1\t2\tt", "a\tb\tx\t2\tt\t1", "a\tb\t-1\t2\tt\t1", "a\t../b\t1\t2\tt\t1", "../a\tb\t1\t2\tt\t1",
            "a\tb\t1\tz\tt\t1", "\tb\t1\t2\tt\t1",
        ] {
            #expect(SyncManifest.parse("vitrine-sources 1\n\(line)\n") == nil, "\(line)")
        }
    }

    @Test func aFileIsUnchangedByItsTagComparedWeaklyElseBySizeAndTime() {
        let tagged = Self.entry("F/a.jpg", Self.file("a.jpg", 10, 1, "W/\"abc\""))
        #expect(SyncManifest.isUnchanged(tagged, Self.file("a.jpg", 10, 2, "\"abc\"")))
        #expect(!SyncManifest.isUnchanged(tagged, Self.file("a.jpg", 10, 1, "\"abd\"")))
        #expect(!SyncManifest.isUnchanged(tagged, Self.file("a.jpg", 11, 1, "W/\"abc\"")))
        let untagged = Self.entry("F/a.jpg", Self.file("a.jpg", 10, 1))
        #expect(SyncManifest.isUnchanged(untagged, Self.file("a.jpg", 10, 1)))
        #expect(!SyncManifest.isUnchanged(untagged, Self.file("a.jpg", 10, 2)))
        #expect(SyncManifest.isUnchanged(untagged, Self.file("a.jpg", 10, 1, "\"new-tag\"")))
    }

    // MARK: Plans

    @Test func aPlanFetchesNewAndChangedFilesNewestFirstAndDeletesWhatLeft() throws {
        let source = try Self.source()
        let manifest = SyncManifest(entries: [
            Self.entry("Family/same.jpg", Self.file("same.jpg", 10, 100, "\"s\"")),
            Self.entry("Family/changed.jpg", Self.file("changed.jpg", 10, 100, "\"c1\"")),
            Self.entry("Family/gone.jpg", Self.file("gone.jpg", 10, 100, "\"g\"")),
            Self.entry("Family/lost-locally.jpg", Self.file("lost-locally.jpg", 10, 100, "\"l\"")),
        ])
        let remote = [
            Self.file("same.jpg", 10, 100, "\"s\""), Self.file("changed.jpg", 12, 300, "\"c2\""),
            Self.file("old/new.jpg", 5, 50, "\"n1\""), Self.file("newer.jpg", 5, 400, "\"n2\""),
            Self.file("lost-locally.jpg", 10, 100, "\"l\""), Self.file("mine.jpg", 7, 10, "\"m\""),
        ]
        let present: Set<String> = ["Family/same.jpg", "Family/changed.jpg", "Family/gone.jpg", "Family/mine.jpg"]
        let plan = SyncPlan.make(remote: remote, manifest: manifest, source: source) { present.contains($0) }
        #expect(plan.kept.map(\.local) == ["Family/same.jpg"])
        #expect(
            plan.downloads.map(\.local) == [
                "Family/newer.jpg", "Family/changed.jpg", "Family/lost-locally.jpg", "Family/old/new.jpg",
            ])
        #expect(plan.downloads[1].replaces?.remote.etag == "\"c1\"")
        #expect(plan.deletions.map(\.local) == ["Family/gone.jpg"])
        #expect(plan.conflicts.map(\.local) == ["Family/mine.jpg"])
        #expect(plan.moves.isEmpty)
    }

    @Test func aRenamedFileIsMovedNotFetched() throws {
        let source = try Self.source()
        let manifest = SyncManifest(entries: [
            Self.entry("Family/2023/a.jpg", Self.file("2023/a.jpg", 10, 100, "\"a\"")),
            Self.entry("Family/b.jpg", Self.file("b.jpg", 20, 200)),
        ])
        let remote = [Self.file("best/a.jpg", 10, 100, "\"a\""), Self.file("b (2).jpg", 20, 200)]
        let present: Set<String> = ["Family/2023/a.jpg", "Family/b.jpg"]
        let plan = SyncPlan.make(remote: remote, manifest: manifest, source: source) { present.contains($0) }
        #expect(
            plan.moves.map { [$0.from.local, $0.to.local] } == [
                ["Family/2023/a.jpg", "Family/best/a.jpg"], ["Family/b.jpg", "Family/b (2).jpg"],
            ])
        #expect(plan.downloads.isEmpty && plan.deletions.isEmpty)
    }

    @Test func renditionsInTheCacheStayTheSourcesThroughChangesAndRenames() throws {
        let source = try Self.source()
        func entry(_ local: String, _ file: RemoteFile, _ size: Int64) -> SyncManifest.Entry {
            SyncManifest.Entry(local: local, remote: file, localSize: size)
        }
        let manifest = SyncManifest(entries: [
            entry("Family/a@800x600.jpg", Self.file("a.heic", 5_000_000, 1, "\"a\""), 90_000),
            entry("Family/b@800x600.jpg", Self.file("b.heic", 4_000_000, 2, "\"b\""), 80_000),
            entry("Family/c.jpg", Self.file("c.jpg", 300, 3, "\"c\""), 300),
        ])
        let remote = [
            Self.file("a.heic", 5_000_000, 1, "\"a\""), Self.file("2024/renamed.heic", 4_000_000, 2, "\"b\""),
            Self.file("c.jpg", 9_000_000, 4, "\"c2\""),
        ]
        let present: Set<String> = ["Family/a@800x600.jpg", "Family/b@800x600.jpg", "Family/c.jpg"]
        let plan = SyncPlan.make(remote: remote, manifest: manifest, source: source) { present.contains($0) }
        #expect(plan.kept.map(\.local) == ["Family/a@800x600.jpg"])
        #expect(plan.moves.map(\.to.local) == ["Family/2024/renamed@800x600.jpg"])
        #expect(plan.downloads.map(\.local) == ["Family/c.jpg"])
        #expect(plan.downloads.first?.replaces?.local == "Family/c.jpg")
        #expect(plan.deletions.isEmpty && plan.conflicts.isEmpty)
    }

    @Test func theLimitKeepsTheNewestPhotos() throws {
        let source = try Self.source()
        let manifest = SyncManifest(entries: [
            Self.entry("Family/2010.jpg", Self.file("2010.jpg", 40, 2010)),
            Self.entry("Family/2020.jpg", Self.file("2020.jpg", 40, 2020)),
        ])
        let remote = [
            Self.file("2010.jpg", 40, 2010), Self.file("2020.jpg", 40, 2020), Self.file("2024.jpg", 40, 2024),
            Self.file("2000.jpg", 40, 2000),
        ]
        let present: Set<String> = ["Family/2010.jpg", "Family/2020.jpg"]
        var plan = SyncPlan.make(remote: remote, manifest: manifest, source: source) { present.contains($0) }
        plan.apply(limit: 100)
        #expect(plan.downloads.map(\.local) == ["Family/2024.jpg"])
        #expect(plan.kept.map(\.local) == ["Family/2020.jpg"])
        #expect(plan.deletions.map(\.local) == ["Family/2010.jpg"])
        #expect(plan.notFitting == 1)
    }

    @Test func subfoldersBecomeCategoriesAndTopPhotosGoToTheSourcesOwn() throws {
        let source = try Self.source(.subfolders, name: "nas")
        #expect(SyncPlan.localPath(of: ["Kids", "2024", "a.jpg"], source: source) == "Kids/2024/a.jpg")
        #expect(SyncPlan.localPath(of: ["top.jpg"], source: source) == "nas/top.jpg")
    }
}

/// The player's view of a source's syncs, with a manual clock.
@Suite struct SourceMachineTests {
    static let offline = SyncFailure(kind: .offline, message: "http://nas/dav/: Couldn't connect to server")

    @Test func reportsRoundTripAndOthersAreIgnored() {
        let reports: [SyncReport] = [
            .listing(folders: 3), .fetching(done: 2, total: 200, bytes: 123_456),
            .done(SyncTally(listed: 200, fetched: 3, moved: 1, deleted: 2, kept: 194, bytes: 9, notFitting: 4)),
            .failed(SyncFailure(kind: .busy, message: "busy \"now\"\n", retryAfter: 120)),
            .failed(Self.offline),
        ]
        for report in reports { #expect(SyncReport.parse(report.line) == report, "\(report.line)") }
        for line in [
            "", "[]", "{}", "{\"event\":\"nope\"}", "{\"event\":\"listing\"}", "{\"event\":\"listing\",\"folders\":-1}",
            "{\"event\":\"fetching\",\"done\":1.5,\"total\":2,\"bytes\":0}",
            "{\"event\":\"failed\",\"kind\":\"x\",\"message\":\"\"}",
            "not json",
        ] {
            #expect(SyncReport.parse(line) == nil, "\(line)")
        }
    }

    @Test func theFirstSyncIsDueAtOnceAndTheNextAfterTheInterval() {
        var machine = SourceMachine(name: "family", interval: 900, now: 100)
        #expect(machine.isDue(now: 100) && machine.state == .starting)
        machine.started(now: 100)
        #expect(!machine.isDue(now: 100))
        #expect(machine.report(.listing(folders: 1), now: 101).isEmpty)
        #expect(machine.summary(now: 101) == "listing the server's folders")
        _ = machine.report(.fetching(done: 3, total: 200, bytes: 5), now: 102)
        #expect(machine.summary(now: 102) == "fetching 3 of 200")
        let said = machine.report(.done(SyncTally(listed: 200, fetched: 200, bytes: 11_100_000)), now: 110)
        #expect(said.map(\.text) == ["source family: in sync, 200 photos; 200 fetched (11.1 MB), 0 moved, 0 deleted"])
        #expect(machine.state == .inSync && machine.lastSuccess == 110 && machine.photosFetched == 200)
        #expect(!machine.isDue(now: 1009) && machine.isDue(now: 1010))
        machine.started(now: 1010)
        // A sync that changes nothing says nothing.
        #expect(machine.report(.done(SyncTally(listed: 200, kept: 200)), now: 1011).isEmpty)
    }

    @Test func aServerAwayIsSaidOnceAndRetriedWithABackoffUpToTheInterval() {
        var machine = SourceMachine(name: "nas", interval: 300, now: 0)
        var now = 0.0
        var lines: [String] = []
        var delays: [Double] = []
        for _ in 0..<6 {
            machine.started(now: now)
            lines += machine.report(.failed(Self.offline), now: now).map(\.text)
            delays.append(machine.nextSync - now)
            now = machine.nextSync
        }
        #expect(delays == [30, 60, 120, 240, 300, 300])
        #expect(
            lines == [
                "source nas: offline: http://nas/dav/: Couldn't connect to server; nothing fetched yet; trying again in "
                    + "30 s"
            ])
        #expect(machine.summary(now: now) == "offline for 17 min: http://nas/dav/: Couldn't connect to server")
        machine.started(now: now)
        let back = machine.report(.done(SyncTally(listed: 5, fetched: 5, bytes: 1)), now: now + 1)
        #expect(
            back.map(\.text) == ["source nas: in sync again after 17 min offline; 5 fetched (0 MB), 0 moved, 0 deleted"]
        )
        #expect(machine.failures == 0 && machine.nextSync == now + 301)
    }

    @Test func retryAfterIsHonouredAndAWrongPasswordWaitsTheInterval() {
        var machine = SourceMachine(name: "nas", interval: 600, now: 0)
        machine.started(now: 0)
        let busy = machine.report(.failed(SyncFailure(kind: .busy, message: "HTTP 503", retryAfter: 90)), now: 0)
        #expect(busy.count == 1 && busy[0].isWarning && machine.nextSync == 90 && machine.state.name == "busy")
        machine.started(now: 90)
        _ = machine.report(.failed(SyncFailure(kind: .busy, message: "HTTP 429", retryAfter: 999_999)), now: 90)
        #expect(machine.nextSync == 90 + SourceMachine.longestRetryAfter)
        machine.started(now: 100)
        let refused = machine.report(.failed(SyncFailure(kind: .refused, message: "HTTP 401")), now: 100)
        #expect(refused.map(\.text) == ["source nas: refused: HTTP 401; nothing fetched yet; trying again in 10 min"])
        #expect(machine.nextSync == 700)
    }

    @Test func aProcessThatEndsWithoutItsReportFailedAndWhatItFetchedCounts() {
        var machine = SourceMachine(name: "nas", interval: 60, now: 0)
        #expect(machine.ended(now: 0, how: "exit status 0").isEmpty)
        machine.started(now: 0)
        _ = machine.report(.fetching(done: 4, total: 10, bytes: 4000), now: 1)
        let said = machine.ended(now: 2, how: "killed by signal 9")
        #expect(
            said.map(\.text) == [
                "source nas: error: the sync's process ended without a word (killed by signal 9); nothing fetched yet; "
                    + "trying again in 30 s"
            ])
        #expect(machine.bytesFetched == 4000 && machine.photosFetched == 4 && machine.running == nil)
        machine.syncSoon(now: 5)
        #expect(machine.isDue(now: 5))
    }

    @Test func photosThatDoNotFitOrCollideAreSaidWhenTheirCountChanges() {
        var machine = SourceMachine(name: "nas", interval: 60, now: 0)
        var said: [[String]] = []
        for (index, tally) in [
            SyncTally(listed: 9, notFitting: 3), SyncTally(listed: 9, notFitting: 3),
            SyncTally(listed: 9, notFitting: 4, conflicts: 1),
        ].enumerated() {
            machine.started(now: Double(index))
            said.append(machine.report(.done(tally), now: Double(index)).filter(\.isWarning).map(\.text))
        }
        #expect(said[0] == ["source nas: 3 older photos do not fit in its cacheLimitMiB"])
        #expect(said[1].isEmpty)
        #expect(said[2].count == 2)
    }
}
