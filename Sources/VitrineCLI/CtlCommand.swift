import CLinux
import VitrineCore
import VitrineLinks
import VitrinePlatform
import VitrineRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `vitrine ctl`: sends one command to a running player and prints its answer.
struct CtlCommand {
    let console: Console

    static let parser = ArgumentParser(
        command: "ctl",
        synopsis: "[--control PATH] [--output NAME] COMMAND...",
        summary: """
            Sends COMMAND to the player's control socket and prints the answer. Commands: \(ControlCommand.usage).
            `status` answers one JSON line. Exit status 1 when the player refuses the command or cannot be reached.
            """,
        options: [
            .init(
                name: "--control", value: "PATH",
                help: "control socket (default: the config's, else $XDG_RUNTIME_DIR/vitrine.sock)"),
            .init(name: "--config", value: "FILE", help: "config file naming the control socket"),
            .init(
                name: "--output", value: "NAME",
                help: "the screen whose show the command is for (an output's name); default: every screen's"),
        ],
        maximumArguments: nil)

    func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard let parsed = try Self.parser.parse(words, helpTo: console) else { return 0 }
        guard !parsed.arguments.isEmpty else { throw UsageError(command: "ctl", message: "missing COMMAND") }
        let line = parsed.arguments.joined(separator: " ")
        guard ControlCommand.parse(line) != nil else {
            throw UsageError(command: "ctl", message: "unknown command '\(line)' (commands: \(ControlCommand.usage))")
        }
        let addressed = parsed.value("--output").map { "@\($0) \(line)" } ?? line
        var path = parsed.value("--control")
        if path == nil, let settings = try? ConfigContext.load(explicit: parsed.value("--config")).settings {
            path = settings.controlSocket
        }
        let socketPath = path ?? ControlServer.defaultPath()
        switch Self.exchange(addressed, path: socketPath) {
        case .success(let answer):
            if answer.hasPrefix("error") {
                console.error("vitrine ctl: \(answer)\n")
                return 1
            }
            console.out(answer + "\n")
            return 0
        case .failure(let error):
            console.error("vitrine ctl: \(error) (is vitrine play running?)\n")
            return 1
        }
    }

    /// Sends one line and reads one line back.
    static func exchange(_ line: String, path: String) -> Result<String, RuntimeError> {
        let connection = Descriptor(taking: socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0))
        let descriptor = connection.number
        guard descriptor >= 0 else { return .failure(RuntimeError("create a socket", errno: errno)) }
        // `connection` closes it when this returns.
        guard vitrine_unix_connect_or_bind(descriptor, path, 0) == 0 else {
            return .failure(RuntimeError("connect", path: path, errno: errno))
        }
        var bytes = Array((line + "\n").utf8)
        guard send(descriptor, &bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            return .failure(RuntimeError("send", path: path, errno: errno))
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !answer.contains(0x0A) {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            answer += chunk[0..<count]
        }
        guard let newline = answer.firstIndex(of: 0x0A) else {
            return .failure(RuntimeError("read an answer", path: path, errno: ECONNRESET))
        }
        return .success(String(decoding: answer[..<newline], as: UTF8.self))
    }
}
