import VitrineCore
import VitrineDisplay
import VitrineImage
import VitrinePlatform

/// Clips: the player's `.playClip` and `.clip` actions carried out, the stream's pictures paced onto the screen,
/// and the clip's end told back to the player.
extension Show {
    func playClip(_ request: ClipRequest) {
        stopClip()
        // The file the first picture came from: a rendition made for boards that cannot play the original
        // (`NAME@WxH.mp4`) where one covers the screen, or a smaller one where the original was judged too slow.
        let picker = RenditionPicker(canvas: renderOptions.canvas, fit: renderOptions.fit)
        let shown = display.screen.slide.flatMap {
            $0.category == request.slide.id.category && $0.slide == request.slide.id.name ? $0.file : nil
        }
        guard let path = shown.flatMap({ Library.isClipName($0) ? $0 : nil }) ?? picker.pickClip(request.slide) else {
            return
        }
        let video = settings.video
        let stream = ClipStream(
            path: path, poster: request.poster,
            settings: ClipStream.Settings(
                options: renderOptions, decoding: video.decoder, maxSeconds: video.maxSeconds, loop: request.loop,
                sound: video.audio ? video.audioDevice : nil, planar: display.takesPlanarClips),
            budget: budget, wakeup: clipWakeup)
        let id = request.slide.id
        let record = PresentRecord(
            category: id.category, slide: id.name, file: path, decodeMilliseconds: nil,
            why: player.playlist?.reason(of: id)?.rawValue)
        clipPlayback = ClipPlayback(
            id: id, stream: stream, refresh: display.refreshPeriod, paused: request.paused, record: record,
            original: request.slide.original)
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
        case .pause:
            playback.hold(true, now: now)
            if house.configuration.stats { log("stats: clip \(playback.id) held at \(JSONText.number(now))") }
        case .resume:
            playback.hold(false, now: now)
            logClock(playback)
        case .stopLooping: playback.stream.stopLooping()
        case .stop:
            stopClip()
            return
        }
        pumpClip(now: now)
    }

    /// A decode goes to the worker, unless it is for a slide ahead while a fade runs or a clip starts: it waits
    /// with the display's deferred prefetches.
    func submitDecode(_ request: DecodeRequest) {
        let clipStarting = clipPlayback?.isStarting(now: MonotonicClock.seconds()) ?? false
        if !display.deferPrefetch(request, clipStarting: clipStarting) { decodeNow(request) }
    }

    /// A decode to the worker now, and to the mirrored screens' workers with it.
    func decodeNow(_ request: DecodeRequest) {
        worker.submit(request)
        mirrors?.showDecodes(request)
    }

    /// Ends the clip in play, if any: its thread is told to stop (never waited for). The decodes it held back go.
    func stopClip() {
        guard let playback = clipPlayback else { return }
        for request in display.releaseDeferred() { decodeNow(request) }
        if let decoder = playback.decoder {
            let done = playback.figures
            house.figures.recordClip(decoder: decoder, shown: done.presented, dropped: done.dropped, late: done.late)
        }
        clipFigures = playback.figures
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
            case .started(let decoder, _, let header, let planar):
                playback.decoder = decoder
                playback.header = header
                // Which file plays, when it is a rendition (`NAME@WxH.mp4`) rather than the original.
                let file = playback.record.file.flatMap { $0.split(separator: "/").last.map(String.init) }
                let from = playback.record.file == playback.original ? "" : " from \(file ?? "?")"
                let onto = planar ? ", shown as NV12 on the primary plane" : ""
                log(
                    "playing \(playback.id)\(from): \(header.kind) \(header.container), decoded by \(decoder)\(onto)")
            case .picture(let picture):
                playback.waiting.append(picture)
            case .soundPlays(let what):
                playback.sound = what
                log("\(playback.id): sound \(what)")
            case .soundFailed(let why):
                log(.warning, "\(playback.id) plays without sound: \(why)")
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
        guard visible else {
            // Taken while the screen was dark (the VT away, a flip replaced): the display may still paint it for
            // the screen's return, so the decoder must not write into it until a later picture has been shown.
            playback.parked.append(frame)
            if playback.parked.count >= ClipPlayback.preroll { playback.stream.recycle(playback.parked.removeFirst()) }
            pumpClip(now: now)
            return
        }
        let lateBefore = playback.pacer.figures.late
        playback.pacer.shown(time: handed.time, glass: at, vblank: display.refreshPeriod != nil)
        playback.lastShown = frame
        if house.configuration.stats, playback.pacer.figures.late > lateBefore,
            let due = playback.pacer.due(handed.time)
        {
            log(
                "stats: clip \(playback.id) picture at \(JSONText.number(handed.time)) s late by "
                    + "\(JSONText.number(((at - due) * 10000).rounded() / 10)) ms (due \(JSONText.number(due)), "
                    + "handed to the display \(JSONText.number(handed.at)), on the glass \(JSONText.number(at)))")
        }
        for parked in playback.parked { playback.stream.recycle(parked) }
        playback.parked = []
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
        if let playback = clipPlayback, !playback.isStarting(now: now) {
            for request in display.releaseDeferred() { decodeNow(request) }
        }
        guard let playback = clipPlayback, playback.posterShown, !display.screen.isFading else { return }
        if !playback.started {
            // A few pictures ahead before the first is shown: a decoder's first pictures come slower than the rest
            // (the first is a key picture, and a threaded decoder fills its threads first).
            guard let first = playback.waiting.first, !playback.held,
                playback.waiting.count >= ClipPlayback.preroll || playback.ended
            else {
                if playback.ended, playback.waiting.isEmpty { finishClip(playback) }
                return
            }
            playback.start(now: now, firstTime: first.time)
            logClock(playback)
        }
        guard !display.isBusy else { return }
        switch playback.pacer.decide(waiting: playback.waiting.map(\.time), now: now) {
        case .show(_, let dropping):
            playback.dropWaiting(dropping)
            let picture = playback.waiting.removeFirst()
            var record = playback.record
            record.clipTime = picture.time
            playback.handed[ObjectIdentifier(picture.frame)] = (picture.frame, picture.time, now)
            display.show(.frame(picture.frame, record), now: now)
            warnIfBehind(playback, now: now)
        case .wait(let until):
            clipTimer.arm(at: until)
        case .idle:
            if playback.ended, playback.handed.isEmpty { finishClip(playback) }
        case .paused:
            break
        }
    }

    /// Where the clip's clock stands (`--stats`): clip time 0's vblank on the monotonic clock, from which every
    /// picture and the sound are due, set at the start and again at each resume.
    private func logClock(_ playback: ClipPlayback) {
        guard house.configuration.stats, playback.started, let anchor = playback.pacer.anchor else { return }
        log("stats: clip \(playback.id) clock: clip time 0 at \(JSONText.number(anchor))")
    }

    /// Says once when the board cannot decode the clip at its rate: a fifth of its pictures passed over after two
    /// seconds of play. It plays on with pictures missing rather than in slow motion.
    private func warnIfBehind(_ playback: ClipPlayback, now: Double) {
        let figures = playback.figures
        let seen = figures.presented + figures.dropped
        guard !playback.saidSlow, playback.pacer.position(now: now) >= 2, seen > 0, figures.dropped * 5 > seen
        else { return }
        playback.saidSlow = true
        let kind = playback.header.map { "\($0.kind) " } ?? ""
        log(
            .warning,
            "\(playback.record.file ?? playback.id.description): this board does not decode this \(kind)clip at its rate "
                + "with \(playback.decoder ?? "its decoder") (\(figures.dropped) of \(seen) pictures passed over); it "
                + "plays with pictures missing. A smaller copy plays whole (\"Preparing clips\" in the README)")
    }

    /// The last picture has been shown: the next slide fades out of a copy of it, and the player moves on.
    private func finishClip(_ playback: ClipPlayback) {
        let done = playback.figures
        log(
            "clip \(playback.id) ended: \(done.presented) pictures shown, \(done.dropped) dropped, "
                + "\(done.late) late")
        if let last = playback.lastShown, display.fadeSeconds != nil,
            let copy = PlanarFrames.xrgbCopy(of: last, budget: budget, purpose: "the clip's last picture")
        {
            display.clipEnded(on: copy)
        }
        stopClip()
        send(.clipEnded(playback.id, now: MonotonicClock.seconds()))
    }
}
