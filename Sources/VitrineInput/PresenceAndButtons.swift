import VitrineCore
import VitrinePlatform

/// Buttons and the motion sensor on GPIO lines, and the room's presence, for the player thread: the line and timer
/// descriptors sit in its epoll, each readable one is turned into player events here. The state machines
/// (`ButtonMachine`, `PresenceMachine`) decide; this class only reads edges, arms timers and says what happened.
///
/// A line that is missing or busy is one log line at start, and the show goes on without it.
public final class PresenceAndButtons {
    private var buttons: [(input: GPIOLineInput, machine: ButtonMachine)] = []
    private let sensor: GPIOLineInput?
    private var presence: PresenceMachine?
    private let buttonTimer: MonotonicTimer
    private let presenceTimer: MonotonicTimer
    /// What went wrong opening the lines, said once at start.
    private(set) var problems: [String] = []
    private var sources: LoopSources?

    /// The buttons and presence `settings` ask for, registered in `loop` (what they make of an edge or a timer
    /// goes to `events`), with what went wrong opening the lines logged; nil when the settings have none or the
    /// timers cannot be made (logged too).
    public static func start(
        settings: Settings, in loop: EventLoop, now: Double, log: EventLog,
        events: @escaping ([Player.Event]) -> Void
    ) -> PresenceAndButtons? {
        guard !settings.buttons.isEmpty || settings.presence != nil else { return nil }
        do {
            let started = try PresenceAndButtons(settings: settings, now: now)
            try started.register(in: loop, events: events)
            for problem in started.problems { log(.warning, problem) }
            return started
        } catch {
            log(.warning, "buttons and presence will not work: \(error)")
            return nil
        }
    }

    init(settings: Settings, now: Double) throws(RuntimeError) {
        buttonTimer = try MonotonicTimer()
        presenceTimer = try MonotonicTimer()
        for button in settings.buttons {
            do {
                let input = try GPIOLineInput(button.line)
                let machine = ButtonMachine(
                    binding: button.binding, debounceSeconds: button.debounceSeconds,
                    longPressSeconds: settings.longPressSeconds)
                buttons.append((input, machine))
            } catch {
                problems.append("\(error); that button is left out")
            }
        }
        var sensor: GPIOLineInput?
        if let line = settings.presence?.sensor {
            do {
                sensor = try GPIOLineInput(line)
            } catch {
                problems.append("\(error); presence goes by input alone")
            }
        }
        self.sensor = sensor
        if let settings = settings.presence {
            var machine = PresenceMachine(offAfter: settings.offAfterMinutes * 60)
            carryOut(machine.handle(.start(motion: sensor?.isActive ?? false, now: now)), now: now)
            presence = machine
        }
    }

    /// Whether someone is in the room, for `status` and the metrics; nil without presence settings.
    public var isPresent: Bool? { presence?.isPresent }

    /// Whether the motion sensor sees motion now; nil without a sensor.
    public var motion: Bool? { sensor == nil ? nil : presence?.motion }

    private enum Source {
        case buttonTimer, presenceTimer, button(Int), sensor
    }

    func register(in loop: EventLoop, events: @escaping ([Player.Event]) -> Void) throws(RuntimeError) {
        var sources = LoopSources(loop)
        var watched: [(Int32, Source)] = [
            (buttonTimer.descriptor, .buttonTimer), (presenceTimer.descriptor, .presenceTimer),
        ]
        for (index, button) in buttons.enumerated() { watched.append((button.input.descriptor, .button(index))) }
        if let sensor { watched.append((sensor.descriptor, .sensor)) }
        for (descriptor, source) in watched {
            try sources.add(descriptor) { [unowned self] _ in events(handle(source, now: MonotonicClock.seconds())) }
        }
        self.sources = sources
    }

    /// The player events for a readable descriptor of ours.
    private func handle(_ source: Source, now: Double) -> [Player.Event] {
        switch source {
        case .buttonTimer:
            buttonTimer.acknowledge()
            var events: [Player.Event] = []
            for index in buttons.indices {
                guard let due = buttons[index].machine.deadline, due <= now else { continue }
                events += buttonEvents(buttons[index].machine.handle(.deadline(now: now)), now: now)
            }
            armButtonTimer()
            return events
        case .presenceTimer:
            presenceTimer.acknowledge()
            return presenceEvents(.deadline(now: now), now: now)
        case .button(let index):
            var events: [Player.Event] = []
            for edge in buttons[index].input.readEdges() {
                events += buttonEvents(
                    buttons[index].machine.handle(.edge(pressed: edge.active, at: edge.seconds)), now: now)
            }
            armButtonTimer()
            return events
        case .sensor:
            guard let sensor else { return [] }
            var events: [Player.Event] = []
            for edge in sensor.readEdges() {
                events += presenceEvents(.motion(edge.active, now: now), now: now)
                if edge.active { events.append(.seen(now: now)) }
            }
            return events
        }
    }

    /// A key, touch, button or control command: someone is there. It goes to the player after the action it
    /// carried, so a `screen` press on a dark screen finds it dark; and that action (`wakes` false) is not also
    /// taken as someone to wake the screen for, or turning it off outside the schedule would light it again.
    public func activity(now: Double, wakes: Bool = true) -> [Player.Event] {
        presenceEvents(.activity(now: now), now: now) + (wakes ? [.seen(now: now)] : [])
    }

    /// Releases the lines, so another program (or the next start) can have them at once.
    public func close() {
        sources?.removeAll()
        sources = nil
        for button in buttons { button.input.close() }
        sensor?.close()
    }

    private func buttonEvents(_ actions: [ButtonMachine.Action], now: Double) -> [Player.Event] {
        var events: [Player.Event] = []
        for action in actions {
            switch action {
            case .press(let what), .longPress(let what):
                events += [.user(what, now: now)] + activity(now: now, wakes: what != .screen)
            case .arm:
                break
            }
        }
        return events
    }

    private func armButtonTimer() {
        if let next = buttons.compactMap({ $0.machine.deadline }).min() {
            buttonTimer.arm(at: next)
        } else {
            buttonTimer.disarm()
        }
    }

    private func presenceEvents(_ event: PresenceMachine.Event, now: Double) -> [Player.Event] {
        guard var machine = presence else { return [] }
        let actions = machine.handle(event)
        presence = machine
        return carryOut(actions, now: now)
    }

    @discardableResult
    private func carryOut(_ actions: [PresenceMachine.Action], now: Double) -> [Player.Event] {
        var events: [Player.Event] = []
        for action in actions {
            switch action {
            case .arm(let deadline):
                if let deadline { presenceTimer.arm(at: deadline) } else { presenceTimer.disarm() }
            case .present(let why):
                events.append(.presence(present: true, why: why, now: now))
            case .absent(let why):
                events.append(.presence(present: false, why: why, now: now))
            }
        }
        return events
    }
}
