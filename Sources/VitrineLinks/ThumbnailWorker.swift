import VitrineCore
import VitrineImage
import VitrinePlatform

/// Makes the JPEG of the slide on screen, once for everything that shows it elsewhere (the MQTT image topic, the
/// web remote's page), on a `Worker` of its own (averaging a 4K frame down takes longer than a flip may wait), and
/// hands it to the loop through `wakeup`. One slot: a newer slide replaces one not started yet, and a finished
/// thumbnail (or failure) of a slide no longer wanted is dropped, so a fast show costs at most one thumbnail in
/// flight.
package final class ThumbnailWorker {
    private let worker: Worker<Result<[UInt8], ImageError>>
    package var wakeup: Wakeup { worker.wakeup }

    package init() throws(RuntimeError) {
        worker = try Worker(.newestOnly)
    }

    package func submit(_ frame: Frame) {
        // Whatever was asked before is not wanted any more: its job or its finished thumbnail is dropped.
        worker.cancel()
        worker.submit { _ in
            do throws(ImageError) {
                return .success(try SlideThumbnail.jpeg(of: frame))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The thumbnail of the newest slide submitted, when it is done, or why it could not be made.
    package func take() -> Result<[UInt8], ImageError>? { worker.take().last }

    package func stop() { worker.stop() }
}
