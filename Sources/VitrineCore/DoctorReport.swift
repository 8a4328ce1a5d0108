/// What `vitrine doctor` found: one finding per thing it looked at, each in words a frame's owner understands,
/// with the command that fixes it where there is one.
public struct DoctorReport: Sendable, Equatable {
    public enum Verdict: String, Sendable, Equatable {
        /// As it should be.
        case ok
        /// Works, but worth knowing (state that will not survive a reboot, a broker not configured).
        case note
        /// Something a user would see go wrong: no screen, a library the player cannot read.
        case problem
    }

    public struct Finding: Sendable, Equatable {
        /// What was looked at, short: `screen`, `library`, `groups`, `mqtt`.
        public var topic: String
        public var verdict: Verdict
        public var text: String
        /// The command (or edit) that fixes it; nil when there is nothing to run.
        public var fix: String?

        public init(_ topic: String, _ verdict: Verdict, _ text: String, fix: String? = nil) {
            self.topic = topic
            self.verdict = verdict
            self.text = text
            self.fix = fix
        }
    }

    public var findings: [Finding] = []

    public init(findings: [Finding] = []) {
        self.findings = findings
    }

    public mutating func add(_ topic: String, _ verdict: Verdict, _ text: String, fix: String? = nil) {
        findings.append(Finding(topic, verdict, text, fix: fix))
    }

    /// All is well when nothing is a problem (notes are only worth knowing).
    public var healthy: Bool { !findings.contains { $0.verdict == .problem } }

    /// The exit status: 0 when all is well, 1 when something is wrong.
    public var exitStatus: Int32 { healthy ? 0 : 1 }

    /// One line a finding (`ok`, `note`, `PROBLEM`), the fix indented under a problem, and a last line saying
    /// how many problems there are.
    public var text: String {
        var lines: [String] = []
        for finding in findings {
            let mark =
                switch finding.verdict {
                case .ok: "ok      "
                case .note: "note    "
                case .problem: "PROBLEM "
                }
            lines.append("\(mark)\(finding.topic): \(finding.text)")
            if let fix = finding.fix { lines.append("        fix: \(fix)") }
        }
        let problems = findings.filter { $0.verdict == .problem }.count
        lines.append(
            problems == 0
                ? "All is well."
                : "\(problems) problem\(problems == 1 ? "" : "s") found; the fixes are above.")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `{"healthy":…,"findings":[{"topic","verdict","text","fix"}…]}` for a fleet's tools.
    public var json: String {
        let items = findings.map { finding in
            "{\"topic\":\(JSONText.quote(finding.topic)),\"verdict\":\"\(finding.verdict.rawValue)\","
                + "\"text\":\(JSONText.quote(finding.text)),\"fix\":\(finding.fix.map(JSONText.quote) ?? "null")}"
        }
        return "{\"healthy\":\(healthy),\"findings\":[\(items.joined(separator: ","))]}\n"
    }
}
