import Testing

@testable import VitrineCore

/// The player told that the room emptied or filled (a `PresenceMachine`'s verdicts), with a manual clock: the
/// screen, the slide timer and their order against the schedule, a user pause and an unplugged cable.
@Suite struct PresencePlayerTests {
    /// A player showing `A/a` since t=0 with an interval of 10 s.
    func showing(wakeOutsideSchedule: Bool = false) throws -> Player {
        var player = Player(options: Player.Options(interval: 10, wakeOutsideSchedule: wakeOutsideSchedule))
        _ = player.handle(.start(categories: ["A"], now: 0))
        let request = try #require(
            PlayerTests.requests(
                player.handle(.indexed(category: "A", slides: PlayerTests.slides(["a", "b"]), now: 0))
            )
            .first)
        _ = player.handle(
            .decoded(
                request, try Frame(size: Size(width: 4, height: 4), budget: MemoryBudget(limit: 1 << 20), purpose: "t"),
                now: 0))
        return player
    }

    static func text(_ actions: [Player.Action]) -> [String] { PlayerTests.text(actions) }

    @Test func anEmptyRoomDarkensTheScreenAndSomeoneBringsItBackWithAFullInterval() throws {
        var player = try showing()
        let gone = player.handle(.presence(present: false, why: "no motion or input for 10 min", now: 4))
        #expect(
            Self.text(gone) == ["screen off", "log nobody is there (no motion or input for 10 min)", "disarm"])
        #expect(player.status(now: 5).paused == [.absent])
        let back = player.handle(.presence(present: true, why: "motion", now: 100))
        #expect(Self.text(back) == ["screen on", "log somebody is there (motion)", "arm 110.0"])
        #expect(player.status(now: 100).paused.isEmpty)
    }

    /// Without `wakeOutsideSchedule` the night stays dark whoever walks in, and the morning waits for someone.
    @Test func theScheduleWinsAtNight() throws {
        var player = try showing()
        #expect(Self.text(player.handle(.command(.screen(on: false), now: 1))).first == "screen off")
        #expect(Self.text(player.handle(.presence(present: false, why: "quiet", now: 2))) == [])
        #expect(Self.text(player.handle(.presence(present: true, why: "motion", now: 3))) == [])
        #expect(Self.text(player.handle(.seen(now: 4))) == [])
        #expect(player.status(now: 4).paused == [.screenOff])
        _ = player.handle(.presence(present: false, why: "quiet", now: 5))
        // The morning's `screen on` with nobody there: still dark, still held, until someone comes.
        #expect(
            Self.text(player.handle(.command(.screen(on: true), now: 6))) == ["log screen on when somebody is there"])
        #expect(player.status(now: 6).paused == [.absent])
        #expect(
            Self.text(player.handle(.presence(present: true, why: "motion", now: 7)))
                == ["screen on", "log somebody is there (motion)", "arm 17.0"])
    }

    /// With `wakeOutsideSchedule` someone moving at night lights the screen and the show goes on; the empty room
    /// darkens it again, and the schedule's next change ends the wake.
    @Test func someoneWakesTheScreenOutsideTheSchedule() throws {
        var player = try showing(wakeOutsideSchedule: true)
        _ = player.handle(.command(.screen(on: false), now: 1))
        #expect(
            Self.text(player.handle(.seen(now: 50)))
                == ["screen on", "log somebody is there outside the schedule", "arm 60.0"])
        #expect(player.status(now: 50).paused.isEmpty)
        #expect(Self.text(player.handle(.presence(present: false, why: "quiet", now: 70))).prefix(1) == ["screen off"])
        #expect(player.status(now: 70).paused.sorted() == [.screenOff, .absent])
        // Motion that makes the room present again wakes it too.
        #expect(Self.text(player.handle(.presence(present: true, why: "motion", now: 80))).first == "screen on")
        // The morning: already on, nothing to do but let go of the night.
        #expect(Self.text(player.handle(.command(.screen(on: true), now: 90))) == [])
        #expect(player.status(now: 90).paused.isEmpty)
        // The evening turns it off even with someone there.
        #expect(Self.text(player.handle(.command(.screen(on: false), now: 200))).first == "screen off")
    }

    /// A reloaded config that turns `wakeOutsideSchedule` on applies to the night already under way.
    @Test func aReloadTurnsTheWakeOn() throws {
        var player = try showing()
        _ = player.handle(.command(.screen(on: false), now: 1))
        #expect(Self.text(player.handle(.seen(now: 2))).isEmpty)
        var options = player.options
        options.wakeOutsideSchedule = true
        _ = player.update(options)
        #expect(Self.text(player.handle(.seen(now: 3))).first == "screen on")
    }

    /// A user's pause and an unplugged cable are their own reasons: the room filling does not resume the show.
    @Test func presenceNestsWithAPauseAndAnUnplug() throws {
        var player = try showing()
        _ = player.handle(.command(.pause, now: 1))
        _ = player.handle(.presence(present: false, why: "quiet", now: 2))
        #expect(
            Self.text(player.handle(.presence(present: true, why: "input", now: 3)))
                == ["screen on", "log somebody is there (input)"])
        #expect(player.status(now: 3).paused == [.user])
        _ = player.handle(.command(.resume, now: 4))
        _ = player.handle(.hold(.unplugged, now: 5))
        _ = player.handle(.presence(present: false, why: "quiet", now: 6))
        #expect(Self.text(player.handle(.presence(present: true, why: "motion", now: 7))).prefix(1) == ["screen on"])
        #expect(player.status(now: 7).paused == [.unplugged])
        #expect(Self.text(player.handle(.release(.unplugged, now: 8))).count == 1)
        #expect(player.status(now: 8).paused.isEmpty)
    }
}
