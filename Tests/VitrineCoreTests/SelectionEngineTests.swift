import Testing

@testable import VitrineCore

/// `shuffle`'s selection engine, driven the way the player drives it (`next`, then `moveTo` when the slide is on
/// screen), with fixed seeds: rounds without repeats over 100,000 slides, the mix's shares, a round that survives a
/// restart and a changing library, portrait pairs.
@Suite struct SelectionEngineTests {
    static let day = 86400.0
    /// 6 December 2026, noon: "today" in these tests.
    static let today = ShowDay(year: 2026, month: 12, day: 6)

    /// A photo taken `daysAgo` days before today (nil: no capture date).
    static func photo(
        _ name: String, daysAgo: Double? = nil, rating: Int? = nil, portrait: Bool = false, fresh: Bool = false
    ) -> Slide {
        var slide = Slide(
            id: SlideID(category: "c", name: name), original: "/lib/c/\(name).jpg", renditions: [],
            timestamp: daysAgo.map { today.wallSeconds - $0 * day } ?? 0)
        slide.traits = SlideTraits(captured: daysAgo != nil, portrait: portrait, fresh: fresh, rating: rating)
        return slide
    }

    static func plain(_ count: Int) -> [Slide] { (0..<count).map { photo("p\($0)") } }

    /// Plays `count` slides as the player would, returning each slide's photos and why it was chosen.
    static func play(_ playlist: inout Playlist, _ count: Int) -> [(photos: [String], why: SelectionReason?)] {
        var shown: [(photos: [String], why: SelectionReason?)] = []
        for _ in 0..<count {
            guard let id = playlist.next() else { break }
            playlist.moveTo(id)
            let photos = playlist.slide(id)?.photos.map(\.id.name) ?? []
            shown.append((photos, playlist.reason(of: id)))
        }
        return shown
    }

    static func playlist(
        _ slides: [Slide], mix: SelectionMix = .plain, pairs: Bool = false, seed: UInt64 = 7,
        favourites: Favourites = Favourites(), saved: SelectionState? = nil
    ) -> Playlist {
        Playlist(
            catalog: SlideCatalog(slides), order: .shuffle,
            selection: Playlist.Selection(
                mix: mix, pairPortraits: pairs, favourites: favourites, seed: seed, today: today, saved: saved))
    }

    @Test func aHundredThousandSlidesShowEveryPhotoOncePerRoundAndNeverTwiceInARow() {
        let count = 1000
        var playlist = Self.playlist(Self.plain(count))
        let shown = Self.play(&playlist, 100_000).map { $0.photos[0] }
        #expect(shown.count == 100_000)
        var orders: Set<[String]> = []
        for round in 0..<100 {
            let slice = Array(shown[(round * count)..<((round + 1) * count)])
            #expect(Set(slice).count == count, "round \(round) repeats a photo")
            orders.insert(slice)
        }
        #expect(orders.count == 100, "every round has an order of its own")
        #expect(zip(shown, shown.dropFirst()).allSatisfy { $0 != $1 }, "no photo twice in a row, across rounds too")
        // Each photo's place in the round is uniform: over 100 rounds a photo's mean place is near the middle.
        var placeSums: [String: Int] = [:]
        for (offset, name) in shown.enumerated() { placeSums[name, default: 0] += offset % count }
        let means = placeSums.values.map { Double($0) / 100 }
        let average = means.reduce(0, +) / Double(means.count)
        #expect(abs(average - 499.5) < 5)
        #expect(means.allSatisfy { $0 > 300 && $0 < 700 }, "a place far from the middle in 100 rounds is not chance")
    }

    /// 20,000 photos over ten years: 15 % taken within a few days of today's date, 25 % rated 5 stars.
    static func decade(count: Int = 20000, seed: UInt64 = 3) -> [Slide] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { number in
            let roll = Int.random(in: 0..<100, using: &generator)
            var daysAgo = Double.random(in: 0..<3652, using: &generator)
            if roll < 15 {
                // An anniversary 1 to 9 years back, give or take two days.
                daysAgo =
                    Double(Int.random(in: 1...9, using: &generator)) * 365.25
                    + Double.random(in: -2...2, using: &generator)
            }
            let rated = Int.random(in: 0..<100, using: &generator) < 25
            return photo("p\(number)", daysAgo: daysAgo, rating: rated ? 5 : nil)
        }
    }

    @Test func theSharesOfTheMixHoldOverAHundredThousandSlides() throws {
        let mix = SelectionMix(onThisDay: 0.1, favourites: 0.2, recent: 0.3, recentDays: 365, rest: 0.4)
        let slides = Self.decade()
        let ages = Dictionary(
            uniqueKeysWithValues: slides.map { ($0.id.name, (Self.today.wallSeconds - $0.timestamp) / Self.day) })
        let favourites = Set(slides.filter { $0.traits.rating == 5 }.map(\.id.name))
        var playlist = Self.playlist(slides, mix: mix, seed: 11)
        let shown = Self.play(&playlist, 100_000)
        #expect(shown.count == 100_000)
        // Within each round of 20,000 no photo twice; measured over each round's first 6,000 slides, while every
        // share still has photos to give (later the anniversaries run out and give their slides to the rest).
        var counts: [SelectionReason: Int] = [:]
        for round in 0..<5 {
            let slice = shown[(round * 20000)..<((round + 1) * 20000)]
            #expect(Set(slice.map { $0.photos[0] }).count == 20000, "round \(round) repeats a photo")
            for slide in slice.prefix(6000) { counts[slide.why ?? .chosen, default: 0] += 1 }
        }
        let total = 30000.0
        // The shares are dealt by round robin, not rolled: within a slide per stretch, a few slides in 30,000.
        #expect(abs(Double(counts[.onThisDay] ?? 0) / total - 0.1) < 0.001, "\(counts)")
        #expect(abs(Double(counts[.favourite] ?? 0) / total - 0.2) < 0.001, "\(counts)")
        #expect(abs(Double(counts[.recent] ?? 0) / total - 0.3) < 0.001, "\(counts)")
        #expect(abs(Double(counts[.round] ?? 0) / total - 0.4) < 0.001, "\(counts)")
        // And in every stretch of 100 slides, not only on the whole: 10 on this day, give or take one.
        let stretch = shown.prefix(6000).map(\.why)
        for start in stride(from: 0, to: 6000, by: 100) {
            let anniversaries = stretch[start..<start + 100].count { $0 == .onThisDay }
            #expect((9...11).contains(anniversaries), "slides \(start)...: \(anniversaries) on this day")
        }
        // Each share gave what it says: anniversaries within 3 days of today's date in an earlier year, rated
        // favourites, and recent photos younger than the rest's.
        for slide in shown where slide.why == .onThisDay {
            let age = try #require(ages[slide.photos[0]])
            let offset = age.truncatingRemainder(dividingBy: 365.2425)
            #expect(age > 300 && min(offset, 365.2425 - offset) <= 4, "\(slide.photos[0]) is \(age) days old")
        }
        #expect(shown.filter { $0.why == .favourite }.allSatisfy { favourites.contains($0.photos[0]) })
        func medianAge(_ reason: SelectionReason) -> Double {
            let sorted = shown.prefix(6000).filter { $0.why == reason }.compactMap { ages[$0.photos[0]] }.sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
        // A one-year half-life over ten years: the median recent pick is a year or two old, the rest's five.
        #expect(medianAge(.recent) < 0.5 * medianAge(.round), "recent \(medianAge(.recent)) rest \(medianAge(.round))")
    }

    @Test func anEmptyShareGivesItsSlidesToTheRest() {
        // No capture dates: nothing is on this day or recent; no ratings: no favourites.
        let mix = SelectionMix(onThisDay: 0.3, favourites: 0.3, recent: 0.2, rest: 0.2)
        var playlist = Self.playlist(Self.plain(500), mix: mix)
        let shown = Self.play(&playlist, 1000)
        #expect(shown.allSatisfy { $0.why == .round })
        #expect(Set(shown.prefix(500).map { $0.photos[0] }).count == 500)
    }

    @Test func theRoundSurvivesARestartAndALibraryThatChangedMeanwhile() throws {
        let mix = SelectionMix(onThisDay: 0.1, favourites: 0.2, recent: 0.3, recentDays: 365, rest: 0.4)
        var slides = Self.decade(count: 3000)
        var playlist = Self.playlist(slides, mix: mix, seed: 5)
        var shown = Self.play(&playlist, 1200).map { $0.photos[0] }
        // Photos copied in while the player runs join this round.
        let arrivals = (0..<40).map { Self.photo("new\($0)", daysAgo: Double($0)) }
        playlist.add(arrivals)
        shown += Self.play(&playlist, 300).map { $0.photos[0] }
        let state = try #require(playlist.savedSelection())
        let json = state.json
        // A few hundred bytes, whatever the library: the thresholds and the photos waiting behind them.
        #expect(json.utf8.count < 4000, "\(json.utf8.count) bytes")
        let reread = try #require(SelectionState.parse(try JSONParser.parse(json)))
        #expect(reread == state)
        // Restarted: the catalog is read again with the arrivals, 20 unshown photos deleted meanwhile and 10
        // photos copied in meanwhile (new to the index).
        slides += arrivals
        let shownSet = Set(shown)
        let deleted = Set(slides.map(\.id.name).filter { !shownSet.contains($0) }.prefix(20))
        slides.removeAll { deleted.contains($0.id.name) }
        slides += (0..<10).map { Self.photo("copied\($0)", daysAgo: 5000, fresh: true) }
        var restarted = Self.playlist(slides, mix: mix, seed: 99, saved: reread)
        // The player shows the saved slide again first, then goes on.
        let last = try #require(shown.last)
        restarted.moveTo(SlideID(category: "c", name: last))
        let rest = Self.play(&restarted, slides.count - shownSet.count).map { $0.photos[0] }
        #expect(Set(rest).isDisjoint(with: shownSet), "a photo shown before the restart came again in the round")
        #expect(Set(rest).isDisjoint(with: deleted))
        #expect(shownSet.union(rest) == Set(slides.map(\.id.name)), "every photo of the library once in the round")
        #expect(rest.count == Set(rest).count)
    }

    @Test func portraitPhotosArePairedFromTheDrawAndTheRoundStillHoldsEachOnce() throws {
        var generator = SeededGenerator(seed: 21)
        let slides = (0..<600).map { Self.photo("p\($0)", portrait: Bool.random(using: &generator)) }
        let portraits = Set(slides.filter(\.traits.portrait).map(\.id.name))
        var playlist = Self.playlist(slides, pairs: true, seed: 3)
        var shown = Self.play(&playlist, 150)
        let state = try #require(playlist.savedSelection())
        var restarted = Self.playlist(slides, pairs: true, seed: 4, saved: state)
        let lastPhotos = try #require(shown.last?.photos)
        let lastID = SlideID(category: "c", name: lastPhotos.joined(separator: " + "))
        restarted.moveTo(lastID)
        var round: [String] = shown.flatMap(\.photos)
        while round.count < 600, let next = Optional(Self.play(&restarted, 1)), let slide = next.first {
            shown.append(slide)
            round += slide.photos
        }
        #expect(round.count == 600)
        #expect(Set(round).count == 600, "a photo came twice in the round")
        let pairs = shown.filter { $0.photos.count == 2 }
        #expect(pairs.allSatisfy { $0.photos.allSatisfy(portraits.contains) })
        // With a look ahead of 24, nearly every portrait photo finds a partner.
        #expect(pairs.count * 2 > portraits.count * 8 / 10, "\(pairs.count) pairs of \(portraits.count) portraits")
    }

    @Test func photosLeavingAndArrivingMidRoundAreNotWaitedForAndAreShown() {
        var playlist = Self.playlist(Self.plain(300), seed: 9)
        let first = Self.play(&playlist, 120).map { $0.photos[0] }
        let arrivals = (0..<100).map { Self.photo("new\($0)") }
        playlist.add(arrivals)
        let unshown = Set((0..<300).map { "p\($0)" }).subtracting(first)
        let leaving = Set(unshown.sorted().prefix(30))
        playlist.remove(Set(leaving.map { SlideID(category: "c", name: $0) }))
        #expect(playlist.count == 370)
        let second = Self.play(&playlist, 250).map { $0.photos[0] }
        #expect(Set(first + second).count == 370, "the round shows every photo there is, once")
        #expect(Set(arrivals.map(\.id.name)).isSubset(of: Set(second)))
        #expect(Set(second).isDisjoint(with: leaving))
        // A photo replaced under its name keeps its place in the round: shown once, with the new file.
        let replaced = SlideID(category: "c", name: second[10])
        playlist.add([Slide(id: replaced, original: "/lib/c/other.jpg", renditions: [])])
        #expect(playlist.slide(replaced)?.original == "/lib/c/other.jpg")
        #expect(playlist.count == 370)
    }

    @Test func aStarGivenOnTheFrameMakesAFavouriteAndATakenStarWinsOverTheRating() {
        var favourites = Favourites(rating: 4)
        let starred = SlideID(category: "c", name: "p1")
        let rated = SlideID(category: "c", name: "p2")
        #expect(favourites.contains(rated, rating: 4))
        #expect(!favourites.contains(starred, rating: nil))
        let starredChanged = favourites.set(starred, starred: true, rating: nil)
        let unstarredChanged = favourites.set(rated, starred: false, rating: 4)
        let againChanged = favourites.set(rated, starred: false, rating: 4)
        #expect(starredChanged && unstarredChanged && !againChanged)
        #expect(favourites.contains(starred, rating: nil))
        #expect(!favourites.contains(rated, rating: 4))
        var reread = Favourites(rating: 4)
        reread.load(fileText: favourites.fileText + "garbage\n+\n")
        #expect(reread == favourites)
        // In the draw: the favourites' share takes only favourites, the starred one among them.
        let slides = (0..<200).map { Self.photo("p\($0)", rating: $0 % 10 == 0 ? 5 : nil) }
        var playlist = Self.playlist(
            slides, mix: SelectionMix(favourites: 0.5, rest: 0.5), favourites: Favourites(rating: 4))
        var allFavourites = Favourites(rating: 4)
        allFavourites.set(SlideID(category: "c", name: "p1"), starred: true, rating: nil)
        playlist.setFavourites(allFavourites)
        let shown = Self.play(&playlist, 40)
        let fromFavourites = Set(shown.filter { $0.why == .favourite }.map { $0.photos[0] })
        let expected = Set((0..<200).filter { $0 % 10 == 0 }.map { "p\($0)" } + ["p1"])
        #expect(fromFavourites.isSubset(of: expected))
        #expect(fromFavourites.count >= 15)
    }

    @Test func anniversariesGoRoundNewYearAndLeapDays() {
        func captured(_ year: Int, _ month: Int, _ day: Int) -> Double {
            Double(CivilDate.daysSince1970(year: year, month: month, day: day)) * 86400 + 3600
        }
        let newYear = ShowDay(year: 2027, month: 1, day: 1)
        #expect(newYear.isAnniversary(of: captured(2019, 12, 30), leeway: 3))
        #expect(newYear.isAnniversary(of: captured(2020, 1, 4), leeway: 3))
        #expect(!newYear.isAnniversary(of: captured(2020, 1, 5), leeway: 3))
        // Last week is not "on this day in an earlier year".
        #expect(!newYear.isAnniversary(of: captured(2026, 12, 30), leeway: 3))
        let leapDay = captured(2020, 2, 29)
        #expect(ShowDay(year: 2024, month: 2, day: 29).isAnniversary(of: leapDay, leeway: 0))
        #expect(ShowDay(year: 2027, month: 2, day: 28).isAnniversary(of: leapDay, leeway: 0))
        #expect(!ShowDay(year: 2028, month: 2, day: 28).isAnniversary(of: leapDay, leeway: 0))
        #expect(ShowDay(year: 2027, month: 3, day: 1).isAnniversary(of: leapDay, leeway: 1))
        #expect(ShowDay(year: 2026, month: 12, day: 6).yearsSince(captured(2023, 12, 5)) == 3)
        #expect(ShowDay(year: 2027, month: 1, day: 1).yearsSince(captured(2019, 12, 30)) == 7)
    }

    @Test func theDayTurningBringsItsOwnAnniversariesAndKeepsTheRound() throws {
        // Photos taken on 6 and 20 December in earlier years; the day turns from the 6th to the 20th mid-round.
        func years(_ number: Int) -> Double { 365.25 * Double(1 + number % 5) }
        let sixth: [Slide] = (0..<50).map { Self.photo("six\($0)", daysAgo: years($0)) }
        let twentieth: [Slide] = (0..<50).map { Self.photo("twenty\($0)", daysAgo: years($0) - 14) }
        let others: [Slide] = (0..<400).map { Self.photo("other\($0)", daysAgo: 100 + 0.6 * Double($0)) }
        let slides = sixth + twentieth + others
        var playlist = Self.playlist(slides, mix: SelectionMix(onThisDay: 0.5, rest: 0.5), seed: 2)
        let before = Self.play(&playlist, 60)
        let early = before.filter { $0.why == SelectionReason.onThisDay }.map { $0.photos[0] }
        #expect(early.allSatisfy { $0.hasPrefix("six") }, "\(early)")
        playlist.setToday(ShowDay(year: 2026, month: 12, day: 20))
        let state = try #require(playlist.savedSelection())
        var restarted = Self.playlist(slides, mix: SelectionMix(onThisDay: 0.5, rest: 0.5), seed: 8, saved: state)
        restarted.setToday(ShowDay(year: 2026, month: 12, day: 20))
        let after = Self.play(&restarted, 500 - 60)
        #expect(after.filter { $0.why == SelectionReason.onThisDay }.allSatisfy { $0.photos[0].hasPrefix("twenty") })
        #expect(after.filter { $0.why == SelectionReason.onThisDay }.count >= 40)
        let all = (before + after).map { $0.photos[0] }
        #expect(Set(all).count == 500, "the day's turn and the restart lose nothing and repeat nothing")
    }

    @Test func theMixIsReadAndCheckedWhereTheConfigSaysIt() throws {
        let settings = try Settings.parse(
            """
            {"mix": {"onThisDay": {"share": 0.3, "days": 2}, "favourites": 0.2, "recent": {"share": 0.3, "days": 60}},
             "minRating": 2, "favouriteRating": 5}
            """, file: "v.json")
        #expect(settings.order == .shuffle)
        #expect(settings.mix.onThisDay == 0.3 && settings.mix.onThisDayDays == 2 && settings.mix.favourites == 0.2)
        #expect(settings.mix.recent == 0.3 && settings.mix.recentDays == 60 && abs(settings.mix.rest - 0.2) < 1e-9)
        #expect(settings.minRating == 2)
        #expect(settings.favouriteRating == 5)
        let refusals: [(String, String, String)] = [
            ("{\"mix\": {\"favourites\": 0.8, \"recent\": 0.4}}", "mix.favourites", "add up to 1.2"),
            ("{\"mix\": {\"favourites\": 0.5, \"rest\": 0.2}}", "mix.rest", "add up to 0.7"),
            ("{\"order\": \"name\",\n \"mix\": {\"favourites\": 0.5}}", "mix", "\"order\": \"shuffle\""),
            ("{\"mix\": {\"recent\": {\"days\": 3}}}", "mix.recent.share", "missing"),
            ("{\"mix\": {\"onThisDay\": {\"share\": 0.1, \"days\": 1.5}}}", "mix.onThisDay.days", "whole number"),
            ("{\"mix\": {\"often\": 0.5}}", "mix.often", "unknown key"),
            ("{\"minRating\": 6}", "minRating", "out of range"),
        ]
        for (text, path, words) in refusals {
            let error = #expect(throws: ConfigError.self) { try Settings.parse(text, file: "v.json") }
            #expect(error?.path == path, "\(text)")
            #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
        }
    }

    @Test func theRatingIsFoundInXMPAsAttributeOrElement() {
        func rating(_ text: String) -> Int? { XMPRating.rating(in: Array(text.utf8)[...]) }
        #expect(rating("<rdf:Description xmp:Rating=\"4\" xmp:CreatorTool=\"Lightroom\"/>") == 4)
        #expect(rating("<rdf:Description xmp:Rating = '5'>") == 5)
        #expect(rating("<xmp:Rating>3</xmp:Rating>") == 3)
        #expect(rating("<xmp:Rating>\n  2.0</xmp:Rating>") == 2)
        #expect(rating("<rdf:Description xmp:Rating=\"-1\"/>") == -1)
        #expect(rating("<rdf:Description xmp:Rating=\"7\"/>") == nil)
        #expect(rating("<rdf:Description MicrosoftPhoto:Rating=\"75\"/>") == nil)
        #expect(rating("<rdf:Description xmp:RatingX=\"4\" xmp:Rating=\"1\"/>") == 1)
        #expect(rating("xmp:Rating=\"") == nil)
        #expect(rating("") == nil)
    }

    @Test func theLogarithmIsRightToTheLastBits() {
        let cases: [(Double, Double)] = [
            (1, 0), (2, 0.693_147_180_559_945_3), (0.5, -0.693_147_180_559_945_3), (10, 2.302_585_092_994_046),
            (1e-300, -690.775_527_898_213_7), (0.999_999, -1.000_000_500_029_089e-06),
        ]
        for (value, expected) in cases {
            let got = SmallMath.log(value)
            #expect(abs(got - expected) <= 1e-15 * max(1, expected.magnitude), "log(\(value)) = \(got)")
        }
    }
}
