import Testing
import VitrineCore

/// `playlists`: which day-part is in force at a local minute, when the next one comes, the week as check-config
/// prints it, and the player switching at the boundary, rotating weighted categories and holding a hand's choice.
@Suite struct DayPartsTests {
    static func at(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> LocalMinute {
        LocalMinute(day: CivilDate.daysSince1970(year: year, month: month, day: day), minute: hour * 60 + minute)
    }

    static func parts() throws -> DayParts {
        let settings = try Settings.parse(
            """
            {"playlists": [
              {"name": "Christmas", "categories": "Xmas", "dates": {"from": "12-20", "to": "01-06"}},
              {"name": "Breakfast", "categories": ["Breakfast"], "days": ["mon", "tue", "wed", "thu", "fri"],
               "from": "06:00", "to": "11:00"},
              {"name": "Lunch", "categories": {"Lunch": 2, "Specials": 1}, "from": "11:00", "to": "15:00",
               "interval": 15},
              {"name": "Night", "categories": "Night", "from": "22:00", "to": "02:00", "days": "fri"}
            ],
             "playlistHold": 10}
            """, file: "v.json")
        return try #require(settings.dayParts)
    }

    @Test func theFirstDayPartInForceWinsAndSpansCrossMidnightAndNewYear() throws {
        let parts = try Self.parts()
        func name(_ time: LocalMinute) -> String? { parts.inForce(at: time).map { parts.parts[$0].name } }
        // Friday 4 December 2026.
        #expect(name(Self.at(2026, 12, 4, 5, 59)) == nil)
        #expect(name(Self.at(2026, 12, 4, 6, 0)) == "Breakfast")
        #expect(name(Self.at(2026, 12, 4, 10, 59)) == "Breakfast")
        #expect(name(Self.at(2026, 12, 4, 11, 0)) == "Lunch")
        #expect(name(Self.at(2026, 12, 5, 7, 0)) == nil, "Saturday has no breakfast")
        #expect(name(Self.at(2026, 12, 5, 12, 0)) == "Lunch", "lunch is every day")
        // Friday night's span goes on into Saturday; Saturday night's does not exist.
        #expect(name(Self.at(2026, 12, 4, 23, 30)) == "Night")
        #expect(name(Self.at(2026, 12, 5, 1, 59)) == "Night")
        #expect(name(Self.at(2026, 12, 5, 2, 0)) == nil)
        #expect(name(Self.at(2026, 12, 5, 23, 0)) == nil)
        // Christmas, listed first, takes the whole day from 20 December to 6 January, across New Year.
        #expect(name(Self.at(2026, 12, 21, 7, 0)) == "Christmas")
        #expect(name(Self.at(2027, 1, 6, 23, 59)) == "Christmas")
        #expect(name(Self.at(2027, 1, 7, 7, 0)) == "Breakfast")
        #expect(parts.hold == 600)
        #expect(parts.parts[2].categories == [.init(name: "Lunch", weight: 2), .init(name: "Specials", weight: 1)])
        #expect(parts.parts[2].interval == 15)
    }

    @Test func theNextBoundaryIsTheNextChangeWhereverItFalls() throws {
        let parts = try Self.parts()
        #expect(parts.nextChange(after: Self.at(2026, 12, 4, 5, 0)) == Self.at(2026, 12, 4, 6, 0))
        #expect(parts.nextChange(after: Self.at(2026, 12, 4, 6, 0)) == Self.at(2026, 12, 4, 11, 0))
        #expect(parts.nextChange(after: Self.at(2026, 12, 4, 16, 0)) == Self.at(2026, 12, 4, 22, 0))
        #expect(parts.nextChange(after: Self.at(2026, 12, 4, 23, 0)) == Self.at(2026, 12, 5, 2, 0))
        // Saturday after lunch: nothing until Sunday's lunch (no breakfast at weekends).
        #expect(parts.nextChange(after: Self.at(2026, 12, 5, 15, 0)) == Self.at(2026, 12, 6, 11, 0))
        // The evening before Christmas starts: midnight.
        #expect(parts.nextChange(after: Self.at(2026, 12, 19, 16, 0)) == Self.at(2026, 12, 20, 0, 0))
        // A span that ends at 24:00 ends at the next midnight.
        let late = DayParts(parts: [.init(name: "Late", categories: [.init(name: "L")], from: 18 * 60, to: 1440)])
        #expect(late.nextChange(after: Self.at(2026, 12, 4, 19, 0)) == Self.at(2026, 12, 5, 0, 0))
        #expect(late.inForce(at: Self.at(2026, 12, 4, 23, 59)) == 0)
        #expect(DayParts(parts: []).nextChange(after: Self.at(2026, 12, 4, 19, 0)) == nil)
    }

    /// Berlin in 2026: UTC+1, UTC+2 from 29 March 01:00 UTC, UTC+1 again from 25 October 01:00 UTC.
    static func berlin(_ moment: Int) -> Int {
        let spring = CivilDate.daysSince1970(year: 2026, month: 3, day: 29) * 86400 + 3600
        let autumn = CivilDate.daysSince1970(year: 2026, month: 10, day: 25) * 86400 + 3600
        return moment >= spring && moment < autumn ? 7200 : 3600
    }

    @Test func aBoundaryIsItsWallClockTimeOnTheDaysTheClocksChange() {
        func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Int {
            CivilDate.daysSince1970(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60
        }
        #expect(Self.at(2026, 3, 28, 7, 0).epoch(offsetAt: Self.berlin) == utc(2026, 3, 28, 6, 0))
        // 07:00 on the morning summer time starts is 05:00 UTC; an hour-count from midnight would say 06:00.
        #expect(Self.at(2026, 3, 29, 7, 0).epoch(offsetAt: Self.berlin) == utc(2026, 3, 29, 5, 0))
        // 02:30 does not happen that night: the show takes it as the jump (03:30 local, 01:30 UTC), as mktime does.
        #expect(Self.at(2026, 3, 29, 2, 30).epoch(offsetAt: Self.berlin) == utc(2026, 3, 29, 1, 30))
        // 02:30 happens twice in October: the first time, 00:30 UTC.
        #expect(Self.at(2026, 10, 25, 2, 30).epoch(offsetAt: Self.berlin) == utc(2026, 10, 25, 0, 30))
        #expect(Self.at(2026, 10, 25, 7, 0).epoch(offsetAt: Self.berlin) == utc(2026, 10, 25, 6, 0))
        #expect(Self.at(2026, 12, 6, 0, 0).epoch { _ in 0 } == utc(2026, 12, 6, 0, 0))
        #expect(Self.at(2026, 12, 6, 0, 0).epoch { _ in -5 * 3600 } == utc(2026, 12, 6, 5, 0))
    }

    @Test func theWeekIsATableOfSpans() throws {
        let week = try Self.parts().week(from: Self.at(2026, 11, 30, 0, 0).day)
        #expect(week.count == 7)
        #expect(
            week[0]
                == "Mon  00:00-06:00 -, 06:00-11:00 Breakfast, 11:00-15:00 Lunch, 15:00-24:00 -")
        #expect(
            week[4]
                == "Fri  00:00-06:00 -, 06:00-11:00 Breakfast, 11:00-15:00 Lunch, 15:00-22:00 -, 22:00-24:00 Night")
        #expect(week[5] == "Sat  00:00-02:00 Night, 02:00-11:00 -, 11:00-15:00 Lunch, 15:00-24:00 -")
    }

    @Test func badPlaylistsAreRefusedWithTheField() {
        let refusals: [(String, String, String)] = [
            ("{\"playlists\": [{\"name\": \"A\"}]}", "playlists[0].categories", "missing"),
            (
                "{\"playlists\": [{\"name\": \"A\", \"categories\": \"A\", \"from\": \"06:00\"}]}", "playlists[0].to",
                "missing"
            ),
            (
                "{\"playlists\": [{\"name\": \"A\", \"categories\": \"A\", \"from\": \"6h\", \"to\": \"07:00\"}]}",
                "playlists[0].from", "not a time of day"
            ),
            (
                "{\"playlists\": [{\"name\": \"A\", \"categories\": \"A\", \"days\": [\"monday\"]}]}",
                "playlists[0].days", "not a day"
            ),
            (
                "{\"playlists\": [{\"name\": \"A\", \"categories\": \"A\", \"dates\": {\"from\": \"02-30\", \"to\": \"03-01\"}}]}",
                "playlists[0].dates.from", "not a date"
            ),
            (
                "{\"playlists\": [{\"name\": \"A\", \"categories\": {\"A\": 0}}]}", "playlists[0].categories.A",
                "out of range"
            ),
            (
                "{\"playlists\": [{\"name\": \"A\", \"categories\": \"A\"}, {\"name\": \"A\", \"categories\": \"B\"}]}",
                "playlists[1].name", "another playlist"
            ),
            ("{\"playlistHold\": 5}", "playlistHold", "there are none"),
        ]
        for (text, path, words) in refusals {
            let error = #expect(throws: ConfigError.self) { try Settings.parse(text, file: "v.json") }
            #expect(error?.path == path, "\(text)")
            #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
        }
    }

    // MARK: - The player

    let budget = MemoryBudget(limit: 1 << 20)

    func frame() throws -> Frame { try Frame(size: Size(width: 16, height: 16), budget: budget, purpose: "test") }

    func run(_ player: inout Player, _ actions: [Player.Action], now: Double, library: [String: [String]]) throws
        -> [SlideID]
    {
        try PlayerDriver.run(&player, actions, now: now, library: library, frame: frame)
    }

    @Test func theBoundarySwitchesAtOnceAndWeightedCategoriesTakeTurnsWhereTheyWereLeft() throws {
        let library = [
            "Everyday": ["e1", "e2", "e3"], "Lunch": ["l1", "l2", "l3", "l4", "l5"], "Specials": ["s1", "s2", "s3"],
        ]
        let lunch = try #require(try Self.parts().parts.first { $0.name == "Lunch" })
        var player = Player(options: Player.Options(interval: 10, startCategory: "Everyday", dayPartHold: 60))
        var shown = try run(
            &player, player.handle(.start(categories: ["Everyday", "Lunch", "Specials"], now: 0)), now: 0,
            library: library)
        #expect(shown == [SlideID(category: "Everyday", name: "e1")])
        // The boundary: the day-part's first category is on screen at once, not at the end of the interval.
        shown = try run(&player, player.handle(.dayPart(lunch, now: 3)), now: 3, library: library)
        #expect(shown == [SlideID(category: "Lunch", name: "l1")])
        #expect(player.status(now: 3).dayPart == "Lunch")
        // Its interval (15 s) from the next slide; Lunch twice for each Specials, each going on where it was left.
        var sequence: [String] = []
        var now = 3.0
        for _ in 0..<9 {
            now += 15
            let fired = player.handle(.timerFired(generation: player.timer.generation, now: now))
            sequence += try run(&player, fired, now: now, library: library).map(\.description)
        }
        #expect(
            sequence == [
                "Specials/s1", "Lunch/l2", "Lunch/l3", "Specials/s2", "Lunch/l4", "Lunch/l5", "Specials/s3", "Lunch/l1",
                "Lunch/l2",
            ])
        // A category chosen by hand holds the day-part off for playlistHold (a minute here), then it takes over.
        _ = try run(
            &player, player.handle(.command(.category(.named("Everyday")), now: now)), now: now, library: library)
        #expect(player.active == "Everyday")
        #expect(player.status(now: now).heldByHand)
        now += 15
        _ = try run(
            &player, player.handle(.timerFired(generation: player.timer.generation, now: now)), now: now,
            library: library)
        #expect(player.active == "Everyday")
        now += 60
        _ = try run(
            &player, player.handle(.timerFired(generation: player.timer.generation, now: now)), now: now,
            library: library)
        #expect(player.active != "Everyday")
        #expect(!player.status(now: now).heldByHand)
        // No day-part in force: the show stays where it is, at the config's interval.
        _ = player.handle(.dayPart(nil, now: now))
        #expect(player.status(now: now).dayPart == nil)
        #expect(player.timer.interval == 10)
    }
}
