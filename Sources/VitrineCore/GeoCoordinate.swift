/// Where a photo was taken, in degrees as GPS writes them (WGS-84): north and east positive.
public struct GeoCoordinate: Sendable, Equatable, CustomStringConvertible {
    public let latitude: Double
    public let longitude: Double

    /// nil unless both are finite and on the globe: a file can hold any numbers.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Cameras without a fix write zeros rather than leaving the tags out; a photo from the Gulf of Guinea's
    /// Null Island is far less likely than that.
    public var isNullIsland: Bool { latitude == 0 && longitude == 0 }

    public var description: String { "\(latitude), \(longitude)" }
}

/// Trigonometry for the place index. The core has no C library, and the standard library no `sin` or `asin`: these
/// are polynomials on a reduced argument, within a few units in the last place of glibc's (a unit test holds them
/// to it), which at the Earth's size is far below a millimetre.
enum SphereMath {
    /// The mean Earth radius (IUGG), which GeoNames' and most tools' great-circle distances use.
    static let earthRadiusKilometres = 6371.0088

    /// Sine and cosine of an angle in degrees. The angle is brought within 45° of a multiple of 90° first (exactly:
    /// the remainder of a division by 360 or 90 is exact in binary floating point), where Taylor series to the
    /// 15th and 16th power are exact to double precision.
    static func sinCos(degrees: Double) -> (sin: Double, cos: Double) {
        let turn = degrees.truncatingRemainder(dividingBy: 360)
        let quadrant = (turn / 90).rounded()
        let x = (turn - quadrant * 90) * (Double.pi / 180)
        let x2 = x * x
        // Horner's rule, from the smallest term up.
        var sine = -1.0 / 1_307_674_368_000
        sine = sine * x2 + 1.0 / 6_227_020_800
        sine = sine * x2 - 1.0 / 39_916_800
        sine = sine * x2 + 1.0 / 362_880
        sine = sine * x2 - 1.0 / 5040
        sine = sine * x2 + 1.0 / 120
        sine = sine * x2 - 1.0 / 6
        sine = (sine * x2 + 1) * x
        var cosine = 1.0 / 20_922_789_888_000
        cosine = cosine * x2 - 1.0 / 87_178_291_200
        cosine = cosine * x2 + 1.0 / 479_001_600
        cosine = cosine * x2 - 1.0 / 3_628_800
        cosine = cosine * x2 + 1.0 / 40320
        cosine = cosine * x2 - 1.0 / 720
        cosine = cosine * x2 + 1.0 / 24
        cosine = cosine * x2 - 0.5
        cosine = cosine * x2 + 1
        switch Int(quadrant) & 3 {
        case 0: return (sine, cosine)
        case 1: return (cosine, -sine)
        case 2: return (-sine, -cosine)
        default: return (-cosine, sine)
        }
    }

    /// asin in radians for -1...1 (clamped): halved with sin(θ/2) = x / √(2(1 + √(1 - x²))) until small, then its
    /// series, whose terms fall by at least 64 each below 0.125.
    static func asin(_ value: Double) -> Double {
        var x = min(1, max(-1, value))
        var factor = 1.0
        while abs(x) > 0.125 {
            x /= (2 * (1 + (1 - x * x).squareRoot())).squareRoot()
            factor *= 2
        }
        let x2 = x * x
        var term = x
        var sum = x
        for n in 1...12 {
            let k = Double(n)
            term *= x2 * (2 * k - 1) * (2 * k - 1) / ((2 * k) * (2 * k + 1))
            sum += term
        }
        return sum * factor
    }

    /// The point on the unit sphere: x towards 0° E on the equator, y towards 90° E, z towards the North Pole.
    /// Distances between such points need no case for the antimeridian or the poles.
    static func unitVector(latitude: Double, longitude: Double) -> (x: Double, y: Double, z: Double) {
        let (sinLatitude, cosLatitude) = sinCos(degrees: latitude)
        let (sinLongitude, cosLongitude) = sinCos(degrees: longitude)
        return (cosLatitude * cosLongitude, cosLatitude * sinLongitude, sinLatitude)
    }

    /// The great-circle distance whose straight chord through the unit sphere has this square.
    static func kilometres(chordSquared: Double) -> Double {
        2 * earthRadiusKilometres * asin(chordSquared.squareRoot() / 2)
    }

    /// The square of the chord of a great-circle distance, to compare with the squares a search computes.
    static func chordSquared(kilometres: Double) -> Double {
        let halfAngle = min(kilometres, Double.pi * earthRadiusKilometres) / (2 * earthRadiusKilometres)
        let chord = 2 * sinCos(degrees: halfAngle * 180 / Double.pi).sin
        return chord * chord
    }
}
