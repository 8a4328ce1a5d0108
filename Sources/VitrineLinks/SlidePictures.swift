import VitrineCore
import VitrineImage
import VitrinePlatform

/// The JPEG of the slide on screen, made once for everything that shows it elsewhere (the MQTT image topic, the
/// web remote's page), on a `Worker` of its own (averaging a 4K frame down takes longer than a flip may wait) made
/// when first wanted. One slot: a newer slide replaces one not started yet, and a finished picture (or failure) of
/// a slide no longer wanted is dropped, so a fast show costs at most one picture in flight. The frame it is made
/// from is the screen's (`ScreenContents.slideFrame`); this keeps only the result.
package final class SlidePictures {
    private var worker: Worker<Result<[UInt8], ImageError>>?
    private var source: EventLoop.Source?
    private let loop: EventLoop
    private let log: EventLog
    private let made: (Result<[UInt8], ImageError>, Double) -> Void
    /// The newest picture made (a few KiB): the web remote serves it, and a link started later (a reload) gets it
    /// at once. It stays when the next one fails, and goes when a slide comes with nobody to make its picture for.
    package private(set) var latest: [UInt8]?
    /// A picture is being made.
    package private(set) var coming = false

    /// `made` hears each result on the loop thread, with the time.
    package init(loop: EventLoop, log: EventLog, made: @escaping (Result<[UInt8], ImageError>, Double) -> Void) {
        self.loop = loop
        self.log = log
        self.made = made
    }

    /// Has the picture of `frame` made; false when it cannot be (no frame, or no worker).
    @discardableResult
    package func make(from frame: Frame?) -> Bool {
        guard let frame else { return false }
        if worker == nil {
            do {
                // The thread starts with the first job, and a worker dropped here stops with it.
                let worker = try Worker<Result<[UInt8], ImageError>>(.newestOnly)
                source = try loop.add(worker.wakeup.descriptor) { [unowned self] _ in deliver() }
                self.worker = worker
            } catch {
                log(.warning, "no pictures of the slide for MQTT or the web remote: \(error)")
                return false
            }
        }
        coming = true
        // Whatever was asked before is not wanted any more: its job or its finished picture is dropped.
        worker?.cancel()
        worker?.submit { _ in
            do throws(ImageError) {
                return .success(try SlideThumbnail.jpeg(of: frame))
            } catch {
                return .failure(error)
            }
        }
        return true
    }

    /// A slide came with nobody to make its picture for: the last one is not of the slide on screen.
    package func forget() { latest = nil }

    private func deliver() {
        guard let result = worker?.take().last else { return }
        coming = false
        if case .success(let jpeg) = result { latest = jpeg }
        made(result, MonotonicClock.seconds())
    }

    package func stop() {
        loop.remove(source)
        source = nil
        worker?.stop()
    }
}
