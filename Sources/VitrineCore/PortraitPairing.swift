/// On a landscape panel a portrait photo alone leaves two thirds of the screen to its margins; two in a row share
/// it instead, as one slide.
public enum PortraitPairing {
    /// Pairs each run of portrait photos two by two, in the given order; a portrait photo left over at the end of
    /// a run, and every landscape or square one, stays alone.
    public static func pair(_ slides: [Slide], isPortrait: (Slide) -> Bool) -> [Slide] {
        var result: [Slide] = []
        result.reserveCapacity(slides.count)
        var index = 0
        while index < slides.count {
            let slide = slides[index]
            // A clip plays alone.
            if index + 1 < slides.count, !slide.isClip, !slides[index + 1].isClip, isPortrait(slide),
                isPortrait(slides[index + 1])
            {
                result.append(Slide(pairing: slide, with: slides[index + 1]))
                index += 2
            } else {
                result.append(slide)
                index += 1
            }
        }
        return result
    }

    /// Pairs by the photos' upright sizes: a rendition's is in its name (renditions are stored upright), an
    /// original's comes from `originalSize` (its header); a photo of unknown size stays alone.
    public static func pair(_ slides: [Slide], originalSize: (String) -> Size?) -> [Slide] {
        pair(slides) { slide in
            let size = slide.renditions.last?.size ?? slide.original.flatMap(originalSize)
            return size.map(isPortrait) ?? false
        }
    }

    /// Whether an upright size is portrait (taller than wide).
    public static func isPortrait(_ size: Size) -> Bool { size.height > size.width }
}
