import VitrineDisplay
import VitrineLibrary
import VitrineLinks

/// What woke the loop: one token per descriptor it watches, and the sources of the parts that own several.
extension PlayerRuntime {
    enum Token: UInt64 {
        case timer = 1, signals, decodes, library, vblank, control, schedule, hotplug, input, inputHold, banner
        case watchdog, metrics, position, terminal, libraryCheck, rescan, indexes, renditions
        case mqttSocket, mqttAttempt, mqttHousekeeping, mqttRetry, mqttState, slidePicture
        case cecAdapter, cecTimer
        case webServer, webWorker, webTimer
        case overlayMinute, overlayStale, overlayZone
        case controlIdle, controlMore, librarySettle, libraryCategories

        init(_ source: LiveOverlay.Source) {
            switch source {
            case .minute: self = .overlayMinute
            case .stale: self = .overlayStale
            case .zone: self = .overlayZone
            }
        }

        init(_ source: WebRemote.Source) {
            switch source {
            case .server: self = .webServer
            case .worker: self = .webWorker
            case .timer: self = .webTimer
            }
        }

        init(_ source: CECLink.Source) {
            switch source {
            case .adapter: self = .cecAdapter
            case .timer: self = .cecTimer
            }
        }

        init(_ source: MQTTLink.Source) {
            switch source {
            case .socket: self = .mqttSocket
            case .attempt: self = .mqttAttempt
            case .housekeeping: self = .mqttHousekeeping
            case .retry: self = .mqttRetry
            case .state: self = .mqttState
            }
        }

        /// The link's source for its tokens.
        var mqttSource: MQTTLink.Source? { MQTTLink.Source.allCases.first { Token($0) == self } }

        init(_ source: LibraryFollower.Source) {
            switch source {
            case .watcher: self = .library
            case .rescan: self = .rescan
            case .libraryCheck: self = .libraryCheck
            case .indexes: self = .indexes
            case .renditions: self = .renditions
            case .settle: self = .librarySettle
            case .categories: self = .libraryCategories
            }
        }

        /// The follower's source for its tokens.
        var librarySource: LibraryFollower.Source? { LibraryFollower.Source.allCases.first { Token($0) == self } }
    }
}
