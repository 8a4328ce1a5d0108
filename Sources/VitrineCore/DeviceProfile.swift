/// How Vitrine drives one kind of panel: which photos suit it, how to place them, and how much memory to spend.
public struct DeviceProfile: Sendable, Equatable {
    public var id: String
    public var name: String
    /// Connector types the profile applies to; empty means any.
    public var connectors: [String]
    /// The panel's native scanout mode the profile applies to.
    public var mode: Size
    public var edidName: String?
    /// The logical canvas photos are composed on (after `rotation` it becomes the scanout size).
    public var compose: Size
    public var rotation: Rotation
    /// The rendition size prepared for this panel (`NAME@WxH.jpg`).
    public var rendition: Size
    public var fit: Fit
    public var memoryBudgetMiB: Int
    public var note: String?
    /// How slides change on this panel: a crossfade where the board it usually sits on can blend fast enough.
    public var transition: Transition
    public var transitionSeconds: Double
    /// True for a profile derived by the fallback rule rather than read from the table.
    public var isDerived: Bool

    public init(
        id: String, name: String, connectors: [String], mode: Size, edidName: String?, compose: Size,
        rotation: Rotation, rendition: Size, fit: Fit, memoryBudgetMiB: Int, note: String?,
        transition: Transition = .fade, transitionSeconds: Double = 1,
        isDerived: Bool = false
    ) {
        self.id = id
        self.name = name
        self.connectors = connectors
        self.mode = mode
        self.edidName = edidName
        self.compose = compose
        self.rotation = rotation
        self.rendition = rendition
        self.fit = fit
        self.memoryBudgetMiB = memoryBudgetMiB
        self.note = note
        self.transition = transition
        self.transitionSeconds = transitionSeconds
        self.isDerived = isDerived
    }

    /// The size of each scanout buffer.
    public var scanout: Size { rotation.scanoutSize(forCompose: compose) }

    /// The same panel turned by `turn` instead (an output's `rotation`): the scanout stays, the canvas and the
    /// rendition follow the turn.
    public func turned(_ turn: Rotation) -> DeviceProfile {
        var profile = self
        let scanout = self.scanout
        profile.rotation = turn
        profile.compose = turn.swapsAxes ? scanout.transposed : scanout
        if turn.swapsAxes != rotation.swapsAxes { profile.rendition = rendition.transposed }
        return profile
    }

    /// The least budget the player can run with: two scanout buffers plus one decoded frame.
    public var minimumBudgetBytes: Int {
        (scanout.xrgbByteCount ?? Int.max / 4) * 2 + (compose.xrgbByteCount ?? Int.max / 4)
    }

    /// True when the panel is driven below its native resolution (a 4K panel composed at 1080p on a small board).
    public var composesBelowNative: Bool { scanout != mode }
}
