/// A mirrored screen of another size than the show's own: it decodes what the show decodes, at its own size, and
/// shows a slide when the show does, so both screens change together. The show's player stays the one that decides;
/// this only follows its actions, generic over the picture so it is tested without pixels.
///
/// A decode the mirror has ready when the show presents that slide is shown on the same turn (each screen then
/// flips on its own next vblank). One that is late is shown the moment it is ready, unless the show has moved on.
public struct MirrorFollower<Picture> {
    public enum Action {
        /// Decode at this screen's size.
        case decode(DecodeRequest)
        /// Stop a decode asked for (it is no longer wanted).
        case cancel(SlideID)
        /// Put the picture on this screen.
        case show(Picture, SlideID)
        case showBackground
        case warn(String)
    }

    /// The decodes asked for and not back yet.
    private var asked: [SlideID: DecodeRequest] = [:]
    /// Decoded ahead of the show, oldest first; at most `readyLimit` are held.
    private var ready: [(id: SlideID, generation: Int, picture: Picture)] = []
    /// The show's last requests, to decode again a slide it shows from a frame it kept (going back a slide).
    private var recent: [DecodeRequest] = []
    /// The slide the show has on its screen and this screen is still decoding.
    public private(set) var wanted: SlideID?
    /// The slide on this screen; nil for the background or nothing yet.
    public private(set) var onScreen: SlideID?

    /// The show holds a slide ahead and the one on screen; more here is memory for slides it has dropped.
    static var readyLimit: Int { 2 }
    static var recentLimit: Int { 8 }

    public init() {}

    /// Slides decoded and waiting to be shown, oldest first.
    public var readySlides: [SlideID] { ready.map(\.id) }

    /// The show asked for a decode.
    public mutating func showDecodes(_ request: DecodeRequest) -> [Action] {
        let id = request.slide.id
        recent.removeAll { $0.slide.id == id }
        recent.append(request)
        if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
        var actions: [Action] = []
        // Pictures of an older category generation were dropped by the show without a word.
        ready.removeAll { $0.generation < request.generation }
        for (stale, old) in asked where old.generation < request.generation {
            asked[stale] = nil
            actions.append(.cancel(stale))
        }
        if let index = ready.firstIndex(where: { $0.id == id }) {
            if ready[index].generation == request.generation { return actions }
            ready.remove(at: index)
        }
        if let pending = asked[id], pending.generation == request.generation { return actions }
        asked[id] = request
        actions.append(.decode(request))
        return actions
    }

    /// The show dropped a decode it had asked for.
    public mutating func showCancels(_ id: SlideID) -> [Action] {
        ready.removeAll { $0.id == id }
        guard asked.removeValue(forKey: id) != nil else { return [] }
        if wanted == id { wanted = nil }
        return [.cancel(id)]
    }

    /// The show put `id` on its screen.
    public mutating func showPresents(_ id: SlideID) -> [Action] {
        // The show painting its slide again (its own screen's modeset) is nothing new here.
        if onScreen == id, wanted == nil { return [] }
        var actions: [Action] = []
        // A slide this screen was still decoding for the show's last present is passed over.
        if let late = wanted, late != id, asked.removeValue(forKey: late) != nil { actions.append(.cancel(late)) }
        wanted = nil
        if let index = ready.firstIndex(where: { $0.id == id }) {
            let picture = ready.remove(at: index).picture
            onScreen = id
            actions.append(.show(picture, id))
            return actions
        }
        wanted = id
        if asked[id] == nil, var request = recent.last(where: { $0.slide.id == id }) {
            request.purpose = .show
            asked[id] = request
            actions.append(.decode(request))
        }
        return actions
    }

    /// The show put its background up (an empty category).
    public mutating func showShowsBackground() -> [Action] {
        if let late = wanted, asked.removeValue(forKey: late) != nil {
            wanted = nil
            onScreen = nil
            return [.cancel(late), .showBackground]
        }
        wanted = nil
        onScreen = nil
        return [.showBackground]
    }

    /// This screen's decode of `request` is done.
    public mutating func decoded(_ request: DecodeRequest, _ picture: Picture) -> [Action] {
        let id = request.slide.id
        guard let pending = asked[id], pending.generation == request.generation else { return [] }
        asked[id] = nil
        if wanted == id {
            wanted = nil
            onScreen = id
            return [.show(picture, id)]
        }
        ready.removeAll { $0.id == id }
        ready.append((id, request.generation, picture))
        if ready.count > Self.readyLimit { ready.removeFirst(ready.count - Self.readyLimit) }
        return []
    }

    /// This screen's decode failed (memory, most likely, at a larger size): the screen keeps what it shows.
    public mutating func decodeFailed(_ request: DecodeRequest, message: String) -> [Action] {
        let id = request.slide.id
        guard let pending = asked[id], pending.generation == request.generation else { return [] }
        asked[id] = nil
        guard wanted == id else { return [] }
        wanted = nil
        return [.warn("\(message); this screen keeps the slide it shows")]
    }

    /// The screen's size changed (replugged at another mode): what it holds is the wrong size. The slide the show
    /// has on screen is decoded again at the new size.
    public mutating func resized() -> [Action] {
        var actions: [Action] = asked.keys.sorted { $0.description < $1.description }.map { .cancel($0) }
        let current = wanted ?? onScreen
        asked = [:]
        ready = []
        wanted = nil
        onScreen = nil
        guard let current else { return actions }
        actions += showPresents(current)
        return actions
    }
}
