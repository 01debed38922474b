package geo

// BBox is an axis-aligned box in degrees.
type BBox struct {
	Min, Max Point
}

// Contains reports whether p lies inside the box, edges included.
func (b BBox) Contains(p Point) bool {
	return p.Lat >= b.Min.Lat && p.Lat <= b.Max.Lat && p.Lon >= b.Min.Lon && p.Lon <= b.Max.Lon
}

// Expand grows the box to include p.
func (b BBox) Expand(p Point) BBox {
	if p.Lat < b.Min.Lat {
		b.Min.Lat = p.Lat
	}
	if p.Lon < b.Min.Lon {
		b.Min.Lon = p.Lon
	}
	if p.Lat > b.Max.Lat {
		b.Max.Lat = p.Lat
	}
	if p.Lon > b.Max.Lon {
		b.Max.Lon = p.Lon
	}
	return b
}
