import Testing
import VitrineCore

@Suite struct CRTCAssignmentTests {
    typealias Connector = CRTCAssignment.Connector

    @Test func eachHDMIPortGetsItsOwnPixelValve() {
        // vc4 on a Pi 4: HDMI-A-1 on CRTC 3, HDMI-A-2 on CRTC 4 only; the console is on the first.
        let ports = [Connector(id: 32, possible: 1 << 3, current: 3), Connector(id: 42, possible: 1 << 4)]
        #expect(CRTCAssignment.assign(ports, crtcCount: 5) == [3, 4])
    }

    @Test func aConnectorThatCouldTakeAnyLeavesTheOnlyOneAnotherCanUse() {
        // The first could use CRTC 0 or 1, the second only 0: first come, first served would leave it dark.
        let connectors = [Connector(id: 1, possible: 0b11), Connector(id: 2, possible: 0b01)]
        #expect(CRTCAssignment.assign(connectors, crtcCount: 2) == [1, 0])
    }

    @Test func theCurrentCRTCIsKeptWhereItCanBe() {
        let connectors = [Connector(id: 1, possible: 0b11), Connector(id: 2, possible: 0b11, current: 0)]
        #expect(CRTCAssignment.assign(connectors, crtcCount: 2) == [1, 0])
        // Two claiming the same current CRTC: the first keeps it.
        let both = [Connector(id: 1, possible: 0b11, current: 1), Connector(id: 2, possible: 0b11, current: 1)]
        #expect(CRTCAssignment.assign(both, crtcCount: 2) == [1, 0])
    }

    @Test func moreScreensThanCRTCsIsRefused() {
        let three = (1...3).map { Connector(id: UInt32($0), possible: 0b11) }
        #expect(CRTCAssignment.assign(three, crtcCount: 2) == nil)
        #expect(CRTCAssignment.assign([Connector(id: 1, possible: 0)], crtcCount: 2) == nil)
        // A current CRTC past the card's count is ignored, not trusted.
        #expect(CRTCAssignment.assign([Connector(id: 1, possible: 0b1, current: 7)], crtcCount: 1) == [0])
        #expect(CRTCAssignment.assign([], crtcCount: 0) == [])
    }
}
