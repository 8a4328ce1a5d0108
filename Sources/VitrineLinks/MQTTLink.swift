import VitrineCore
import VitrineImage
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The player on the MQTT broker: keeps the connection (`BrokerConnection`), publishes availability, state and
/// Home Assistant discovery, and takes commands from the player's, the fleet's and its groups' command topics.
/// Everything runs on the player's loop and nothing waits for the network: a broker that is down, slow or
/// refusing costs the show nothing.
package final class MQTTLink {
    private enum Source {
        case socket, attempt, housekeeping, retry, state
        case outputState(Int)
    }

    let settings: MQTTSettings
    let topics: MQTTTopics
    private let client: MQTTClient
    private var connection: BrokerConnection
    private var publisher = StatePublisher()
    private let housekeepingTimer: MonotonicTimer
    private let retryTimer: MonotonicTimer
    private let stateTimer: MonotonicTimer
    private let device: HomeAssistantDiscovery.Device
    private let log: EventLog
    private var sources: LoopSources?
    private var watched: (source: EventLoop.Source, writes: Bool)?
    /// When the housekeeping timer fires next; nil while it is disarmed.
    private var housekeepingDue: Double?
    private var categories: [String] = []
    /// The show's state as last told, whether or not it could be published then.
    private var latestState: MQTTState?
    /// Each output's show, where there are several: its topics, device, categories and state.
    private var outputs: [Output]

    private struct Output {
        var topics: MQTTTopics
        var device: HomeAssistantDiscovery.Device
        var categories: [String] = []
        var latestState: MQTTState?
        var publisher = StatePublisher()
        /// When a state held back by the publisher's spacing is due.
        let timer: MonotonicTimer
    }
    /// The slide on screen as JPEG, when `image` is on.
    private var latestImage: [UInt8]?
    /// Answers one command line as the control socket does, within the authority given and naming the setting.
    package var answer: (String, CommandAuthority, String) -> String = { _, _, _ in "error: not ready" }
    /// Topics whose values the overlay shows (Home Assistant sensors), and where their messages go.
    let overlayTopics: [String]
    package var overlayMessage: (String, [UInt8]) -> Void = { _, _ in }
    /// A sensor's JSON (a weather entity's attributes) is larger than a command line may be.
    static let overlayPayloadLimit = 64 << 10

    package var isConnected: Bool { connection.isConnected }
    package var reconnects: Int { connection.reconnects }

    /// Reads the credentials file and checks the TLS files; a problem there is the user's to fix and is thrown.
    /// `outputs`: each output's name and profile, where several screens each have a show.
    package init(
        settings: MQTTSettings, profile: String, outputs: [(name: String, profile: String)] = [],
        overlayTopics: [String], log: EventLog
    ) throws(MQTTError) {
        self.settings = settings
        self.log = log
        self.overlayTopics = overlayTopics
        let topics = MQTTTopics(settings, hostname: MQTTClient.hostname())
        self.topics = topics
        device = HomeAssistantDiscovery.Device(
            name: "Vitrine \(topics.id)", model: profile, version: VitrineVersion.string)
        var made: [Output] = []
        for output in outputs {
            let timer: MonotonicTimer
            do {
                timer = try MonotonicTimer()
            } catch {
                throw MQTTError("timers", "cannot be made", errno: error.errno)
            }
            made.append(
                Output(
                    topics: topics.forOutput(output.name),
                    device: HomeAssistantDiscovery.Device(
                        name: "Vitrine \(topics.id) \(output.name)", model: output.profile,
                        version: VitrineVersion.string), timer: timer))
        }
        self.outputs = made
        var options = try MQTTClient.options(for: settings, topics: topics)
        if !overlayTopics.isEmpty { options.payloadLimit = Self.overlayPayloadLimit }
        client = try MQTTClient(options)
        connection = BrokerConnection(
            broker: "\(settings.host):\(settings.port)",
            seed: UInt64(truncatingIfNeeded: Int(MonotonicClock.seconds() * 1e6)) ^ UInt64(getpid()))
        do {
            housekeepingTimer = try MonotonicTimer()
            retryTimer = try MonotonicTimer()
            stateTimer = try MonotonicTimer()
        } catch {
            throw MQTTError("timers", "cannot be made", errno: error.errno)
        }
    }

    /// Watches the link's descriptors in `loop`, and starts connecting.
    package func start(in loop: EventLoop, now: Double) throws(RuntimeError) {
        var sources = LoopSources(loop)
        for (descriptor, source) in [
            (client.wakeup.descriptor, Source.attempt), (housekeepingTimer.descriptor, .housekeeping),
            (retryTimer.descriptor, .retry), (stateTimer.descriptor, .state),
        ] + outputs.indices.map({ (outputs[$0].timer.descriptor, Source.outputState($0)) }) {
            try sources.add(descriptor) { [unowned self] events in
                handle(source, events: events, now: MonotonicClock.seconds())
            }
        }
        self.sources = sources
        log("MQTT: \(topics.id) on \(connection.broker), commands on \(topics.commandTopics.joined(separator: ", "))")
        if !overlayTopics.isEmpty { log("MQTT: overlay texts from \(overlayTopics.joined(separator: ", "))") }
        perform(connection.start(), now: now)
    }

    private func handle(_ source: Source, events: UInt32, now: Double) {
        switch source {
        case .socket:
            if events & ~EventLoop.writable != 0 { process(client.readable(now: now), now: now) }
            if events & EventLoop.writable != 0 { process(client.writable(now: now), now: now) }
        case .attempt:
            process(client.attemptFinished(now: now), now: now)
        case .housekeeping:
            _ = housekeepingTimer.acknowledge()
            housekeepingDue = nil
            process(client.housekeeping(now: now), now: now)
        case .retry:
            _ = retryTimer.acknowledge()
            perform(connection.timerFired(now: now), now: now)
        case .state:
            _ = stateTimer.acknowledge()
            if let state = publisher.timerFired(now: now) {
                client.publish(topics.state, Array(state.utf8), retain: true)
            }
        case .outputState(let index):
            _ = outputs[index].timer.acknowledge()
            if let state = outputs[index].publisher.timerFired(now: now) {
                client.publish(outputs[index].topics.state, Array(state.utf8), retain: true)
            }
        }
        keepHousekeeping(now: now)
        watchSocket()
    }

    /// Once a second while a connection is made or kept; not pushed back by the link's other wake-ups (the state
    /// timer fires more often than that).
    private func keepHousekeeping(now: Double) {
        if client.isBusy {
            guard housekeepingDue == nil else { return }
            housekeepingDue = now + 1
            housekeepingTimer.arm(at: now + 1)
        } else if housekeepingDue != nil {
            housekeepingDue = nil
            housekeepingTimer.disarm()
        }
    }

    /// The state as it is after this turn of the loop; published when it changed, spaced out. Most turns (a
    /// fade's steps, a key) change nothing here, and cost one comparison.
    package func stateIs(_ state: MQTTState, now: Double) {
        guard state != latestState else { return }
        latestState = state
        guard connection.isConnected else { return }
        switch publisher.offer(state.json, now: now) {
        case .publish(let text): client.publish(topics.state, Array(text.utf8), retain: true)
        case .wait(let until): stateTimer.arm(at: until)
        case .nothing: break
        }
        watchSocket()
    }

    /// One output's show's state after this turn (`stateIs` for the player's own topic).
    package func stateIs(_ state: MQTTState, output name: String, now: Double) {
        guard let index = outputs.firstIndex(where: { $0.topics.output == name }),
            state != outputs[index].latestState
        else { return }
        outputs[index].latestState = state
        guard connection.isConnected else { return }
        switch outputs[index].publisher.offer(state.json, now: now) {
        case .publish(let text): client.publish(outputs[index].topics.state, Array(text.utf8), retain: true)
        case .wait(let until): outputs[index].timer.arm(at: until)
        case .nothing: break
        }
        watchSocket()
    }

    /// One output's show's categories; its device's select follows them.
    package func categoriesAre(_ names: [String], output name: String) {
        guard let index = outputs.firstIndex(where: { $0.topics.output == name }), names != outputs[index].categories
        else { return }
        outputs[index].categories = names
        guard connection.isConnected else { return }
        publishDiscovery()
        watchSocket()
    }

    /// Whether the image topic is on: then every slide's picture is made for it.
    package var wantsSlidePictures: Bool { settings.image }

    /// The picture of the slide on screen, made: it goes to the image topic (retained, and again on reconnecting).
    package func slidePicture(_ result: Result<[UInt8], ImageError>, now: Double) {
        guard settings.image else { return }
        switch result {
        case .success(let jpeg):
            latestImage = jpeg
            client.publish(topics.image, jpeg, retain: true)
        case .failure(let error):
            log(.warning, "MQTT: no picture for \(topics.image): \(error)")
        }
        keepHousekeeping(now: now)
        watchSocket()
    }

    /// The library's categories; the select entity's options follow them.
    package func categoriesAre(_ names: [String]) {
        guard names != categories else { return }
        categories = names
        guard connection.isConnected else { return }
        publishDiscovery()
        watchSocket()
    }

    package func close() {
        client.close(finalMessages: [(topics.availability, "offline")])
        sources?.loop.remove(watched?.source)
        watched = nil
        sources?.removeAll()
    }

    private func perform(_ actions: [BrokerConnection.Action], now: Double) {
        for action in actions {
            switch action {
            case .connect:
                process(client.connect(now: now), now: now)
                keepHousekeeping(now: now)
            case .arm(let at):
                retryTimer.arm(at: at)
            case .announce:
                announce()
            case .log(let line):
                log(line)
            case .warn(let line):
                log(.warning, line)
            }
        }
        watchSocket()
    }

    private func process(_ events: [MQTTClient.Event], now: Double) {
        for event in events {
            switch event {
            case .connected:
                perform(connection.connected(), now: now)
            case .failed(let reason):
                perform(connection.failed(reason, now: now), now: now)
            case .message(let topic, let payload, let retained):
                received(topic: topic, payload: payload, retained: retained)
            case .oversized(let topic, let bytes):
                refuse(topic: topic, bytes: bytes)
            }
        }
    }

    private func refuse(topic: String, bytes: Int) {
        guard topics.commandTopics.contains(topic) || outputs.contains(where: { $0.topics.command == topic }) else {
            log(.warning, "MQTT: refused a message on \(topic): \(bytes) bytes is more than an overlay text takes")
            return
        }
        log(
            .warning,
            "MQTT: refused a message on \(topic): commands are at most \(ControlCommand.maximumLineBytes) bytes")
        reply("error: \(bytes) bytes is longer than \(ControlCommand.maximumLineBytes) bytes")
    }

    private func received(topic: String, payload: [UInt8], retained: Bool) {
        if overlayTopics.contains(topic) {
            overlayMessage(topic, payload)
            return
        }
        if topic == topics.homeAssistantStatus {
            if payload == Array("online".utf8) {
                log("MQTT: Home Assistant is online: discovery and state sent again")
                publishDiscovery()
                publishLatestState()
            }
            return
        }
        // An output's command topic is the player's own, addressed to that output's show.
        let output = outputs.first { $0.topics.command == topic }?.topics.output
        guard let kind = output == nil ? topics.commandKind(of: topic) : .own else { return }
        // A command is something sent now. A retained one (Home Assistant's mqtt.publish with retain: true) would
        // be obeyed again at every start and every reconnect, undoing what the user did since; no reply either,
        // since nobody is waiting for one.
        if retained {
            let shown = String(decoding: payload.prefix(60), as: UTF8.self)
            log(
                .warning,
                "MQTT: ignored a retained message on \(topic) (\(JSONText.quote(shown))): commands are obeyed only "
                    + "when sent; clear it with: mosquitto_pub -r -n -t '\(topic)'")
            return
        }
        guard payload.count <= ControlCommand.maximumLineBytes else {
            refuse(topic: topic, bytes: payload.count)
            return
        }
        // The same line, the same parser and the same answer as on the control socket, within the topic's authority.
        let line = String(decoding: payload, as: UTF8.self)
        reply(answer(output.map { "@\($0) \(line)" } ?? line, settings.commands[kind], kind.settingName))
    }

    private func reply(_ text: String) {
        client.publish(topics.reply, Array(text.utf8), retain: false)
    }

    private func announce() {
        client.subscribe(
            topics.commandTopics + outputs.map(\.topics.command)
                + (settings.discovery ? [topics.homeAssistantStatus] : []) + overlayTopics)
        client.publish(topics.availability, Array("online".utf8), retain: true, qos: 1)
        publishDiscovery()
        publishLatestState()
        if let latestImage { client.publish(topics.image, latestImage, retain: true) }
    }

    private func publishDiscovery() {
        guard settings.discovery else { return }
        var messages = HomeAssistantDiscovery.messages(
            topics: topics, device: device, categories: categories, image: settings.image)
        // The slide's picture is the first screen's, on the player's device.
        for output in outputs {
            messages += HomeAssistantDiscovery.messages(
                topics: output.topics, device: output.device, categories: output.categories, image: false)
        }
        for message in messages {
            client.publish(message.topic, Array(message.payload.utf8), retain: true, qos: 1)
        }
    }

    /// Sent whatever was sent before (a broker restarted without persistence lost the retained state).
    private func publishLatestState() {
        for index in outputs.indices {
            outputs[index].publisher.reset()
            guard let json = outputs[index].latestState?.json else { continue }
            outputs[index].publisher.sent(json, now: MonotonicClock.seconds())
            client.publish(outputs[index].topics.state, Array(json.utf8), retain: true)
        }
        publisher.reset()
        guard let json = latestState?.json else { return }
        publisher.sent(json, now: MonotonicClock.seconds())
        client.publish(topics.state, Array(json.utf8), retain: true)
    }

    /// Keeps epoll watching the client's socket, which changes with each connection, for writing only while
    /// libmosquitto has something queued.
    private func watchSocket() {
        guard let loop = sources?.loop else { return }
        let wanted = client.socket.map { (descriptor: $0, writes: client.wantsWrite) }
        guard wanted?.descriptor != watched?.source.descriptor || wanted?.writes != watched?.writes else { return }
        // A new connection's socket may have the old one's number: the old registration goes first either way.
        loop.remove(watched?.source)
        watched = nil
        guard let wanted else { return }
        let events = EventLoop.readable | (wanted.writes ? EventLoop.writable : 0)
        do {
            let source = try loop.add(wanted.descriptor, events: events) { [unowned self] events in
                handle(.socket, events: events, now: MonotonicClock.seconds())
            }
            watched = (source, wanted.writes)
        } catch {
            log(.warning, "MQTT: \(error)")
        }
    }
}
