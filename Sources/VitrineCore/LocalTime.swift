/// A moment as the frame's wall shows it: the epoch second and its local calendar fields, as `localtime_r` gives
/// them (the runtime's side), so the clock follows the time zone and its daylight-saving changes without knowing
/// their rules.
public struct LocalTime: Sendable, Equatable {
    public var epoch: Int
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(epoch: Int, year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        self.epoch = epoch
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The epoch second the next minute starts. Every zone in use has whole-minute offsets, so the local minute
    /// turns with the UTC one.
    public var nextMinute: Int { epoch - second + 60 }

    /// `YYYY:MM:DD HH:MM:SS`, the form `DateStyle` reads.
    var exifForm: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4)):\(pad(month, 2)):\(pad(day, 2)) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }
}
