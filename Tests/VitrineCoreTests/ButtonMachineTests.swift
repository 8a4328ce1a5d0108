import Testing

@testable import VitrineCore

/// A GPIO push button with a manual clock: 20 ms debounce, long press after one second. The timer is fired when
/// the machine asked for it (`deadline`), as the runtime's timerfd would.
@Suite struct ButtonMachineTests {
    /// What the user would notice: presses, not timer arms.
    static func presses(_ actions: [ButtonMachine.Action]) -> [String] {
        actions.filter { if case .arm = $0 { false } else { true } }.map(\.description)
    }

    static func button(long: KeyMap.Action? = nil) -> ButtonMachine {
        ButtonMachine(binding: .init(action: .next, longAction: long), debounceSeconds: 0.02, longPressSeconds: 1)
    }

    /// Fires the timer at the deadline the machine asked for, as often as it asks, up to `until`.
    static func run(_ button: inout ButtonMachine, until: Double) -> [String] {
        var seen: [String] = []
        while let due = button.deadline, due <= until { seen += presses(button.handle(.deadline(now: due))) }
        return seen
    }

    /// A bouncing contact (edges 1 ms apart on press and release) gives one press, when the level has settled.
    @Test func aBouncingPressIsOnePress() throws {
        var button = Self.button()
        for (index, level) in [true, false, true, false, true].enumerated() {
            #expect(Self.presses(button.handle(.edge(pressed: level, at: 10 + Double(index) * 0.001))).isEmpty)
        }
        let due = try #require(button.deadline)
        #expect(abs(due - 10.024) < 1e-9, "settles 20 ms after the last bounce")
        #expect(Self.run(&button, until: 11) == ["press next"])
        // The release bounces too, and gives nothing more.
        for (index, level) in [false, true, false].enumerated() {
            _ = button.handle(.edge(pressed: level, at: 10.5 + Double(index) * 0.001))
        }
        #expect(Self.run(&button, until: 12).isEmpty)
        #expect(!button.pressed)
        #expect(button.deadline == nil)
    }

    /// A spike shorter than the debounce time (a glitch on a long wire) that ends back at rest is no press.
    @Test func aGlitchIsNoPress() {
        var button = Self.button()
        _ = button.handle(.edge(pressed: true, at: 5))
        _ = button.handle(.edge(pressed: false, at: 5.003))
        #expect(Self.run(&button, until: 6).isEmpty)
        #expect(button.deadline == nil)
    }

    /// With a second action, a short press acts on release and a held one acts at one second, while still held.
    @Test func shortAndLongPresses() {
        var button = Self.button(long: .nextCategory)
        _ = button.handle(.edge(pressed: true, at: 0))
        #expect(Self.run(&button, until: 0.4).isEmpty, "nothing yet: it may become a long press")
        _ = button.handle(.edge(pressed: false, at: 0.4))
        #expect(Self.run(&button, until: 2) == ["press next"])
        _ = button.handle(.edge(pressed: true, at: 2))
        #expect(Self.run(&button, until: 2.9).isEmpty)
        #expect(Self.run(&button, until: 3.1) == ["long press nextCategory"], "at one second, still held")
        // Its release is not a short press as well.
        _ = button.handle(.edge(pressed: false, at: 5))
        #expect(Self.run(&button, until: 6).isEmpty)
    }

    /// A timer that fires before its time (or one armed before a later edge) asks again and does nothing else.
    @Test func anEarlyTimerReArms() {
        var button = Self.button()
        _ = button.handle(.edge(pressed: true, at: 1))
        let early = button.handle(.deadline(now: 1.01))
        #expect(Self.presses(early).isEmpty)
        #expect(early.contains(.arm(button.deadline)))
        #expect(Self.run(&button, until: 2) == ["press next"])
    }

    @Test func withoutDebounceEdgesAreTakenAsTheyCome() {
        var button = ButtonMachine(binding: .init(action: .pause), debounceSeconds: 0, longPressSeconds: 1)
        #expect(Self.presses(button.handle(.edge(pressed: true, at: 1))) == ["press pause"])
        #expect(Self.presses(button.handle(.edge(pressed: false, at: 1.001))).isEmpty)
    }
}
