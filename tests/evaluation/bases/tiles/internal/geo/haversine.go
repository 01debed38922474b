package geo

import "math"

// EarthRadiusKm is the mean radius used for every distance.
const EarthRadiusKm = 6371.0

// Point is a WGS84 coordinate in degrees.
type Point struct {
	Lat, Lon float64
}

// Distance returns the great-circle distance between a and b in kilometres.
func Distance(a, b Point) float64 {
	lat1, lat2 := radians(a.Lat), radians(b.Lat)
	dLat := lat2 - lat1
	dLon := radians(b.Lon - a.Lon)
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1)*math.Cos(lat2)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * EarthRadiusKm * math.Asin(math.Sqrt(h))
}

func radians(degrees float64) float64 {
	return degrees * math.Pi / 180
}
