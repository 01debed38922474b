package main

import (
	"flag"
	"log"
	"net/http"

	"example.com/tiles/internal/geo"
	"example.com/tiles/internal/render"
)

func main() {
	listen := flag.String("listen", ":8080", "address to serve on")
	flag.Parse()
	http.HandleFunc("/label", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(render.Label(r.URL.Query().Get("name"))))
	})
	http.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		_ = geo.Distance(geo.Point{}, geo.Point{})
		w.WriteHeader(http.StatusNoContent)
	})
	log.Fatal(http.ListenAndServe(*listen, nil))
}
