package bench

import (
	"io"
	"os"
	"syscall"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// floorOptions are the fastest jsontext settings, the ones the exporter's
// decoder uses too: no duplicate-name or UTF-8 checks.
func floorOptions() []jsontext.Options {
	return []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
}

// tokenizeFloor is the floor the exporter is compared with: the time to
// read path with a streaming jsontext.Decoder, ReadToken until EOF, and
// nothing else. The file is expected in the page cache (it was just
// rendered or read), as it is for the simulator serving it. It also
// returns the CPU time the process spent meanwhile: the tokenizer's, as
// nothing else in the bench runs during the floor.
func tokenizeFloor(path string) (wall, cpu time.Duration, tokens int64, err error) {
	before := processCPU()
	wall, tokens, err = tokenize(path)
	return wall, processCPU() - before, tokens, err
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func tokenize(path string) (time.Duration, int64, error) {
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
