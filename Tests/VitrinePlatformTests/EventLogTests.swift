import Testing
import VitrineCore

@testable import VitrinePlatform

struct EventLogTests {
    final class Lines {
        var written: [String] = []
    }

    @Test func journalLinesCarryTheirPriorityAndWarningsAreSaidOnce() {
        let lines = Lines()
        let log = EventLog(journal: true) { lines.written.append($0) }
        log("playing")
        log(.warning, "skipped /lib/a.jpg: empty file (0 bytes)")
        log(.warning, "skipped /lib/a.jpg: empty file (0 bytes)")
        log(.warning, "skipped /lib/b.jpg: empty file (0 bytes)")
        log(.error, "cannot drive HDMI-A-1\nat 1920x1080")
        log(.error, "cannot drive HDMI-A-1\nat 1920x1080")
        #expect(
            lines.written == [
                "<6>playing\n", "<4>skipped /lib/a.jpg: empty file (0 bytes)\n",
                "<4>skipped /lib/b.jpg: empty file (0 bytes)\n", "<3>cannot drive HDMI-A-1 at 1920x1080\n",
                "<3>cannot drive HDMI-A-1 at 1920x1080\n",
            ])
        log.forgetWarnings()
        log(.warning, "skipped /lib/a.jpg: empty file (0 bytes)")
        #expect(lines.written.last == "<4>skipped /lib/a.jpg: empty file (0 bytes)\n")
    }

    /// "\r\n" is one Character in Swift, so a split on "\n" left it in the line; a carriage return, an escape or a
    /// line separator from a file name or a payload must not rewrite what a terminal or the journal shows.
    @Test func everyControlCharacterIsFlattened() {
        let lines = Lines()
        let log = EventLog(journal: false) { lines.written.append($0) }
        log("MQTT: \"a\r\nb\" then \u{1B}[2Jc\td\u{7F}e\u{85}f\u{2028}g")
        #expect(lines.written == ["vitrine: MQTT: \"a  b\" then  [2Jc d e f g\n"])
    }

    @Test func aTerminalGetsTheProgramName() {
        let lines = Lines()
        let log = EventLog(journal: false) { lines.written.append($0) }
        log(.notice, "stopping (signal 15)")
        #expect(lines.written == ["vitrine: stopping (signal 15)\n"])
    }
}
