/// Which MQTT version the next CONNECT speaks. MQTT 5 first: it asks the broker for a maximum packet size, so a huge
/// PUBLISH is never allocated on the frame. Brokers of 3.1.1 only answer 5 in one of two ways:
/// - with a CONNACK "unacceptable protocol version" (Mosquitto 1.x): 3.1.1 from then on, for good;
/// - not at all (amqtt, once Home Assistant's embedded broker, reads 5's properties as 3.1.1's payload and waits for
///   bytes that never come): 3.1.1 is tried next, tentatively, and 5 again when 3.1.1 goes unanswered too or a
///   3.1.1 connection made so is lost, since a broker that was only stopped for a while answers neither.
public struct MQTTVersionChoice: Equatable, Sendable {
    public private(set) var version5 = true
    private var refusedVersion5 = false
    private var tentative311 = false
    /// The fallback for want of an answer is said once; later flips between the versions are silent.
    private var toldTentative = false

    public init() {}

    /// The broker's CONNACK refused the version (3.1.1's code 1, MQTT 5's 132): true when 3.1.1 is next.
    public mutating func refused() -> Bool {
        guard version5 else { return false }
        version5 = false
        refusedVersion5 = true
        tentative311 = false
        return true
    }

    /// A session that reached the broker ended, `answered` (after its CONNACK) or before, `silent` when the broker
    /// said nothing in time (an error such as a TLS failure says nothing about the version). Returns what to add to
    /// the reason, the first time the choice falls back for want of an answer.
    public mutating func ended(answered: Bool, silent: Bool) -> String? {
        if version5 && !answered && silent && !refusedVersion5 {
            version5 = false
            tentative311 = true
            guard !toldTentative else { return nil }
            toldTentative = true
            return "no answer to MQTT 5's CONNECT; the next attempt speaks MQTT 3.1.1, which brokers of 3.1.1 only "
                + "understand"
        }
        if !version5 && tentative311 && (answered || silent) {
            version5 = true
            tentative311 = false
        }
        return nil
    }
}
