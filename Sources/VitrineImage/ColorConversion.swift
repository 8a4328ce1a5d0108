/// Colour conversions libjpeg-turbo leaves to the caller.
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
}
