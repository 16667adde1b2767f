//go:build race

package registry

// raceEnabled is true when the tests run with the race detector, which
// makes parsing several times slower.
const raceEnabled = true
