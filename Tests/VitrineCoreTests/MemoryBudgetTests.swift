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

    /// Two screens' shares: each its minimum and the rest by size; a charge counts against the share and the board,
    /// and one screen filling its share leaves the other's untouched.
    @Test func eachScreenHasAShareByItsSize() throws {
        let board = MemoryBudget(limit: 1000)
        let shares = try #require(board.shares(minimum: [100, 300], pixels: [1, 3]))
        #expect(shares.map(\.limit) == [250, 750])
        do {
            let large = try shares[1].charge(700, for: "a 4K decode")
            #expect(board.used == 700)
            #expect(throws: MemoryBudget.Exceeded.self) { _ = try shares[1].charge(100, for: "another 4K decode") }
            let small = try shares[0].charge(250, for: "the small screen's next slide")
            #expect(board.used == 950)
            _ = consume large
            _ = consume small
        }
        #expect(board.used == 0 && shares[0].used == 0 && shares[1].used == 0)
        #expect(board.shares(minimum: [600, 600], pixels: [1, 1]) == nil)
        // A share can be refused by the board when it is charged beside the shares (a link's own charge).
        let direct = try board.charge(900, for: "a thumbnail")
        do {
            _ = try shares[0].charge(200, for: "a slide")
            Issue.record("the board had only 100 bytes free")
        } catch {
            #expect(error.limit == 1000 && error.available == 100)
        }
        _ = consume direct
    }

    /// Two screens' decode workers and a link charging one board at once: no budget is ever overdrawn, and every
    /// byte comes back. Under `make test-tsan` this is also where a lock TSan cannot see would show.
    @Test func chargesFromSeveralThreadsAtOnceNeverOverdraw() async throws {
        let board = MemoryBudget(limit: 1000)
        let shares = try #require(board.shares(minimum: [0, 0], pixels: [1, 1]))
        let chargers = [(shares[0], 300), (shares[1], 300), (board, 450)]
        await withTaskGroup(of: Void.self) { group in
            for (budget, bytes) in chargers {
                group.addTask {
                    for round in 0..<20_000 {
                        if let charge = try? budget.charge(bytes + round % 7, for: "a slide") { _ = consume charge }
                    }
                }
            }
        }
        #expect(board.used == 0 && shares[0].used == 0 && shares[1].used == 0)
        #expect(board.peak <= board.limit)
        #expect(shares.allSatisfy { $0.peak <= $0.limit && $0.peak >= 300 })
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
