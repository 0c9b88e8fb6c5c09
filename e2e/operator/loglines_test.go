package operator

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
)

// This file has no build tag, so that its unit tests run with the ordinary `go test`.

// countLinesContaining counts the complete lines of a file, from offset on, that contain every one of substrings.
func countLinesContaining(path string, offset int64, substrings ...string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, err
	}
	n := 0
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if errors.Is(err, io.EOF) {
			// A line without its newline is still being written.
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		if containsAll(line, substrings) {
			n++
		}
	}
}

func containsAll(s string, substrings []string) bool {
	for _, sub := range substrings {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
