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

extension DateStyle {
    /// The date style of the process's locale (`LC_ALL`, then `LC_TIME`, then `LANG`, the order setlocale reads).
    public static func processDefault() -> DateStyle {
        for name in ["LC_ALL", "LC_TIME", "LANG"] {
            if let value = getenv(name), value.pointee != 0 { return fromEnvironment(String(cString: value)) }
        }
        return .english
    }
}
