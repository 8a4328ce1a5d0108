/// Which decoder plays clips (`video.decoder`).
public enum VideoDecoding: String, Sendable, Equatable, CaseIterable {
    /// The board's hardware where it has a decoder for the codec (V4L2 memory-to-memory, then VA-API), else
    /// software.
    case auto
    /// libavcodec on the CPU.
    case software
    /// The kernel's V4L2 memory-to-memory decoder only (the Raspberry Pi's H.264 block): a clip it cannot take is
    /// skipped.
    case v4l2m2m
    /// VA-API only (Intel and AMD graphics).
    case vaapi
}
