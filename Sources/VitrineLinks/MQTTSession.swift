import CMosquitto
import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One libmosquitto client for one connection attempt and the connection it makes. A fresh one per attempt: a
/// half-open attempt to a broker that stopped answering is simply destroyed (its socket closed), which libmosquitto
/// offers no other non-blocking way to do.
final class MQTTSession {
    enum Event: Equatable {
        case connected
        /// The broker answered CONNACK with a refusal (bad credentials, not authorised), with its code.
        case refused(String, code: Int32)
        /// With libmosquitto's code: a keepalive that ran out before the CONNACK is a CONNECT left unanswered.
        case disconnected(code: Int32, reason: String)
        /// `retained`: kept by the broker and sent on subscribing, not sent by anyone just now.
        case message(topic: String, payload: [UInt8], retained: Bool)
        /// A message longer than the limit: dropped unread.
        case oversized(topic: String, bytes: Int)
    }

    /// Collects what the callbacks report; its address is handed to C and must not move.
    private final class Inbox {
        var events: [Event] = []
        let payloadLimit: Int
        /// CONNACK's code is an MQTT 5 reason code then, which has its own strings.
        let version5: Bool
        init(payloadLimit: Int, version5: Bool) {
            self.payloadLimit = payloadLimit
            self.version5 = version5
        }
    }

    let handle: OpaquePointer
    private let inbox: Inbox
    private let sink: UnsafeMutablePointer<vitrine_mqtt_sink>

    /// `mosquitto_lib_init` once per process, before the first client.
    private static let library: Int32 = mosquitto_lib_init()

    /// `version5`: MQTT 5, whose CONNECT can carry a maximum packet size (`MQTTClient.connect`).
    init(_ options: MQTTClient.Options, version5: Bool = false) throws(MQTTError) {
        do {
            try LazyLibrary.mosquitto.load()
        } catch {
            throw MQTTError("start", "\(error)")
        }
        _ = Self.library
        inbox = Inbox(payloadLimit: options.payloadLimit, version5: version5)
        sink = .allocate(capacity: 1)
        sink.initialize(
            to: vitrine_mqtt_sink(
                context: Unmanaged.passUnretained(inbox).toOpaque(),
                connected: { context, code in
                    guard let context else { return }
                    let inbox = Unmanaged<Inbox>.fromOpaque(context).takeUnretainedValue()
                    if code == 0 {
                        inbox.events.append(.connected)
                    } else {
                        let reason = inbox.version5 ? mosquitto_reason_string(code) : mosquitto_connack_string(code)
                        inbox.events.append(.refused(reason.map { String(cString: $0) } ?? "code \(code)", code: code))
                    }
                },
                disconnected: { context, code in
                    guard let context else { return }
                    let inbox = Unmanaged<Inbox>.fromOpaque(context).takeUnretainedValue()
                    inbox.events.append(
                        .disconnected(code: code, reason: code == 0 ? "disconnected" : MQTTSession.reason(code)))
                },
                message: { context, topic, payload, length, retained in
                    guard let context, let topic else { return }
                    let inbox = Unmanaged<Inbox>.fromOpaque(context).takeUnretainedValue()
                    let name = String(cString: topic)
                    guard Int(length) <= inbox.payloadLimit else {
                        inbox.events.append(.oversized(topic: name, bytes: Int(length)))
                        return
                    }
                    let bytes =
                        payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
                    inbox.events.append(.message(topic: name, payload: bytes, retained: retained != 0))
                }))
        guard let handle = vitrine_mqtt_new(options.clientID, sink) else {
            sink.deinitialize(count: 1)
            sink.deallocate()
            throw MQTTError("client \(options.clientID)", "cannot be made", errno: errno)
        }
        self.handle = handle
        do throws(MQTTError) {
            // A command's reply and the state after it are two small writes: with Nagle's algorithm the second
            // waits for the broker's delayed ACK of the first (40 to 200 ms).
            try Self.check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
            if version5 {
                try Self.check(
                    mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5), "MQTT 5")
            }
            try Self.check(
                mosquitto_will_set(
                    handle, options.will.topic, Int32(options.will.payload.utf8.count), options.will.payload, 1, true),
                "the last will on \(options.will.topic)")
            if let credentials = options.credentials {
                try Self.check(
                    mosquitto_username_pw_set(handle, credentials.user, credentials.password), "the user name")
            }
            if let tls = options.tls {
                // No CA file: the system's CAs, as a browser trusts them.
                let code = mosquitto_tls_set(
                    handle, tls.caFile, tls.caFile == nil ? "/etc/ssl/certs" : nil, tls.certFile, tls.keyFile, nil)
                guard code == MOSQ_ERR_SUCCESS.rawValue else {
                    let files = [tls.caFile, tls.certFile, tls.keyFile].compactMap { $0 }.joined(separator: ", ")
                    throw MQTTError(
                        "tls",
                        "cannot use \(files.isEmpty ? "/etc/ssl/certs" : files) (is each file there and "
                            + "readable by the player's user?): \(Self.reason(code))")
                }
            }
        } catch {
            mosquitto_destroy(handle)
            sink.deinitialize(count: 1)
            sink.deallocate()
            throw error
        }
    }

    deinit {
        mosquitto_destroy(handle)
        sink.deinitialize(count: 1)
        sink.deallocate()
    }

    private static func check(_ code: Int32, _ what: String) throws(MQTTError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError(what, "refused: \(reason(code))") }
    }

    /// What a libmosquitto result code means, with errno's text when the code says errno has it.
    static func reason(_ code: Int32, errno saved: Int32 = errno) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(saved)) }
        if code == MOSQ_ERR_KEEPALIVE.rawValue { return "the broker stopped answering pings" }
        return String(cString: mosquitto_strerror(code))
    }

    func takeEvents() -> [Event] {
        defer { inbox.events = [] }
        return inbox.events
    }

    var socket: Int32? {
        let descriptor = mosquitto_socket(handle)
        return descriptor >= 0 ? descriptor : nil
    }

    var wantsWrite: Bool { mosquitto_want_write(handle) }
}
