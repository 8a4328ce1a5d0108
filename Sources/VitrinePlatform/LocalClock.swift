import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension LocalTime {
    /// The wall clock in the system's zone. `tzset` first: glibc's `localtime_r` reads the zone only once, and
    /// `tzset` reads `/etc/localtime` again when it changed (`timedatectl set-timezone`; the player watches the
    /// link and asks again at once). With `TZ` set, glibc reads again only when the variable's text changes.
    public static func now() -> LocalTime {
        tzset()
        var clock = time(nil)
        var local = tm()
        localtime_r(&clock, &local)
        return LocalTime(
            epoch: clock, year: Int(local.tm_year) + 1900, month: Int(local.tm_mon) + 1, day: Int(local.tm_mday),
            hour: Int(local.tm_hour), minute: Int(local.tm_min), second: Int(local.tm_sec))
    }
}

extension LocalMinute {
    /// The epoch second this local minute begins, by the zone's rules (`mktime`, daylight saving decided by the
    /// zone): 07:00 on the day summer time starts is 05:00 UTC in Berlin, not 06:00. A minute that does not exist
    /// (02:30 as the clocks jump from 02:00 to 03:00) is the moment after the jump.
    public var epoch: Int {
        tzset()
        let (year, month, day) = date
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month - 1)
        fields.tm_mday = Int32(day)
        fields.tm_hour = Int32(minute / 60)
        fields.tm_min = Int32(minute % 60)
        fields.tm_isdst = -1
        return Int(mktime(&fields))
    }
}

extension DateStyle {
    /// The date style of the process's locale (`LC_ALL`, then `LC_TIME`, then `LANG`, the order setlocale reads).
    public static func processDefault() -> DateStyle {
        for name in ["LC_ALL", "LC_TIME", "LANG"] {
            if let value = getenv(name), value.pointee != 0 { return fromEnvironment(String(cString: value)) }
        }
        return .english
    }
}
