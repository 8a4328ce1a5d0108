import Testing
import VitrineCore

@Suite struct MemoryBudgetTests {
    @Test func chargesAreReturnedWhenDropped() throws {
        let budget = MemoryBudget(limit: 1000)
        do {
            let first = try budget.charge(600, for: "a")
            #expect(budget.used == 600)
            #expect(first.bytes == 600)
            #expect {
                _ = try budget.charge(500, for: "decoding photo.jpg")
            } throws: { error in
                (error as? MemoryBudget.Exceeded)?.description.hasPrefix("decoding photo.jpg needs 0.1 MiB") == true
            }
        }
        #expect(budget.used == 0)
        #expect(budget.peak == 600)
    }

    @Test func aFrameIsChargedBeforeItIsAllocated() throws {
        let budget = MemoryBudget(limit: 1 << 20)
        #expect(throws: MemoryBudget.Exceeded.self) {
            _ = try Frame(size: Size(width: 1920, height: 1080), budget: budget, purpose: "a frame")
        }
        #expect(budget.used == 0)
        let frame = try Frame(size: Size(width: 100, height: 100), budget: budget, purpose: "a frame")
        frame.fill(.black)
        frame.fill(RGBColor(red: 255, green: 0, blue: 0), x: 90, y: 90, width: 50, height: 50)
        #expect(frame.pixel(x: 95, y: 99) == 0xFF_0000)
        #expect(frame.pixel(x: 89, y: 99) == 0)
        #expect(budget.used == 40_000)
    }
}
