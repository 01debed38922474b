package render

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// MaxLabelRunes is the longest label drawn on a tile.
const MaxLabelRunes = 32

// Label normalises a place name for drawing: NFC, trimmed, shortened with an ellipsis.
func Label(name string) string {
	text := strings.TrimSpace(norm.NFC.String(name))
	runes := []rune(text)
	if len(runes) <= MaxLabelRunes {
		return text
	}
	return string(runes[:MaxLabelRunes-1]) + "…"
}
