import VitrineCore

/// Turns what libinput reports into what the show should do: keys through the key map, Ctrl+Alt+F1...F12 into a
/// VT switch, touches and the pointer (as one finger) through the gesture recognizer.
package struct InputRouter {
    package enum Outcome: Equatable {
        case action(KeyMap.Action)
        case switchVT(Int)
        case deviceAdded(String)
    }

    private var gestures: GestureRecognizer
    /// The keyboard is off on the VT, so the player switches VTs itself.
    private var chord = VTSwitchChord()
    /// The pointer's position, normalised, for mice that report only relative motion.
    private var pointer = (x: 0.5, y: 0.5)
    private var pointerDown = false

    package init(gestures: GestureRecognizer) {
        self.gestures = gestures
    }

    /// The devices were let go (VT switched away): keys held now will not be seen released.
    package mutating func reset() { chord.reset() }

    package mutating func route(_ event: InputSource.Event, keys: KeyMap, screen: Size, now: Double) -> Outcome? {
        let gesture: GestureRecognizer.Gesture?
        switch event {
        case .deviceAdded(let name):
            return .deviceAdded(name)
        case .key(let name, let pressed):
            if let target = chord.key(name, pressed: pressed) { return .switchVT(target) }
            guard pressed, !chord.modifierHeld, let action = keys.action(forKey: name) else { return nil }
            return .action(action)
        case .touchDown(let x, let y):
            gestures.down(x: x, y: y, time: now)
            return nil
        case .touchMotion(let x, let y):
            gestures.move(x: x, y: y)
            return nil
        case .touchUp:
            gesture = gestures.up(time: now)
        case .pointerPosition(let x, let y):
            pointer = (x, y)
            if pointerDown { gestures.move(x: x, y: y) }
            return nil
        case .pointerMotion(let dx, let dy):
            pointer = (
                min(1, max(0, pointer.x + dx / Double(screen.width))),
                min(1, max(0, pointer.y + dy / Double(screen.height)))
            )
            if pointerDown { gestures.move(x: pointer.x, y: pointer.y) }
            return nil
        case .pointerButton(let pressed):
            pointerDown = pressed
            if pressed {
                gestures.down(x: pointer.x, y: pointer.y, time: now)
                return nil
            }
            gesture = gestures.up(time: now)
        }
        switch gesture {
        case .tap: return .action(.pause)
        case .swipe(.left): return .action(.next)
        case .swipe(.right): return .action(.previous)
        case .swipe(.up): return .action(.nextCategory)
        case .swipe(.down): return .action(.previousCategory)
        case .longPress: return .action(.info)
        case nil: return nil
        }
    }
}
