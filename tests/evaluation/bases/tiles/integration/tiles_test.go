//go:build integration

package integration

import (
	"io"
	"net/http"
	"testing"
)

func TestLabelEndpoint(t *testing.T) {
	response, err := http.Get("http://localhost:8080/label?name=Caf%C3%A9")
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(response.Body)
	if string(body) != "Café" {
		t.Fatalf("body = %q", body)
	}
}

func TestHealth(t *testing.T) {
	response, err := http.Get("http://localhost:8080/health")
	if err != nil {
		t.Fatal(err)
	}
	if response.StatusCode != http.StatusNoContent {
		t.Fatalf("status = %d", response.StatusCode)
	}
}
