/// Ctrl+Alt+F1...F12 seen in the key stream. While Vitrine holds the keyboard (K_OFF on its VT, so no key reaches
/// the console and Ctrl-C sends no signal), the kernel no longer switches VTs by itself: the player does it, as
/// compositors do, when the chord is pressed.
public struct VTSwitchChord: Sendable {
    private var held: Set<String> = []

    public init() {}

    /// Follows one key; returns the VT number (1...12) when this press completes the chord.
    public mutating func key(_ name: String, pressed: Bool) -> Int? {
        if pressed { held.insert(name) } else { held.remove(name) }
        guard pressed, name.hasPrefix("F"), let number = Int(name.dropFirst()), (1...12).contains(number) else {
            return nil
        }
        let control = held.contains("LeftCtrl") || held.contains("RightCtrl")
        let alt = held.contains("LeftAlt") || held.contains("RightAlt")
        return control && alt ? number : nil
    }

    /// A modifier or a function key is held: the key is part of a chord, not a command for the show.
    public var modifierHeld: Bool {
        !held.isDisjoint(with: ["LeftCtrl", "RightCtrl", "LeftAlt", "RightAlt"])
    }

    /// Forgets what is held (the devices were suspended: their releases will not come).
    public mutating func reset() { held = [] }
}
