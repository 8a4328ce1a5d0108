import VitrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension LocalTime {
    /// The wall clock in the system's zone, as glibc's `localtime_r` has it: the zone is read once, at the first
    /// use, and again only when `rereadZone()` asks. Never `tzset` here: it looks at `/etc/localtime` each time,
    /// and this runs on the player's loop, where a root filesystem that stalls (a network root, a 9p root after a
    /// sleep) would stop the show.
    public static func now() -> LocalTime {
        var clock = time(nil)
        var local = tm()
        localtime_r(&clock, &local)
        return LocalTime(
            epoch: clock, year: Int(local.tm_year) + 1900, month: Int(local.tm_mon) + 1, day: Int(local.tm_mday),
            hour: Int(local.tm_hour), minute: Int(local.tm_min), second: Int(local.tm_sec))
    }

    /// Reads the zone again (`tzset`): when the time zone watcher saw `/etc/localtime` replaced
    /// (`timedatectl set-timezone`). With `TZ` set, glibc reads again only when the variable's text changes.
    public static func rereadZone() {
        tzset()
    }
}

extension LocalMinute {
    /// The epoch second this local minute begins, in the system's zone (`LocalMinute.epoch(offsetAt:)` with the
    /// offsets `localtime_r` gives). Not `mktime`: it looks at `/etc/localtime` each time, and this runs on the
    /// player's loop, where a root filesystem that stalls would stop the show.
    public var epoch: Int {
        epoch { moment in
            var clock = time_t(moment)
            var fields = tm()
            localtime_r(&clock, &fields)
            return fields.tm_gmtoff
        }
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
