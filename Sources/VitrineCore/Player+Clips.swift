/// A clip asked to play: its first picture has just been presented as the slide.
public struct ClipRequest: Sendable {
    public var slide: Slide
    /// The first picture, as presented (its margins are every picture's).
    public var poster: Frame
    /// The only slide of its category: it plays again from the start, without a gap, until that changes.
    public var loop: Bool
    /// Something holds the show (a pause, the screen off): the clip waits on its first picture.
    public var paused: Bool

    public init(slide: Slide, poster: Frame, loop: Bool, paused: Bool) {
        self.slide = slide
        self.poster = poster
        self.loop = loop
        self.paused = paused
    }
}

public enum ClipCommand: String, Sendable, Equatable {
    case pause, resume, stop
    /// Play to the end and then move on (the category has more than one slide now).
    case stopLooping
}

/// The clip on screen, as the player sees it.
public struct PlayingClip: Sendable, Equatable {
    public var id: SlideID
    public var playing: Bool
    public var loop: Bool
}

extension Player {
    /// A clip was presented: the slide timer is held while it plays (`playing`) and the runtime is asked to play
    /// it. Any clip before it stops.
    mutating func startClip(_ id: SlideID, poster: Frame) -> [Action] {
        var actions: [Action] = []
        if clip != nil {
            clip = nil
            actions.append(.clip(.stop))
        }
        guard let slide = playlist?.slide(id), slide.isClip else {
            timer.clear(.playing)
            return actions
        }
        _ = timer.pause(.playing, now: now)
        let loop = (playlist?.count ?? 0) == 1
        let held = timer.reasons.contains { $0.holdsClip }
        clip = PlayingClip(id: id, playing: !held, loop: loop)
        return actions + [.playClip(ClipRequest(slide: slide, poster: poster, loop: loop, paused: held))]
    }

    /// The clip reached its end: the show moves on as if the slide's time were up (at once, unless a hold after
    /// input or a pause keeps it, as it would keep a photo).
    mutating func clipEnded(_ id: SlideID, now: Double) -> [Action] {
        guard clip?.id == id else { return [] }
        clip = nil
        return timer.finishEarly(.playing, now: now).map { [.timer($0)] } ?? []
    }

    /// After each event: the clip on screen plays exactly while nothing holds the show; a background or a category
    /// without slides stops it; a second slide ends its looping.
    mutating func followClip(after actions: [Action]) -> [Action] {
        guard var playing = clip else { return [] }
        let shown = actions.contains { if case .showBackground = $0 { true } else { false } }
        if shown || current != playing.id {
            clip = nil
            timer.clear(.playing)
            return [.clip(.stop)]
        }
        var commands: [Action] = []
        let held = timer.reasons.contains { $0.holdsClip }
        if held == playing.playing {
            playing.playing = !held
            commands.append(.clip(held ? .pause : .resume))
        }
        if playing.loop, (playlist?.count ?? 0) > 1 {
            playing.loop = false
            commands.append(.clip(.stopLooping))
        }
        clip = playing
        return commands
    }
}
