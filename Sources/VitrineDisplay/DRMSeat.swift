import VitrineCore
import VitrinePlatform

/// A card that drives several screens, each through a `DRMDisplay` of its own. DRM master belongs to the card's
/// descriptor, not to a screen: it is given up only when every screen has finished its flip and let go (a VT switch
/// waits for all of them), taken back by the first that asks, and the descriptor is closed once, by the last
/// screen to close.
public final class DRMSeat {
    public let device: DRMDevice
    private var holders: Int
    private var letGo = 0
    private var isMaster = true

    /// `device` as master, shared by `holders` displays.
    public init(device: DRMDevice, holders: Int) {
        self.device = device
        self.holders = max(1, holders)
    }

    /// One display is ready for the VT switch; master goes when all are.
    func dropMaster() {
        letGo = min(letGo + 1, holders)
        guard letGo == holders, isMaster else { return }
        isMaster = false
        device.dropMaster()
    }

    func takeMaster() throws(RuntimeError) {
        letGo = 0
        guard !isMaster else { return }
        try device.becomeMaster()
        isMaster = true
    }

    /// One display closed; the last gives master up and closes the descriptor.
    func leave() {
        holders -= 1
        guard holders == 0 else { return }
        device.dropMaster()
        device.close()
    }
}
