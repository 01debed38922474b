package render

import "testing"

func TestLabelComposesAccents(t *testing.T) {
	if got := Label("Cafe\u0301"); got != "Café" {
		t.Fatalf("label = %q", got)
	}
}

func TestLabelShortensLongNames(t *testing.T) {
	got := []rune(Label("Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch"))
	if len(got) != MaxLabelRunes {
		t.Fatalf("length = %d", len(got))
	}
}
