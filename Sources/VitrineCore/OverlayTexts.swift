/// The values of the overlay's MQTT texts: what each topic last said, read as the settings ask (the payload, or one
/// field of its JSON), and when each goes stale. A struct the runtime feeds with messages and a clock; it answers
/// with the lines to draw and when to look again.
public struct OverlayTexts: Sendable {
    public let texts: [OverlaySettings.Text]
    /// Per text: the value and when it arrived.
    private var values: [(value: String, at: Double)?]

    /// Longest value kept: a line over the picture, not a document.
    public static let maximumValueLength = 120

    public init(texts: [OverlaySettings.Text]) {
        self.texts = texts
        values = Array(repeating: nil, count: texts.count)
    }

    /// New settings that keep what the topics last said for the texts that read the same topic and field (a new
    /// format or staleness limit does not wait for the sensor's next message).
    public init(texts: [OverlaySettings.Text], keeping old: OverlayTexts) {
        self.init(texts: texts)
        for (index, text) in texts.enumerated() {
            guard
                let previous = zip(old.texts, old.values).first(where: {
                    $0.0.topic == text.topic && $0.0.field == text.field
                })?.1
            else { continue }
            values[index] = previous
        }
    }

    /// The topics to subscribe to, each once.
    public var topics: [String] {
        var seen: Set<String> = []
        return texts.map(\.topic).filter { seen.insert($0).inserted }
    }

    /// A message arrived; true when a line may have changed. A payload the settings cannot read (not JSON, no
    /// such field) leaves the last value in place and says why.
    public mutating func received(topic: String, payload: [UInt8], now: Double) -> (changed: Bool, problems: [String]) {
        var changed = false
        var problems: [String] = []
        let text = String(decoding: payload, as: UTF8.self)
        for (index, entry) in texts.enumerated() where entry.topic == topic {
            switch Self.value(of: text, field: entry.field) {
            case .success(let value):
                let shortened =
                    value.count > Self.maximumValueLength ? String(value.prefix(Self.maximumValueLength)) + "…" : value
                if values[index]?.value != shortened { changed = true }
                if values[index] == nil { changed = true }
                values[index] = (shortened, now)
            case .failure(let problem):
                problems.append("overlay text from \(topic): \(problem)")
            }
        }
        return (changed, problems)
    }

    /// The lines to draw now, in the settings' order; a stale or never-heard text has none.
    public func lines(now: Double) -> [String] {
        zip(texts, values).compactMap { entry, value in
            guard let value, !Self.isStale(entry, since: value.at, now: now) else { return nil }
            return entry.line(value: value.value)
        }
    }

    /// When the next line goes stale, for a timer; nil when none will.
    public func nextStale(now: Double) -> Double? {
        zip(texts, values).compactMap { entry, value -> Double? in
            guard let value, let limit = entry.staleSeconds else { return nil }
            let due = value.at + limit
            return due > now ? due : nil
        }.min()
    }

    static func isStale(_ entry: OverlaySettings.Text, since: Double, now: Double) -> Bool {
        entry.staleSeconds.map { now - since >= $0 } ?? false
    }

    enum Reading: Equatable {
        case success(String)
        case failure(String)
    }

    /// The payload itself (trimmed), or the field of its JSON; numbers in their shortest form, true/false as words.
    static func value(of payload: String, field: String?) -> Reading {
        guard let field else {
            let trimmed = payload.trimmingWhitespace()
            return trimmed.isEmpty ? .failure("an empty payload") : .success(trimmed)
        }
        guard let root = try? JSONParser.parse(payload) else {
            return .failure("not JSON, so it has no field \(field)")
        }
        var current = root
        for name in field.split(separator: ".") {
            guard case .object(let members) = current.kind,
                let next = members.first(where: { $0.key == name })?.value
            else { return .failure("no field \(field)") }
            current = next
        }
        switch current.kind {
        case .string(let text): return .success(text)
        case .number(let number):
            // As the sensor wrote it: 21, 7.5 (the shortest form that reads back the same), not 21.000.
            let whole = number == number.rounded() && abs(number) < 1e15
            return .success(whole ? String(Int(number)) : "\(number)")
        case .bool(let flag): return .success(flag ? "true" : "false")
        case .null: return .failure("field \(field) is null")
        case .array, .object: return .failure("field \(field) is not a single value")
        }
    }
}
