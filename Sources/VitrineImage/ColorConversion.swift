import VitrineCore

/// Colour conversions the decoders leave to the caller.
enum ColorConversion {
    /// libjpeg-turbo decodes CMYK and YCCK JPEGs only to CMYK. Adobe applications store the channels inverted
    /// (an Adobe APP14 marker says so), so red is C*K/255 there and (255-C)(255-K)/255 otherwise; this is the naive
    /// conversion browsers and Pillow use when no colour management is applied.
    static func cmykToBGRX(_ pixels: UnsafeMutablePointer<UInt8>, pixelCount: Int, inverted: Bool) {
        for index in 0..<pixelCount {
            let pixel = pixels + index * 4
            var cyan = UInt32(pixel[0])
            var magenta = UInt32(pixel[1])
            var yellow = UInt32(pixel[2])
            var black = UInt32(pixel[3])
            if !inverted {
                cyan = 255 - cyan
                magenta = 255 - magenta
                yellow = 255 - yellow
                black = 255 - black
            }
            pixel[0] = UInt8((yellow * black + 127) / 255)
            pixel[1] = UInt8((magenta * black + 127) / 255)
            pixel[2] = UInt8((cyan * black + 127) / 255)
            pixel[3] = 0
        }
    }

    /// RGBA rows (libspng's and libheif's, straight alpha) to BGRA. Whole pixels are moved as 32-bit words, so
    /// the loop vectorises: this runs on the decoding thread, which a large PNG keeps busy.
    static func rgbaToBGRA(
        _ source: UnsafePointer<UInt8>, into destination: UnsafeMutablePointer<UInt8>, pixelCount: Int
    ) {
        let from = UnsafeRawPointer(source).assumingMemoryBound(to: UInt32.self)
        let to = UnsafeMutableRawPointer(destination).assumingMemoryBound(to: UInt32.self)
        var index = 0
        while index < pixelCount {
            // Little-endian: the word is A<<24 | B<<16 | G<<8 | R; BGRA is A<<24 | R<<16 | G<<8 | B.
            let pixel = from[index]
            to[index] = pixel & 0xFF00_FF00 | (pixel & 0xFF) &<< 16 | (pixel &>> 16) & 0xFF
            index &+= 1
        }
    }

    /// BGRA rows (straight alpha) to BGRX in place, composed over `background`: a transparent screenshot or logo
    /// shows on the slideshow's background, as a viewer shows it on its own.
    static func composeBGRA(_ pixels: UnsafeMutablePointer<UInt8>, pixelCount: Int, over background: RGBColor) {
        let words = UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: UInt32.self)
        let back = background.xrgb
        var index = 0
        while index < pixelCount {
            // Little-endian: the word is A<<24 | R<<16 | G<<8 | B, BGRX with alpha on top.
            let pixel = words[index]
            let alpha = pixel &>> 24
            words[index] = alpha == 255 ? pixel & 0xFF_FFFF : blend(pixel & 0xFF_FFFF, over: back, alpha: alpha)
            index &+= 1
        }
    }

    /// BGRA rows (straight alpha) premultiplied in place, alpha kept in the top byte: the form that resamples
    /// without dark fringes and is later composed over what lies behind the photo.
    static func premultiplyBGRA(_ pixels: UnsafeMutablePointer<UInt8>, pixelCount: Int) {
        let words = UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: UInt32.self)
        var index = 0
        while index < pixelCount {
            let pixel = words[index]
            let alpha = pixel &>> 24
            if alpha != 255 { words[index] = alpha &<< 24 | blend(pixel & 0xFF_FFFF, over: 0, alpha: alpha) }
            index &+= 1
        }
    }

    /// Interleaved RGB rows (libheif's) to BGRX.
    static func rgbToBGRX(
        _ source: UnsafePointer<UInt8>, into destination: UnsafeMutablePointer<UInt8>, pixelCount: Int
    ) {
        let to = UnsafeMutableRawPointer(destination).assumingMemoryBound(to: UInt32.self)
        var index = 0
        while index < pixelCount {
            let from = source + index &* 3
            to[index] = UInt32(from[0]) &<< 16 | UInt32(from[1]) &<< 8 | UInt32(from[2])
            index &+= 1
        }
    }

    /// `color` (XRGB) at `alpha` over `back` (XRGB), each channel rounded.
    @inline(__always)
    static func blend(_ color: UInt32, over back: UInt32, alpha: UInt32) -> UInt32 {
        let rest = 255 &- alpha
        let blue = ((color & 0xFF) &* alpha &+ (back & 0xFF) &* rest &+ 127) / 255
        let green = (((color &>> 8) & 0xFF) &* alpha &+ ((back &>> 8) & 0xFF) &* rest &+ 127) / 255
        let red = (((color &>> 16) & 0xFF) &* alpha &+ ((back &>> 16) & 0xFF) &* rest &+ 127) / 255
        return red &<< 16 | green &<< 8 | blue
    }
}
