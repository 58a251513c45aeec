package main

import (
	"io"
	"os"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// floorOptions are the fastest jsontext settings, the ones the exporter's
// decoder uses too: no duplicate-name or UTF-8 checks.
func floorOptions() []jsontext.Options {
	return []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
}

// TokenizeFloor is the floor the exporter is compared with: the time to
// read path with a streaming jsontext.Decoder, ReadToken until EOF, and
// nothing else. The file is expected in the page cache (it was just
// rendered or read), as it is for the simulator serving it.
func TokenizeFloor(path string) (time.Duration, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	start := time.Now()
	dec := jsontext.NewDecoder(f, floorOptions()...)
	var tokens int64
	for {
		if _, err := dec.ReadToken(); err != nil {
			if err == io.EOF {
				return time.Since(start), tokens, nil
			}
			return 0, tokens, err
		}
		tokens++
	}
}
