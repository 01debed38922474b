#!/usr/bin/env bash
# Shared preparation for every Go job: module download and a warm build cache.
set -euo pipefail
go mod download
go build ./...
