import VitrineCore

/// Carries a player's actions out the way the runtime would, at once: an index is answered from `library` (names by
/// category), each decode succeeds, each flip completes. Returns the slides presented, in order.
enum PlayerDriver {
    static func run(
        _ player: inout Player, _ actions: [Player.Action], now: Double, library: [String: [String]] = [:],
        frame: () throws -> Frame
    ) throws -> [SlideID] {
        var pending = actions
        var presented: [SlideID] = []
        while !pending.isEmpty {
            switch pending.removeFirst() {
            case .index(let category) where library[category] != nil:
                let slides = PlayerTests.slides(library[category] ?? [], in: category)
                pending += player.handle(.indexed(category: category, slides: slides, now: now))
            case .decode(let request): pending += player.handle(.decoded(request, try frame(), now: now))
            case .present(_, let id):
                presented.append(id)
                pending += player.handle(.flipDone(now: now))
            default: break
            }
        }
        return presented
    }
}
