package geo

import (
	"math"
	"testing"
)

func TestDistanceParisBerlin(t *testing.T) {
	got := Distance(Point{48.8566, 2.3522}, Point{52.52, 13.405})
	if math.Abs(got-878) > 5 {
		t.Fatalf("distance = %.1f km", got)
	}
}

func TestBBoxContainsEdges(t *testing.T) {
	box := BBox{Point{0, 0}, Point{1, 1}}
	if !box.Contains(Point{1, 1}) {
		t.Fatal("edge not contained")
	}
}
