/// A small parser for `vitrine SUBCOMMAND [options] [arguments]`: `--name value`, `--name=value` and flags.
/// No outside packages can be fetched for the player, and it needs only this much.
struct ArgumentParser {
    struct Option {
        var name: String
        /// Nil for a flag; otherwise the placeholder shown in help, e.g. `WxH`.
        var value: String?
        var help: String
    }

    var command: String
    var synopsis: String
    var summary: String
    var options: [Option]
    /// The most positional arguments accepted (nil: any number).
    var maximumArguments: Int?

    struct Parsed {
        var arguments: [String] = []
        var values: [String: String] = [:]
        /// Every value of an option given more than once, in order (`values` keeps the last).
        var allValues: [String: [String]] = [:]
        var flags: Set<String> = []

        func value(_ name: String) -> String? { values[name] }
        func all(_ name: String) -> [String] { allValues[name] ?? [] }
        func has(_ name: String) -> Bool { flags.contains(name) }
    }

    func parse(_ words: [String]) throws(UsageError) -> Parsed {
        var parsed = Parsed()
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !word.hasPrefix("-") || word == "-" {
                parsed.arguments.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            var name = word
            var inlineValue: String?
            if let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inlineValue = String(word[word.index(after: equals)...])
            }
            if name == "-h" { name = "--help" }
            if name == "--help" {
                parsed.flags.insert("--help")
                continue
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError(command: command, message: "unknown option \(name)")
            }
            if option.value == nil {
                guard inlineValue == nil else {
                    throw UsageError(command: command, message: "\(name) takes no value")
                }
                parsed.flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < words.count else {
                    throw UsageError(command: command, message: "\(name) needs a value (\(option.value ?? "VALUE"))")
                }
                value = words[index]
                index += 1
            }
            parsed.values[name] = value
            parsed.allValues[name, default: []].append(value)
        }
        if !parsed.has("--help"), let maximumArguments, parsed.arguments.count > maximumArguments {
            throw UsageError(command: command, message: "unexpected argument '\(parsed.arguments[maximumArguments])'")
        }
        return parsed
    }

    /// Parses; when `--help` was asked for, prints the help to `console` and returns nil (the command then exits 0).
    func parse(_ words: [String], helpTo console: Console) throws(UsageError) -> Parsed? {
        let parsed = try parse(words)
        guard !parsed.has("--help") else {
            console.out(help)
            return nil
        }
        return parsed
    }

    var help: String {
        var lines = ["usage: vitrine \(command) \(synopsis)", "", summary, "", "options:"]
        let width = (options.map { $0.name.count + ($0.value.map { $0.count + 1 } ?? 0) }.max() ?? 0) + 2
        for option in options + [Option(name: "--help", value: nil, help: "show this help")] {
            let left = option.value.map { "\(option.name) \($0)" } ?? option.name
            lines.append("  \(left)\(String(repeating: " ", count: max(1, width - left.count)))\(option.help)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A command line that cannot be run as written; exits with status 2 and one line saying why.
struct UsageError: Error {
    var command: String
    var message: String

    var line: String {
        let help = command.isEmpty ? "vitrine --help" : "vitrine \(command) --help"
        return "vitrine\(command.isEmpty ? "" : " \(command)"): \(message) (see '\(help)')"
    }
}
