import VitrineCore
import VitrinePlatform

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The stars given on the frame, kept in a small text file (`Favourites.fileText`) so they outlive restarts. Saves
/// are written whole under a temporary name and renamed over the old file, on a thread of their own: the file may be
/// on a slow or stalled card, and the player's thread only hands the stars over.
package final class FavouritesStore {
    package let path: String
    private let worker: Worker<FileError?>
    private let log: EventLog

    /// `favouritesFile`, else `$STATE_DIRECTORY/favourites.txt` under systemd, else none.
    package static func path(settings: Settings) -> String? {
        if let explicit = settings.favouritesFile { return explicit.isEmpty ? nil : explicit }
        return StateDirectory.path.map { "\($0)/favourites.txt" }
    }

    package init(path: String, log: EventLog) throws(RuntimeError) {
        self.path = path
        self.log = log
        worker = try Worker(.newestOnly)
    }

    /// The stars saved, read at start before the loop runs; none when there is no file yet. A file that cannot be
    /// read is said once and left as it is (the first star given overwrites it).
    package func load(rating: Int) -> Favourites {
        var favourites = Favourites(rating: rating)
        do {
            favourites.load(fileText: try FileBytes.readText(path))
        } catch {
            if error.errno != ENOENT {
                log(.warning, "cannot read the stars in \(path) (\(error)); starting with none")
            }
        }
        return favourites
    }

    package func save(_ favourites: Favourites) {
        reportFailure()
        let path = self.path
        let text = favourites.fileText
        worker.submit { _ in
            do throws(FileError) {
                try FileBytes.writeAtomically(Array(text.utf8), to: path, durable: true)
                return nil
            } catch {
                return error
            }
        }
    }

    private func reportFailure() {
        if let failure = worker.take().compactMap({ $0 }).last {
            log(.warning, "cannot save the stars (\(failure)); they last until the player stops")
        }
    }

    /// At exit: what waits is written.
    package func finish() {
        worker.finish()
        reportFailure()
    }
}
