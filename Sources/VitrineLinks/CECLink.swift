import VitrineCore
import VitrinePlatform

/// HDMI-CEC on the player's loop: the adapter on the screen's HDMI port (`CECAdapter`), the playback device's
/// state machine (`CECMachine`) and its poll timer. It hands the player what the bus means for the show: holds,
/// releases and remote keys.
package final class CECLink {
    private enum Source {
        case adapter, timer
    }

    package enum Outcome: Equatable {
        case hold(PauseReason)
        case release(PauseReason)
        case key(String)
    }

    private let adapter: CECAdapter
    private var machine: CECMachine
    private let timer: MonotonicTimer
    private let log: EventLog
    private var lastRefusal: Int32?
    private var sources: LoopSources?

    package var state: CECMachine { machine }
    package var device: String { adapter.info.path }

    /// The adapter the settings name, else the one on the screen's DRM connector when the kernel tells, else the
    /// only one. Nil (with one log line saying why) when there is none to use: the show goes on without CEC.
    package static func start(
        settings: CECSettings, screen: (cardPath: String, connectorID: UInt32)?, screenOn: Bool, log: EventLog
    ) -> CECLink? {
        let path: String
        switch choose(
            from: settings.adapter == nil ? CECAdapter.list() : [], configured: settings.adapter, screen: screen)
        {
        case .success(let chosen): path = chosen
        case .failure(let problem):
            log(.warning, "CEC: \(problem.reason)")
            return nil
        }
        do {
            let adapter = try CECAdapter(path: path, osdName: settings.osdName)
            let timer = try MonotonicTimer()
            log("CEC: \(adapter.info.name) on \(path), claiming a playback address as \"\(settings.osdName)\"")
            return CECLink(
                adapter: adapter, machine: CECMachine(settings: settings, screenOn: screenOn), timer: timer, log: log)
        } catch let error as CECError {
            log(.warning, "\(error); the TV will not follow the screen")
        } catch {
            log(.warning, "CEC: \(error); the TV will not follow the screen")
        }
        return nil
    }

    struct NoAdapter: Error, Equatable {
        var reason: String
    }

    /// Which adapter to use: the configured one; else the one the kernel says is on the screen's DRM connector;
    /// else the only one.
    static func choose(
        from adapters: [CECAdapter.Info], configured: String?, screen: (cardPath: String, connectorID: UInt32)?
    ) -> Result<String, NoAdapter> {
        if let configured { return .success(configured) }
        let card = screen.flatMap { UInt32($0.cardPath.drop { !$0.isNumber }) }
        if let screen,
            let match = adapters.first(where: { $0.drm?.card == card && $0.drm?.connector == screen.connectorID })
        {
            return .success(match.path)
        }
        if adapters.count == 1, let only = adapters.first { return .success(only.path) }
        if adapters.isEmpty {
            return .failure(NoAdapter(reason: "no adapter (/dev/cec*); the TV will not follow the screen"))
        }
        return .failure(
            NoAdapter(
                reason: "\(adapters.count) adapters (\(adapters.map(\.path).joined(separator: ", "))) and none is "
                    + "known to be on the screen's port; set cec.adapter"))
    }

    private init(adapter: CECAdapter, machine: CECMachine, timer: MonotonicTimer, log: EventLog) {
        self.adapter = adapter
        self.machine = machine
        self.timer = timer
        self.log = log
    }

    /// Watches the adapter and the timer in `loop`; what they bring for the show goes to `outcomes`.
    package func register(in loop: EventLoop, outcomes: @escaping ([Outcome], Double) -> Void) throws(RuntimeError) {
        var sources = LoopSources(loop)
        try sources.add(adapter.descriptor, events: EventLoop.readable | EventLoop.priority) { [unowned self] _ in
            let now = MonotonicClock.seconds()
            outcomes(handle(.adapter, now: now), now)
        }
        try sources.add(timer.descriptor) { [unowned self] _ in
            let now = MonotonicClock.seconds()
            outcomes(handle(.timer, now: now), now)
        }
        self.sources = sources
    }

    private func handle(_ source: Source, now: Double) -> [Outcome] {
        switch source {
        case .adapter:
            var outcomes: [Outcome] = []
            for event in adapter.service() {
                switch event {
                case .claimed(let logical, let physical):
                    outcomes += perform(machine.claimed(logical: logical, physical: physical, now: now))
                case .unconfigured:
                    outcomes += perform(machine.unconfigured())
                case .received(let message):
                    outcomes += perform(machine.received(message, now: now))
                case .transmitted(let message, let acknowledged):
                    outcomes += perform(machine.transmitted(message, acknowledged: acknowledged))
                }
            }
            return outcomes
        case .timer:
            timer.acknowledge()
            return perform(machine.timerFired(now: now))
        }
    }

    package func screen(on: Bool, now: Double) -> [Outcome] {
        perform(machine.screen(on: on, now: now))
    }

    package func close() {
        sources?.removeAll()
        sources = nil
        adapter.close()
    }

    private func perform(_ actions: [CECMachine.Action]) -> [Outcome] {
        var outcomes: [Outcome] = []
        for action in actions {
            switch action {
            case .transmit(let message):
                if let refused = adapter.transmit(message) {
                    if refused != lastRefusal {
                        log(.warning, "\(CECError(device: device, operation: "send \(message)", errno: refused))")
                    }
                    lastRefusal = refused
                } else {
                    lastRefusal = nil
                }
            case .hold(let reason): outcomes.append(.hold(reason))
            case .release(let reason): outcomes.append(.release(reason))
            case .key(let name): outcomes.append(.key(name))
            case .arm(let at): timer.arm(at: at)
            case .log(let line): log(line)
            }
        }
        return outcomes
    }
}
