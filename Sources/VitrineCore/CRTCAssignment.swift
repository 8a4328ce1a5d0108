/// Which CRTC drives which connector when one card lights several screens: each connector can use only some CRTCs
/// (its encoders' `possible_crtcs`; on a Raspberry Pi 4 each HDMI port has its own pixel valve), and a CRTC drives
/// one picture. A connector keeps the CRTC it has now where it can (no modeset needed to move the console), and
/// the rest are matched so that every connector gets one when any matching can give it one (first come would not:
/// a connector that takes the only CRTC another could use leaves that one dark).
public enum CRTCAssignment {
    public struct Connector: Sendable, Equatable {
        public var id: UInt32
        /// Bit N set: the card's Nth CRTC can drive it.
        public var possible: UInt32
        /// The index of the CRTC driving it now, if any.
        public var current: Int?

        public init(id: UInt32, possible: UInt32, current: Int? = nil) {
            self.id = id
            self.possible = possible
            self.current = current
        }
    }

    /// CRTC indexes for `connectors` in order, among `crtcCount`; nil when some connector cannot get one of its own.
    public static func assign(_ connectors: [Connector], crtcCount: Int) -> [Int]? {
        let count = min(max(crtcCount, 0), 32)
        var owner = [Int?](repeating: nil, count: count)
        // Current CRTCs first, where they are possible and not claimed twice.
        for (index, connector) in connectors.enumerated() {
            if let current = connector.current, current >= 0, current < count, owner[current] == nil,
                connector.possible & (1 << UInt32(current)) != 0
            {
                owner[current] = index
            }
        }
        for index in connectors.indices where !owner.contains(index) {
            var visited = [Bool](repeating: false, count: count)
            guard augment(index, connectors, &owner, &visited) else { return nil }
        }
        var result = [Int](repeating: -1, count: connectors.count)
        for (crtc, index) in owner.enumerated() {
            if let index { result[index] = crtc }
        }
        return result
    }

    /// Kuhn's augmenting path: gives connector `index` a CRTC, moving others along to ones they can also use.
    private static func augment(_ index: Int, _ connectors: [Connector], _ owner: inout [Int?], _ visited: inout [Bool])
        -> Bool
    {
        let possible = owner.indices.filter { connectors[index].possible & (1 << UInt32($0)) != 0 }
        // A free one first: nobody else is moved (off the CRTC the console is on, say) without need.
        if let free = possible.first(where: { owner[$0] == nil }) {
            owner[free] = index
            return true
        }
        for crtc in possible where !visited[crtc] {
            visited[crtc] = true
            if let holder = owner[crtc], augment(holder, connectors, &owner, &visited) {
                owner[crtc] = index
                return true
            }
        }
        return false
    }
}
