import CMosquitto
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// libmosquitto driven from the player's epoll loop. Only the start of a connection runs on a thread of its own,
/// because `mosquitto_connect_async` resolves the host name with a blocking getaddrinfo (seconds with a DNS server
/// that does not answer); everything after it is non-blocking: the socket is watched by the loop, reads and writes
/// happen when it is ready, and pings and timeouts on the housekeeping timer.
public final class MQTTClient {
    public struct Will: Sendable, Equatable {
        public var topic: String
        public var payload: String
    }

    public struct Options: Sendable {
        public var host: String
        public var port: Int
        public var clientID: String
        public var keepAlive: Int
        public var will: Will
        public var credentials: LoginFile?
        public var tls: MQTTSettings.TLS?
        /// Messages longer than this are dropped unread.
        public var payloadLimit = ControlCommand.maximumLineBytes
        /// An attempt the broker has not accepted by then is given up (a broker that stopped still accepts TCP).
        public var connectTimeout = 15.0

        public init(
            host: String, port: Int, clientID: String, keepAlive: Int, will: Will, credentials: LoginFile?,
            tls: MQTTSettings.TLS?
        ) {
            self.host = host
            self.port = port
            self.clientID = clientID
            self.keepAlive = keepAlive
            self.will = will
            self.credentials = credentials
            self.tls = tls
        }
    }

    public enum Event: Equatable, Sendable {
        case connected
        /// The attempt or the connection ended; the reason is for the log.
        case failed(String)
        /// `retained`: kept by the broker and sent on subscribing, not sent by anyone just now.
        case message(topic: String, payload: [UInt8], retained: Bool)
        case oversized(topic: String, bytes: Int)
    }

    /// A connection being started on its own thread. The thread only touches `session` until it signals.
    private final class Attempt: @unchecked Sendable {
        let session: MQTTSession
        var code: Int32 = 0
        var savedErrno: Int32 = 0
        var thread: JoinableThread?

        init(session: MQTTSession) { self.session = session }
    }

    public let options: Options
    /// MQTT 5, or 3.1.1 for brokers that refuse or ignore 5.
    private var versions = MQTTVersionChoice()
    public var version5: Bool { versions.version5 }
    /// Signalled when an attempt's thread is done: call `attemptFinished`.
    public let wakeup: Wakeup
    private var attempt: Attempt?
    private var session: MQTTSession?
    private var connectDeadline: Double?
    public private(set) var isConnected = false

    /// The options `settings` ask for, with the credentials file read (and refused when others can read it).
    public static func options(for settings: MQTTSettings, topics: MQTTTopics) throws(MQTTError) -> Options {
        let credentials = try settings.credentialsFile.map { (path) throws(MQTTError) in
            try MQTTCredentials.load(path)
        }
        return Options(
            host: settings.host, port: settings.port, clientID: "vitrine-\(topics.id)", keepAlive: settings.keepAlive,
            will: Will(topic: topics.availability, payload: "offline"), credentials: credentials, tls: settings.tls)
    }

    /// This machine's name, the default id on the broker.
    public static func hostname() -> String {
        var name = [UInt8](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "vitrine" }
        return String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Makes a first client at once, so TLS files or credentials libmosquitto refuses are refused at start.
    public init(_ options: Options) throws(MQTTError) {
        self.options = options
        _ = try MQTTSession(options)
        do {
            wakeup = try Wakeup()
        } catch {
            throw MQTTError("client", "cannot make its wake-up descriptor", errno: error.errno)
        }
    }

    /// Bytes a packet has besides its payload, at most, for the maximum packet size: the topic (Home Assistant's are
    /// short; a sensor topic of this length is not) and the fixed and variable headers.
    static let packetOverhead = 4096

    public var socket: Int32? { session?.socket }
    public var wantsWrite: Bool { session?.wantsWrite ?? false }
    public var isBusy: Bool { attempt != nil || session != nil }

    /// Starts an attempt; its outcome comes as events from `attemptFinished` and the socket's.
    public func connect(now: Double) -> [Event] {
        guard !isBusy else { return [] }
        let session: MQTTSession
        do {
            session = try MQTTSession(options, version5: version5)
        } catch {
            return [.failed("\(error)")]
        }
        let attempt = Attempt(session: session)
        let host = options.host
        let port = Int32(options.port)
        let keepAlive = Int32(options.keepAlive)
        let wakeup = self.wakeup
        let version5 = self.version5
        // The broker is told the largest packet the player takes: it drops bigger ones instead of sending them, so
        // a huge PUBLISH on a command or sensor topic is never allocated here (libmosquitto reads a packet whole
        // before anyone sees it). Room for the topic and the headers above the payload limit.
        let maximumPacket = UInt32(clamping: options.payloadLimit + Self.packetOverhead)
        attempt.thread = JoinableThread {
            if version5 {
                // CONNECT properties go only through the blocking connect in libmosquitto 2.0; on this thread that
                // blocks nobody, and the socket is non-blocking once connected.
                var properties: OpaquePointer?
                _ = mosquitto_property_add_int32(
                    &properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), maximumPacket)
                attempt.code = mosquitto_connect_bind_v5(
                    attempt.session.handle, host, port, keepAlive, nil, properties)
                attempt.savedErrno = errno
                mosquitto_property_free_all(&properties)
            } else {
                attempt.code = mosquitto_connect_async(attempt.session.handle, host, port, keepAlive)
                attempt.savedErrno = errno
            }
            wakeup.signal()
        }
        self.attempt = attempt
        connectDeadline = now + options.connectTimeout
        return []
    }

    public func attemptFinished(now: Double) -> [Event] {
        wakeup.drain()
        guard let attempt else { return [] }
        attempt.thread?.join()
        self.attempt = nil
        guard attempt.code == MOSQ_ERR_SUCCESS.rawValue else {
            connectDeadline = nil
            var reason = MQTTSession.reason(attempt.code, errno: attempt.savedErrno)
            if attempt.code == MOSQ_ERR_EAI.rawValue { reason = "cannot resolve \(options.host)" }
            return [.failed(reason)]
        }
        session = attempt.session
        // The CONNECT packet is queued behind the non-blocking TCP connect: it goes when the socket is writable.
        return service(now: now) { mosquitto_loop_write($0, 1) }
    }

    public func readable(now: Double) -> [Event] { service(now: now) { mosquitto_loop_read($0, 1) } }

    public func writable(now: Double) -> [Event] { service(now: now) { mosquitto_loop_write($0, 1) } }

    /// Pings and their timeout (`mosquitto_loop_misc`), and the connect timeout; at least once a second.
    public func housekeeping(now: Double) -> [Event] {
        if !isConnected, session != nil, let deadline = connectDeadline, now >= deadline {
            return [ended("no answer within \(Int(options.connectTimeout)) s", silent: true)]
        }
        return service(now: now) { mosquitto_loop_misc($0) }
    }

    @discardableResult
    public func publish(_ topic: String, _ payload: [UInt8], retain: Bool, qos: Int32 = 0) -> Bool {
        guard isConnected, let session else { return false }
        let code = payload.withUnsafeBytes {
            mosquitto_publish(session.handle, nil, topic, Int32($0.count), $0.baseAddress, qos, retain)
        }
        return code == MOSQ_ERR_SUCCESS.rawValue
    }

    public func subscribe(_ topics: [String]) {
        guard isConnected, let session else { return }
        for topic in topics { _ = mosquitto_subscribe(session.handle, nil, topic, 0) }
    }

    /// Says goodbye (the broker then does not send the will) after `finalMessages`, with what can be written now;
    /// an attempt still resolving is left to end with the process.
    public func close(finalMessages: [(topic: String, payload: String)] = []) {
        if let attempt {
            _ = Unmanaged.passRetained(attempt)
            self.attempt = nil
        }
        guard let session else { return }
        if isConnected {
            for message in finalMessages { publish(message.topic, Array(message.payload.utf8), retain: true) }
            mosquitto_disconnect(session.handle)
            // A few writes: the socket buffer normally takes everything at once; a broker that stopped reading gets
            // no more of the player's time.
            for _ in 0..<8 where session.wantsWrite {
                guard mosquitto_loop_write(session.handle, 1) == MOSQ_ERR_SUCCESS.rawValue else { break }
            }
        }
        drop()
    }

    private func drop() {
        session = nil
        isConnected = false
        connectDeadline = nil
    }

    private func service(now: Double, _ call: (OpaquePointer) -> Int32) -> [Event] {
        guard let session else { return [] }
        let code = call(session.handle)
        let savedErrno = errno
        var events: [Event] = []
        for event in session.takeEvents() {
            switch event {
            case .connected:
                isConnected = true
                connectDeadline = nil
                events.append(.connected)
            case .refused(let reason, let code):
                drop()
                // 1 is MQTT 3.1.1's "unacceptable protocol version", 132 MQTT 5's: the next attempt speaks 3.1.1.
                if code == 1 || code == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue), versions.refused() {
                    return events + [.failed("the broker speaks MQTT 3.1.1 only (\(reason)); trying that")]
                }
                return events + [.failed("the broker refused the player: \(reason)")]
            case .disconnected(let code, let reason):
                return events + [ended(reason, silent: code == MOSQ_ERR_KEEPALIVE.rawValue)]
            case .message(let topic, let payload, let retained):
                events.append(.message(topic: topic, payload: payload, retained: retained))
            case .oversized(let topic, let bytes):
                events.append(.oversized(topic: topic, bytes: bytes))
            }
        }
        if code != MOSQ_ERR_SUCCESS.rawValue && code != MOSQ_ERR_NO_CONN.rawValue {
            events.append(
                ended(MQTTSession.reason(code, errno: savedErrno), silent: code == MOSQ_ERR_KEEPALIVE.rawValue))
        }
        return events
    }

    /// The session ended; `silent`: the broker said nothing in time (no CONNACK before the connect timeout or the
    /// keepalive), as opposed to an error (TLS, a reset, a refusal) that says nothing about the version. Before the
    /// CONNACK, the next attempt may speak the other version.
    private func ended(_ reason: String, silent: Bool) -> Event {
        let answered = isConnected
        drop()
        guard let note = versions.ended(answered: answered, silent: silent) else { return .failed(reason) }
        return .failed("\(reason) (\(note))")
    }
}
