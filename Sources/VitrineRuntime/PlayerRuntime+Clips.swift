import VitrineCore
import VitrineDisplay
import VitrineImage
import VitrinePlatform

/// Clips: the player's `.playClip` and `.clip` actions carried out, the stream's pictures paced onto the screen,
/// and the clip's end told back to the player.
extension PlayerRuntime {
    func playClip(_ request: ClipRequest) {
        stopClip()
        guard let path = request.slide.original else { return }
        let settings = ClipStream.Settings(
            options: renderOptions, decoding: configuration.settings.video.decoder,
            maxSeconds: configuration.settings.video.maxSeconds, loop: request.loop)
        let stream = ClipStream(
            path: path, poster: request.poster, settings: settings, budget: budget, wakeup: clipWakeup)
        let id = request.slide.id
        let record = PresentRecord(
            category: id.category, slide: id.name, file: path, decodeMilliseconds: nil,
            why: player.playlist?.reason(of: id)?.rawValue)
        clipPlayback = ClipPlayback(
            id: id, stream: stream, refresh: display.refreshPeriod, paused: request.paused, record: record)
        // The first picture may already be on the glass (a cut with nothing in flight).
        if display.screen.slide?.slide == id.name, display.screen.slide?.category == id.category,
            !display.isBusy
        {
            clipPlayback?.posterShown = true
        }
    }

    func clipCommand(_ command: ClipCommand, now: Double) {
        guard let playback = clipPlayback else { return }
        switch command {
        case .pause: playback.hold(true, now: now)
        case .resume: playback.hold(false, now: now)
        case .stopLooping: playback.stream.stopLooping()
        case .stop:
            stopClip()
            return
        }
        pumpClip(now: now)
    }

    /// Ends the clip in play, if any: its thread is told to stop (never waited for).
    func stopClip() {
        guard let playback = clipPlayback else { return }
        if let decoder = playback.decoder {
            let done = playback.pacer.figures
            figures.recordClip(decoder: decoder, shown: done.presented, dropped: done.dropped, late: done.late)
        }
        clipFigures = playback.pacer.figures
        playback.stream.stop()
        clipPlayback = nil
        clipTimer.disarm()
    }

    /// The stream rang: its pictures join the waiting list; its end or failure is noted.
    func clipStreamRang(now: Double) {
        clipWakeup.drain()
        guard let playback = clipPlayback else { return }
        for output in playback.stream.take() {
            switch output {
            case .started(let decoder, _, let header):
                playback.decoder = decoder
                playback.header = header
                log("playing \(playback.id): \(header.kind) \(header.container), decoded by \(decoder)")
            case .picture(let picture):
                playback.waiting.append(picture)
            case .ended:
                playback.ended = true
            case .failed(let error):
                stopClip()
                send(.clipFailed(playback.id, message: "\(error)", now: now))
                return
            }
        }
        pumpClip(now: now)
    }

    /// A picture of the clip is done on the display.
    func clipPictureDone(_ frame: Frame, visible: Bool, at: Double, now: Double) {
        guard let playback = clipPlayback, let handed = playback.handed.removeValue(forKey: ObjectIdentifier(frame))
        else { return }
        if visible {
            playback.pacer.shown(time: handed.time, glass: at, vblank: display.refreshPeriod != nil)
            playback.lastShown = frame
        }
        playback.stream.recycle(frame)
        pumpClip(now: now)
    }

    /// The first picture (the slide) reached the glass.
    func clipPosterShown(_ record: PresentRecord, now: Double) {
        guard let playback = clipPlayback, record.category == playback.id.category, record.slide == playback.id.name
        else { return }
        playback.posterShown = true
        if display.refreshPeriod != nil { playback.pacer.sawVblank(at: now) }
        pumpClip(now: now)
    }

    /// Puts the next due picture on the screen, or arms the clip's timer for when one will be due, or tells the
    /// player the clip has ended.
    func pumpClip(now: Double) {
        guard let playback = clipPlayback, playback.posterShown, !display.screen.isFading else { return }
        if !playback.started {
            guard let first = playback.waiting.first, !playback.held else {
                if playback.ended, playback.waiting.isEmpty { finishClip(playback) }
                return
            }
            playback.started = true
            playback.pacer.start(now: now, firstTime: first.time)
        }
        guard !display.isBusy else { return }
        switch playback.pacer.decide(waiting: playback.waiting.map(\.time), now: now) {
        case .show(let index, let dropping):
            playback.dropWaiting(dropping)
            let picture = playback.waiting.removeFirst()
            _ = index
            var record = playback.record
            record.clipTime = picture.time
            playback.handed[ObjectIdentifier(picture.frame)] = (picture.frame, picture.time)
            display.show(.frame(picture.frame, record), now: now)
        case .wait(let until):
            clipTimer.arm(at: until)
        case .idle:
            if playback.ended, playback.handed.isEmpty { finishClip(playback) }
        case .paused:
            break
        }
    }

    /// The last picture has been shown: the next slide fades out of a copy of it, and the player moves on.
    private func finishClip(_ playback: ClipPlayback) {
        let done = playback.pacer.figures
        log(
            "clip \(playback.id) ended: \(done.presented) pictures shown, \(done.dropped) dropped, "
                + "\(done.late) late")
        if let last = playback.lastShown, display.fadeSeconds != nil,
            let copy = try? Frame(size: last.size, budget: budget, purpose: "the clip's last picture")
        {
            copy.pixels.update(from: last.pixels, count: last.size.pixelCount)
            display.clipEnded(on: copy)
        }
        stopClip()
        send(.clipEnded(playback.id, now: MonotonicClock.seconds()))
    }
}
