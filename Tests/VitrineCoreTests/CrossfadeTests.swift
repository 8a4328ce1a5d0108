import Testing
import VitrineCore

/// Crossfade pacing with a manual clock, and the slide timer counting from the end of the fade.
@Suite struct CrossfadeTests {
    let budget = MemoryBudget(limit: 1 << 20)

    @Test func stepsFollowTheClockAndEndOnTime() {
        var fade = Crossfade(started: 10, duration: 1)
        var weights: [Int] = []
        var now = 10.0
        while !fade.isFinished {
            weights.append(fade.nextWeight(at: now, frameTime: 1.0 / 60))
            now += 1.0 / 60
        }
        // One step per vblank: about 60 steps, always rising, the last exactly the new slide.
        #expect((58...62).contains(weights.count))
        #expect(zip(weights, weights.dropFirst()).allSatisfy { $0 < $1 })
        #expect(weights.first ?? 0 > 0 && weights.last == Crossfade.fullWeight)
        #expect(now - 10 <= 1.0 + 1.0 / 60)
    }

    @Test func aSlowBlendDropsStepsInsteadOfSlowingTheFade() {
        var fade = Crossfade(started: 0, duration: 1)
        var now = 0.0
        var steps = 0
        while !fade.isFinished {
            _ = fade.nextWeight(at: now, frameTime: 1.0 / 60)
            steps += 1
            // Each blend takes three frames.
            now += 3.0 / 60
        }
        #expect((19...21).contains(steps))
        #expect(now < 1.06)
    }

    @Test func hurryingMakesTheNextStepTheLast() {
        var fade = Crossfade(started: 0, duration: 2)
        #expect(fade.nextWeight(at: 0, frameTime: 1.0 / 60) < 10)
        fade.finishNow()
        #expect(fade.nextWeight(at: 0.02, frameTime: 1.0 / 60) == Crossfade.fullWeight)
        #expect(fade.isFinished)
    }

    @Test func theIntervalCountsFromTheEndOfTheFade() throws {
        var player = Player(options: Player.Options(interval: 10, transitionSeconds: 1.5))
        _ = player.handle(.start(categories: ["A"], now: 0))
        let slides = ["a", "b"].map {
            Slide(id: SlideID(category: "A", name: $0), original: "/lib/A/\($0).jpg", renditions: [])
        }
        let decode = player.handle(.indexed(category: "A", slides: slides, now: 0))
        let request = try #require(
            decode.compactMap { if case .decode(let request) = $0 { return request } else { return nil } }.first)
        let frame = { () throws in try Frame(size: Size(width: 4, height: 4), budget: self.budget, purpose: "t") }
        // The first slide comes up at once: nothing to fade from.
        let shown = player.handle(.decoded(request, try frame(), now: 2))
        #expect(shown.map(\.description).contains("arm 12.0"))
        let prefetch = try #require(
            shown.compactMap { if case .decode(let request) = $0 { return request } else { return nil } }.first)
        _ = player.handle(.decoded(prefetch, try frame(), now: 3))
        _ = player.handle(.flipDone(now: 2.02))
        let next = player.handle(.timerFired(generation: player.timer.generation, now: 12))
        #expect(next.map(\.description).contains("arm 23.5"))
    }
}
