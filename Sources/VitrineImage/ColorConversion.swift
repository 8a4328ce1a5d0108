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

    /// RGBA rows (libspng's, straight alpha) to BGRX, each pixel composed over `background`: a transparent
    /// screenshot or logo shows on the slideshow's background, as a viewer shows it on its own.
    static func rgbaToBGRX(
        _ source: UnsafePointer<UInt8>, into destination: UnsafeMutablePointer<UInt8>, pixelCount: Int,
        over background: RGBColor
    ) {
        let (backR, backG, backB) = (UInt32(background.red), UInt32(background.green), UInt32(background.blue))
        for index in 0..<pixelCount {
            let from = source + index * 4
            let to = destination + index * 4
            let alpha = UInt32(from[3])
            if alpha == 255 {
                (to[0], to[1], to[2]) = (from[2], from[1], from[0])
            } else {
                let rest = 255 - alpha
                to[0] = UInt8((UInt32(from[2]) * alpha + backB * rest + 127) / 255)
                to[1] = UInt8((UInt32(from[1]) * alpha + backG * rest + 127) / 255)
                to[2] = UInt8((UInt32(from[0]) * alpha + backR * rest + 127) / 255)
            }
            to[3] = 0
        }
    }

    /// BGRA rows (libwebp's, straight alpha) to BGRX in place, composed over `background`.
    static func composeBGRA(_ pixels: UnsafeMutablePointer<UInt8>, pixelCount: Int, over background: RGBColor) {
        let (backR, backG, backB) = (UInt32(background.red), UInt32(background.green), UInt32(background.blue))
        for index in 0..<pixelCount {
            let pixel = pixels + index * 4
            let alpha = UInt32(pixel[3])
            if alpha != 255 {
                let rest = 255 - alpha
                pixel[0] = UInt8((UInt32(pixel[0]) * alpha + backB * rest + 127) / 255)
                pixel[1] = UInt8((UInt32(pixel[1]) * alpha + backG * rest + 127) / 255)
                pixel[2] = UInt8((UInt32(pixel[2]) * alpha + backR * rest + 127) / 255)
            }
            pixel[3] = 0
        }
    }
}
